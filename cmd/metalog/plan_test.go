package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func TestPrintPlanIsCQLWithComments(t *testing.T) {
	var b bytes.Buffer
	printPlan(&b, &pb.PlanResponse{Epoch: 7, Statements: []string{"DROP TABLE shop.old", "ALTER TABLE shop.t ADD v text"},
		Warnings: []string{"DROP TABLE shop.old drops its data"}, Destructive: true, Digest: "ab12"})
	want := "-- plan at epoch 7: 2 statement(s), DESTRUCTIVE; the schema it makes has digest ab12\n" +
		"-- warning: DROP TABLE shop.old drops its data\n" +
		"DROP TABLE shop.old;\nALTER TABLE shop.t ADD v text;\n"
	if b.String() != want {
		t.Errorf("printPlan:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printPlan(&b, &pb.PlanResponse{Epoch: 3})
	if b.String() != "-- the schema at epoch 3 already matches: nothing to do\n" {
		t.Errorf("empty plan: %q", b.String())
	}
}

func TestConfirmAppliesOnlyOnYes(t *testing.T) {
	for _, tc := range []struct {
		input, err string
	}{
		{"y\n", ""},
		{"YES\n", ""},
		{"n\n", "not applied"},
		{"\n", "not applied"},
		{"", "not applied: no answer on standard input (pass --yes to apply without asking)"},
	} {
		cmd := &cobra.Command{}
		var stderr bytes.Buffer
		cmd.SetIn(strings.NewReader(tc.input))
		cmd.SetErr(&stderr)
		err := confirm(cmd, "apply? ")
		if got := errText(err); got != tc.err || stderr.String() != "apply? " {
			t.Errorf("answer %q: %q (asked %q), want %q", tc.input, got, stderr.String(), tc.err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestDesiredFilesReadsFilesAndDirectories: -f takes files, directories
// (their .cql files in name order, not subdirectories nor other files) and
// standard input, in the order given; a directory without .cql files and
// standard input given twice are errors.
func TestDesiredFilesReadsFilesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	first := write("first.cql", "1")
	write("schema/b.cql", "b")
	write("schema/a.cql", "a")
	write("schema/README.md", "no")
	write("schema/sub/c.cql", "no")
	write("empty/notes.txt", "no")
	files, err := desiredFiles([]string{first, filepath.Join(dir, "schema"), "-"}, strings.NewReader("in"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, strings.TrimPrefix(f.Name, dir+"/")+"="+f.Text)
	}
	if want := []string{"first.cql=1", "schema/a.cql=a", "schema/b.cql=b", "standard input=in"}; !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	for _, tc := range []struct {
		paths []string
		err   string
	}{
		{nil, "no desired schema: give -f desired.cql"},
		{[]string{filepath.Join(dir, "empty")}, "the directory has no .cql file"},
		{[]string{"-", "-"}, "standard input is given twice"},
		{[]string{filepath.Join(dir, "missing.cql")}, "no such file"},
	} {
		if _, err := desiredFiles(tc.paths, strings.NewReader("")); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("desiredFiles(%q): %v, want %q", tc.paths, err, tc.err)
		}
	}
}

// TestPlanFileRoundTrip: what plan -o writes, apply reads back as the same
// plan; a file of another format or version, or statements without the
// digests to check them, are refused before anything is sent.
func TestPlanFileRoundTrip(t *testing.T) {
	req := &pb.PlanRequest{DesiredFiles: []*pb.DesiredFile{{Name: "a.cql"}, {Name: "b.cql"}}, Prune: true}
	resp := &pb.PlanResponse{Epoch: 7, Statements: []string{"DROP TABLE shop.t"}, Warnings: []string{"w"}, Notes: []string{"n"},
		Destructive: true, Digest: "ab", BaseDigest: "cd"}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := newPlanFile(req, resp).write(path); err != nil {
		t.Fatal(err)
	}
	f, err := readPlanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.response(); !proto.Equal(got, resp) || !slices.Equal(f.Options.Files, []string{"a.cql", "b.cql"}) || !f.Options.Prune || f.Options.DropColumns {
		t.Errorf("read back %v %+v, want %v", got, f.Options, resp)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"format": "metalog-plan"`, `"version": 1`, `"epoch": 7`, `"keyspaces": []`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the plan file lacks %s:\n%s", want, b)
		}
	}
	for text, want := range map[string]string{
		`{"format": "other", "version": 1}`:                                                    `its format is "other"`,
		`{"format": "metalog-plan", "version": 2}`:                                             "version 2 of the plan format",
		`{"format": "metalog-plan", "version": 1, "epoch": 3, "statements": ["DROP TABLE t"]}`: "no digest",
		`not json`: "not a plan file of this metalog",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readPlanFile(path); !errors.Is(err, errNotPlanFile) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
}

// TestPrintPlanNotes: notes follow the warnings, and a plan with nothing
// to do but notes does not claim the schema matches.
func TestPrintPlanNotes(t *testing.T) {
	var b bytes.Buffer
	printPlan(&b, &pb.PlanResponse{Epoch: 3, Notes: []string{"table shop.t is not in the desired schema: kept (--prune drops it)"}})
	want := "-- the schema at epoch 3 needs no change: nothing to do\n-- note: table shop.t is not in the desired schema: kept (--prune drops it)\n"
	if b.String() != want {
		t.Errorf("printPlan: %q, want %q", b.String(), want)
	}
}

// TestExitCodes: a plan with changes pending under --detailed-exitcode
// exits 2, any other failure 1.
func TestExitCodes(t *testing.T) {
	if exitCode(errChangesPending) != 2 || exitCode(errors.New("x")) != 1 {
		t.Errorf("exit codes: changes pending %d, failure %d", exitCode(errChangesPending), exitCode(errors.New("x")))
	}
}

// TestKeptRuleSaidAlike: plan --help, apply --help, the README and
// docs/planner.md say the same rule of what a plan keeps (the documents
// may set the flags as code).
func TestKeptRuleSaidAlike(t *testing.T) {
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	rule := oneLine(keptHelp)
	for _, cmd := range []*cobra.Command{newPlanCmd(), newApplyCmd()} {
		if !strings.Contains(oneLine(cmd.Long), rule) {
			t.Errorf("%s --help lacks the rule %q", cmd.Name(), rule)
		}
	}
	for _, path := range []string{"../../README.md", "../../docs/planner.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(oneLine(strings.ReplaceAll(string(b), "`", "")), rule) {
			t.Errorf("%s lacks the rule %q", path, rule)
		}
	}
}
