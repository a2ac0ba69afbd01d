package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecSchemaFileAndDescribeRoundTrip loads examples/shop.cql with
// `metalog exec -f`, then feeds the DESCRIBE output to a second, fresh node:
// both must describe the same schema.
func TestExecSchemaFileAndDescribeRoundTrip(t *testing.T) {
	a := newServer(t)
	a.start("--schema-flush-coalescing-window", "0")
	stdout, stderr, rc := a.cli("exec", "-f", "../examples/shop.cql")
	if rc != 0 {
		t.Fatalf("exec -f examples/shop.cql: rc=%d\n%s\n%s", rc, stdout, stderr)
	}
	for _, want := range []string{"CREATE TYPE      shop.address", "CREATE INDEX     shop.customers_by_email ON customers", "ALTER TABLE      shop.customers"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("exec output lacks %q:\n%s", want, stdout)
		}
	}
	described, stderr, rc := a.cli("describe")
	if rc != 0 {
		t.Fatalf("describe: %s", stderr)
	}
	for _, want := range []string{"CREATE TYPE shop.address", "region text", "CLUSTERING ORDER BY (ordered_at DESC)", "vector<float, 8>", "CREATE INDEX customers_tags_idx ON shop.customers (values(tags))"} {
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
