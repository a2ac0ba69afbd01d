package cql

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenCase is one case of a golden file:
//
//	==== name [default=keyspace]
//	CQL input
//	----
//	expected output
type goldenCase struct {
	header string
	input  string
	output string
}

func readGolden(t *testing.T, path string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, block := range strings.Split("\n"+string(data), "\n==== ")[1:] {
		header, body, _ := strings.Cut(block, "\n")
		input, output, ok := strings.Cut(body, "\n----\n")
		if !ok {
			t.Fatalf("%s: case %q has no ---- separator", path, header)
		}
		cases = append(cases, goldenCase{header: header, input: input, output: strings.TrimRight(output, "\n")})
	}
	return cases
}

func writeGolden(t *testing.T, path string, cases []goldenCase) {
	t.Helper()
	var b strings.Builder
	for i, c := range cases {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "==== %s\n%s\n----\n%s\n", c.header, c.input, c.output)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runGolden parses input, applies every statement in order to an empty
// schema (statement i gets epoch i+1) and reports each result and the final
// DESCRIBE output.
func runGolden(header, input string) string {
	env := schema.Env{}
	for _, f := range strings.Fields(header)[1:] {
		if v, ok := strings.CutPrefix(f, "default="); ok {
			env.DefaultKeyspace = v
		}
	}
	parsed, err := Parse(input)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	var s schema.Schema
	for i, p := range parsed {
		env.Epoch = uint64(i + 1)
		ns, diff, res, err := schema.Apply(s, p.Statement, env)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "%d:%d %s %s: error: %v\n", p.Line, p.Column, p.Statement.Kind(), p.Statement.Object(), err)
		case !res.Applied:
			fmt.Fprintf(&b, "%d:%d %s %s: not applied\n", p.Line, p.Column, res.Kind, p.Statement.Object())
		default:
			var ops []string
			for _, c := range diff.Changes {
				switch c.Op {
				case schema.OpPutType, schema.OpDropType, schema.OpPutFunction, schema.OpDropFunction:
					ops = append(ops, c.Op.String()+" "+c.Keyspace+"."+c.Name)
				case schema.OpPutIndex, schema.OpDropIndex:
					ops = append(ops, c.Op.String()+" "+c.Keyspace+"."+c.Name+" on "+c.Table)
				default:
					ops = append(ops, c.Op.String()+" "+strings.TrimSuffix(c.Keyspace+"."+c.Table, "."))
				}
			}
			fmt.Fprintf(&b, "%d:%d %s %s: applied [%s]\n", p.Line, p.Column, res.Kind, p.Statement.Object(), strings.Join(ops, ", "))
		}
		s = ns
	}
	if d := schema.ComputeDigest(s); d != s.Digest() {
		fmt.Fprintf(&b, "digest mismatch: incremental %x, computed %x\n", s.Digest(), d)
	}
	b.WriteString("--\n")
	b.WriteString(describe.Schema(s))
	return strings.TrimRight(b.String(), "\n")
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files in testdata")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cases := readGolden(t, path)
			for i := range cases {
				c := &cases[i]
				got := runGolden(c.header, c.input)
				if *update {
					c.output = got
					continue
				}
				if got != c.output {
					t.Errorf("case %q:\n--- got\n%s\n--- want\n%s", c.header, got, c.output)
				}
			}
			if *update {
				writeGolden(t, path, cases)
			}
		})
	}
}
