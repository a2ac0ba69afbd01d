package schema_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema/describe"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// describeTableGolden holds cases of DESCRIBE TABLE: a header naming the
// table ("==== case name: ks.table"), the CQL that builds the schema, then
// after "----" what describe.TableElements prints for the table.
const describeTableGolden = "testdata/describe_table.txt"

// TestDescribeTableGolden checks that DESCRIBE TABLE prints the table with
// its indexes, triggers and views, in Cassandra's order, and that DESCRIBE
// KEYSPACE, which prints every table that way, still prints each object
// exactly once.
func TestDescribeTableGolden(t *testing.T) {
	data, err := os.ReadFile(describeTableGolden)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i, block := range strings.Split("\n"+string(data), "\n==== ")[1:] {
		header, body, _ := strings.Cut(block, "\n")
		input, want, ok := strings.Cut(body, "\n----\n")
		if !ok {
			t.Fatalf("case %q has no ---- separator", header)
		}
		_, name, _ := strings.Cut(header, ": ")
		ks, table, _ := strings.Cut(name, ".")
		s := schemakit.Build(t, input)
		k, ok := s.Keyspace(ks)
		if !ok {
			t.Fatalf("case %q: no keyspace %s", header, ks)
		}
		tb, ok := k.Table(table)
		if !ok {
			t.Fatalf("case %q: no table %s", header, name)
		}
		got := describe.TableElements(k, tb)
		if !*update && got != strings.TrimRight(want, "\n")+"\n" {
			t.Errorf("case %q:\n--- got\n%s--- want\n%s", header, got, want)
		}
		if i > 0 {
			out.WriteString("\n")
		}
		fmt.Fprintf(&out, "==== %s\n%s\n----\n%s", header, input, got)
		checkKeyspaceOnce(t, header, describe.Keyspace(k))
	}
	if *update {
		if err := os.WriteFile(describeTableGolden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkKeyspaceOnce fails when a CREATE statement appears twice in text.
func checkKeyspaceOnce(t *testing.T, header, text string) {
	t.Helper()
	seen := map[string]bool{}
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, "CREATE ") {
			continue
		}
		head, _, _ := strings.Cut(line, " (")
		head, _, _ = strings.Cut(head, " AS")
		if seen[head] {
			t.Errorf("case %q: DESCRIBE KEYSPACE prints %q twice:\n%s", header, head, text)
		}
		seen[head] = true
	}
}
