package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecSchemaFileAndDescribeRoundTrip runs the README quickstart's DDL,
// then loads examples/store.cql with `metalog exec -f` (its keyspace is its
// own, created with its own replication), then feeds the DESCRIBE output
// to a second, fresh node: both must describe the same schema.
func TestExecSchemaFileAndDescribeRoundTrip(t *testing.T) {
	a := newServer(t)
	a.start("--schema-flush-coalescing-window", "0")
	if stdout, stderr, rc := a.cli("exec", "-e", "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; "+
		"CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)"); rc != 0 {
		t.Fatalf("the quickstart's exec: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	stdout, stderr, rc := a.cli("exec", "-f", "../examples/store.cql")
	if rc != 0 {
		t.Fatalf("exec -f examples/store.cql: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	for _, want := range []string{"CREATE KEYSPACE  store ", "CREATE TYPE      store.address", "CREATE INDEX     store.customers_by_email ON customers", "ALTER TABLE      store.customers"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("exec output lacks %q:\n%s", want, stdout)
		}
	}
	described, stderr, rc := a.cli("describe")
	if rc != 0 {
		t.Fatalf("describe: %s", stderr)
	}
	for _, want := range []string{"CREATE KEYSPACE store WITH replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2'}",
		"CREATE TYPE store.address", "region text", "CLUSTERING ORDER BY (ordered_at DESC)", "vector<float, 8>", "CREATE INDEX customers_tags_idx ON store.customers (values(tags))"} {
		if !strings.Contains(described, want) {
			t.Errorf("describe lacks %q:\n%s", want, described)
		}
	}

	b := newServer(t)
	b.start()
	file := filepath.Join(t.TempDir(), "described.cql")
	if err := os.WriteFile(file, []byte(described), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, rc := b.cli("exec", "--atomic", "-f", file); rc != 0 {
		t.Fatalf("exec of the DESCRIBE output: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	again, _, _ := b.cli("describe")
	if again != described {
		t.Fatalf("DESCRIBE round trip differs:\nfirst:\n%s\nsecond:\n%s", described, again)
	}
}

// TestExecCorpusFileWithKeyspaceAndDescribeRoundTrip loads a corpus file
// whose names are unqualified (testdata/corpus/repair_runs.cql, modelled
// on a migration runner's first script) as its user would: the keyspace
// first, then `metalog exec -k keyspace -f file`. Its DESCRIBE, fed to a
// second, fresh node, describes the same schema.
func TestExecCorpusFileWithKeyspaceAndDescribeRoundTrip(t *testing.T) {
	a := newServer(t)
	a.start("--schema-flush-coalescing-window", "0")
	if stdout, stderr, rc := a.cli("exec", "-e", "CREATE KEYSPACE scheduler WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"); rc != 0 {
		t.Fatalf("creating the keyspace: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	stdout, stderr, rc := a.cli("exec", "-k", "scheduler", "-f", "../testdata/corpus/repair_runs.cql")
	if rc != 0 {
		t.Fatalf("exec -k scheduler -f testdata/corpus/repair_runs.cql: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	// Columns are as wide as the longest name: compare the words.
	words := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{"CREATE TABLE scheduler.run_segments applied", "CREATE INDEX scheduler.runs_by_fleet_status ON runs_by_fleet applied epoch 6"} {
		if !strings.Contains(words, want) {
			t.Errorf("exec output lacks %q:\n%s", want, stdout)
		}
	}
	described, stderr, rc := a.cli("describe")
	if rc != 0 {
		t.Fatalf("describe: %s", stderr)
	}
	for _, want := range []string{"CREATE TABLE scheduler.run_segments", "tables set<text> static", "CREATE INDEX runs_by_fleet_status ON scheduler.runs_by_fleet (run_status)"} {
		if !strings.Contains(described, want) {
			t.Errorf("describe lacks %q:\n%s", want, described)
		}
	}

	b := newServer(t)
	b.start()
	file := filepath.Join(t.TempDir(), "described.cql")
	if err := os.WriteFile(file, []byte(described), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, rc := b.cli("exec", "--atomic", "-f", file); rc != 0 {
		t.Fatalf("exec of the DESCRIBE output: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	again, _, _ := b.cli("describe")
	if again != described {
		t.Fatalf("DESCRIBE round trip differs:\nfirst:\n%s\nsecond:\n%s", described, again)
	}
}
