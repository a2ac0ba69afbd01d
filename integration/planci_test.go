package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// writeFiles writes each name=text of files under dir (making the
// directories they need) and returns dir.
func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// mustCLI runs a client subcommand against s and fails the test unless it
// exits with code want; it returns standard output.
func (s *server) mustCLI(want int, args ...string) string {
	s.t.Helper()
	out, stderr, rc := s.cli(args...)
	if rc != want {
		s.t.Fatalf("metalog %s: exit code %d, want %d\n%s%s", strings.Join(args, " "), rc, want, out, stderr)
	}
	return out
}

// schemaAt returns the member's schema as CQL and its epoch.
func (s *server) schemaAt() (string, uint64) {
	s.t.Helper()
	r, err := s.client().GetSchema(context.Background(), &pb.GetSchemaRequest{Format: "cql"})
	if err != nil {
		s.t.Fatal(err)
	}
	return r.Cql, r.Epoch
}

const (
	ciKeyspace = "CREATE KEYSPACE ci WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n"
	ciTables   = "CREATE TABLE ci.a (id int PRIMARY KEY, v text);\nCREATE TABLE ci.b (id int PRIMARY KEY, w text);\n"
)

// TestPlanSeveralFilesDirectoryAndExitCodes: plan takes several -f and a
// directory (its .cql files in name order) as one desired schema; a table
// defined in two files is an error naming both; --detailed-exitcode exits
// 2 with changes pending, 0 with none, 1 on an error. On main's code -f
// twice planned the last file only, a directory failed, and the flag did
// not exist.
func TestPlanSeveralFilesDirectoryAndExitCodes(t *testing.T) {
	s := newServer(t)
	s.start()
	dir := writeFiles(t, t.TempDir(), map[string]string{
		"schema/1-keyspace.cql": ciKeyspace,
		"schema/2-tables.cql":   ciTables,
		"schema/notes.txt":      "not CQL, not read",
		"dup.cql":               "CREATE TABLE ci.b (id int PRIMARY KEY);\n",
	})
	schemaDir := filepath.Join(dir, "schema")
	ks, tables := filepath.Join(schemaDir, "1-keyspace.cql"), filepath.Join(schemaDir, "2-tables.cql")
	want := "-- plan at epoch 0: 3 statement(s), nothing is dropped"
	fromFiles := s.mustCLI(0, "plan", "-f", ks, "-f", tables)
	if !strings.HasPrefix(fromFiles, want) || !strings.Contains(fromFiles, "CREATE TABLE ci.a") || !strings.Contains(fromFiles, "CREATE TABLE ci.b") {
		t.Fatalf("plan -f keyspace -f tables:\n%s", fromFiles)
	}
	if fromDir := s.mustCLI(2, "plan", "-f", schemaDir, "--detailed-exitcode"); fromDir != fromFiles {
		t.Fatalf("plan -f %s:\n%s\nwant the plan of its two files:\n%s", schemaDir, fromDir, fromFiles)
	}
	out, stderr, rc := s.cli("plan", "-f", schemaDir, "-f", filepath.Join(dir, "dup.cql"), "--detailed-exitcode")
	wantErr := filepath.Join(dir, "dup.cql") + ": statement 1 (line 1:1): CREATE TABLE ci.b: table already exists: it is defined twice, first at " + tables + ": statement 2 (line 2:1); keep one definition"
	if rc != 1 || !strings.Contains(stderr, wantErr) || out != "" {
		t.Fatalf("a table defined in two files: exit code %d\n%s%s\nwant exit code 1 and %q", rc, out, stderr, wantErr)
	}
	if _, epoch := s.schemaAt(); epoch != 0 {
		t.Fatalf("plan changed the schema: epoch %d", epoch)
	}
	s.mustCLI(0, "apply", "-f", schemaDir, "--yes")
	if out := s.mustCLI(0, "plan", "-f", schemaDir, "--detailed-exitcode"); out != "-- the schema at epoch 1 already matches: nothing to do\n" {
		t.Fatalf("plan once applied: %q", out)
	}
	// Without --prune a table the files lack is kept: nothing pending.
	s.mustCLI(0, "plan", "-f", ks, "-f", filepath.Join(dir, "dup.cql"), "--detailed-exitcode")
	if out := s.mustCLI(2, "plan", "-f", ks, "-f", filepath.Join(dir, "dup.cql"), "--prune", "--detailed-exitcode"); !strings.Contains(out, "DROP TABLE ci.a;") {
		t.Fatalf("plan --prune of a schema without ci.a:\n%s", out)
	}
}

// planFileJSON is the part of a plan file the tests read.
type planFileJSON struct {
	Format     string   `json:"format"`
	Version    int      `json:"version"`
	Epoch      uint64   `json:"epoch"`
	Digest     string   `json:"digest"`
	BaseDigest string   `json:"base_digest"`
	Statements []string `json:"statements"`
	Options    struct {
		Files       []string `json:"files"`
		DropColumns bool     `json:"drop_columns"`
	} `json:"options"`
}

// TestApplyPlanFile: plan -o writes the reviewed plan; apply PLANFILE
// applies exactly its statements at one epoch (the schema moves by one
// epoch, and the plan then is empty); a plan file whose epoch the schema
// has left is refused with FailedPrecondition naming the current epoch,
// exit code 1, and nothing of it applied. On main's code neither -o nor
// apply PLANFILE existed.
func TestApplyPlanFile(t *testing.T) {
	s := newServer(t)
	s.start()
	dir := writeFiles(t, t.TempDir(), map[string]string{"ks.cql": ciKeyspace, "t.cql": ciTables,
		"v2.cql": "CREATE TABLE ci.a (id int PRIMARY KEY, v text, x int);\nCREATE TABLE ci.b (id int PRIMARY KEY, w text);\nCREATE TABLE ci.c (id int PRIMARY KEY);\nCREATE INDEX a_x ON ci.a (x);\n"})
	ks, tables, v2 := filepath.Join(dir, "ks.cql"), filepath.Join(dir, "t.cql"), filepath.Join(dir, "v2.cql")
	s.mustCLI(0, "exec", "-f", ks)
	s.mustCLI(0, "exec", "-e", "CREATE TABLE ci.other (id int PRIMARY KEY)")
	planPath := filepath.Join(dir, "plan.json")
	shown := s.mustCLI(2, "plan", "-f", ks, "-f", tables, "--detailed-exitcode", "-o", planPath)
	b, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	var pf planFileJSON
	if err := json.Unmarshal(b, &pf); err != nil {
		t.Fatalf("plan file: %v\n%s", err, b)
	}
	if pf.Format != "metalog-plan" || pf.Version != 1 || pf.Epoch != 2 || len(pf.Statements) != 2 || pf.Digest == "" ||
		pf.BaseDigest == "" || len(pf.Options.Files) != 2 || !strings.Contains(shown, pf.Digest) {
		t.Fatalf("plan file:\n%s\nplan shown:\n%s", b, shown)
	}

	// The plan applies as one change: one epoch for its statements.
	out := s.mustCLI(0, "apply", planPath, "--yes")
	if strings.Count(out, "applied  epoch 3\n") != 2 || !strings.Contains(out, "ci.a") || !strings.Contains(out, "ci.b") || !strings.HasSuffix(out, "\nepoch 3\n") {
		t.Fatalf("apply %s:\n%s", planPath, out)
	}
	r, err := s.client().GetSchema(context.Background(), &pb.GetSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Epoch != 3 || r.Digest != pf.Digest {
		t.Fatalf("after apply: epoch %d digest %s, want epoch 3 and the plan's digest %s", r.Epoch, r.Digest, pf.Digest)
	}
	// Applied again, the plan file is refused: the schema left its epoch.
	if out, stderr, rc := s.cli("apply", planPath, "--yes"); rc != 1 || !strings.Contains(stderr, "FailedPrecondition") ||
		!strings.Contains(stderr, "the schema is at epoch 3") || !strings.Contains(stderr, "was made at epoch 2 and applies only there: plan again") {
		t.Fatalf("a plan file applied twice: exit code %d\n%s%s", rc, out, stderr)
	}

	// A plan reviewed at epoch 3; the schema moves; nothing of it applies.
	s.mustCLI(2, "plan", "-f", ks, "-f", v2, "--detailed-exitcode", "-o", planPath)
	s.mustCLI(0, "exec", "-e", "CREATE TABLE ci.moved (id int PRIMARY KEY)")
	before, epoch := s.schemaAt()
	out, stderr, rc := s.cli("apply", planPath, "--yes")
	if rc != 1 || !strings.Contains(stderr, "FailedPrecondition") || !strings.Contains(stderr, "if_epoch 3: the schema is at epoch 4") ||
		!strings.Contains(stderr, "nothing of this request was applied") {
		t.Fatalf("apply of a plan whose epoch moved: exit code %d\n%s%s", rc, out, stderr)
	}
	if after, epochAfter := s.schemaAt(); epochAfter != epoch || after != before || strings.Contains(after, "ci.c ") {
		t.Fatalf("a refused plan file changed the schema: epoch %d -> %d\n%s", epoch, epochAfter, after)
	}
}

// TestPlanKeepsWithoutPruneAndDiffScope: a column the desired table lacks
// is kept without --drop-columns, --prune or not (a note, no statement);
// --drop-columns drops it with a warning; a table the desired schema lacks
// is kept with a note and no warning; diff limited to one keyspace says
// nothing of the others. On main's code the column was dropped without
// --prune, the kept table got a "-- warning:", and diff warned once per
// other keyspace.
func TestPlanKeepsWithoutPruneAndDiffScope(t *testing.T) {
	s := newServer(t)
	s.start()
	s.mustCLI(0, "exec", "-e", ciKeyspace+ciTables+"CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE KEYSPACE third WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	s.mustCLI(0, "exec", "-e", "ALTER TABLE ci.a ADD z int")
	out := s.mustCLI(0, "diff", "--from-epoch", "5", "ci")
	if !strings.Contains(out, "ALTER TABLE ci.a ADD z int;") || strings.Contains(out, "--") || strings.Contains(out, "other") || strings.Contains(out, "third") {
		t.Errorf("diff --from-epoch 5 ci: want the one change and nothing of the other keyspaces:\n%s", out)
	}
	desired := filepath.Join(writeFiles(t, t.TempDir(), map[string]string{"ci.cql": ciKeyspace + "CREATE TABLE ci.a (id int PRIMARY KEY, z int);\n"}), "ci.cql")
	note := "-- note: table ci.a keeps column v, which the desired table lacks (--drop-columns drops it)\n"
	out = s.mustCLI(0, "plan", "-f", desired)
	if strings.Contains(out, "-- warning:") || strings.Contains(out, "DROP") || !strings.Contains(out, note) ||
		!strings.Contains(out, "-- note: table ci.b is not in the desired schema") {
		t.Errorf("plan of ci.a without column v and without ci.b: want no statement, no warning, a note for each:\n%s", out)
	}
	out = s.mustCLI(0, "plan", "-f", desired, "--prune")
	if strings.Contains(out, "ALTER TABLE ci.a DROP") || !strings.Contains(out, note) || !strings.Contains(out, "\nDROP TABLE ci.b;\n") {
		t.Errorf("plan --prune of ci.a without column v: want ci.b dropped, column v kept:\n%s", out)
	}
	out = s.mustCLI(0, "plan", "-f", desired, "--drop-columns")
	if !strings.Contains(out, "ALTER TABLE ci.a DROP v;") || !strings.Contains(out, "-- warning: ALTER TABLE ci.a DROP v drops the data of column v") ||
		strings.Contains(out, "DROP TABLE") {
		t.Errorf("plan --drop-columns:\n%s", out)
	}
}
