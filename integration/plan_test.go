package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

const shopV1 = `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE shop.address (street text, city text);
CREATE TABLE shop.customers (id uuid PRIMARY KEY, name text, home frozen<address>);
CREATE TABLE shop.carts (id uuid PRIMARY KEY, items list<text>);
`

// shopV2 adds a column, a table and an index, and leaves shop.carts out.
const shopV2 = `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE shop.address (street text, city text);
CREATE TABLE shop.customers (id uuid PRIMARY KEY, name text, home frozen<address>, email text);
CREATE TABLE shop.orders (customer uuid, placed timestamp, total decimal, PRIMARY KEY (customer, placed))
  WITH CLUSTERING ORDER BY (placed DESC);
CREATE INDEX orders_total ON shop.orders (total);
`

// cliWithInput runs a client subcommand against s with stdin as its input.
func (s *server) cliWithInput(stdin string, args ...string) (stdout, stderr string, code int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append(args, "--endpoints", s.grpcAddr)...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			s.t.Fatal(err)
		}
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestDeclarativeSchemaFlow runs the README's flow through the CLI on a
// real member: plan, apply (asked, refused, then --yes), a plan that
// matches, a second version with --prune, a dry run that changes nothing,
// an apply whose epoch moved, and diff between epochs and between files.
func TestDeclarativeSchemaFlow(t *testing.T) {
	s := newServer(t)
	s.start()
	dir := t.TempDir()
	v1, v2 := filepath.Join(dir, "v1.cql"), filepath.Join(dir, "v2.cql")
	for path, text := range map[string]string{v1: shopV1, v2: shopV2} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		out, stderr, rc := s.cli(args...)
		if rc != 0 {
			t.Fatalf("metalog %s: rc=%d\n%s%s", strings.Join(args, " "), rc, out, stderr)
		}
		return out
	}
	schemaNow := func() *pb.GetSchemaResponse {
		t.Helper()
		r, err := s.client().GetSchema(context.Background(), &pb.GetSchemaRequest{Format: "cql"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	out := run("plan", "-f", v1)
	if !strings.HasPrefix(out, "-- plan at epoch 0: 4 statement(s), nothing is dropped") || !strings.Contains(out, "CREATE TYPE shop.address") {
		t.Fatalf("plan of v1 on an empty cluster:\n%s", out)
	}
	if o, stderr, rc := s.cliWithInput("n\n", "apply", "-f", v1); rc != 1 || !strings.Contains(stderr, "not applied") || !strings.Contains(o, "CREATE TABLE shop.carts") {
		t.Fatalf("apply answered n: rc=%d\n%s%s", rc, o, stderr)
	}
	if r := schemaNow(); r.Epoch != 0 {
		t.Fatalf("a refused apply changed the schema: epoch %d", r.Epoch)
	}
	out = run("apply", "-f", v1, "--yes")
	if !strings.Contains(out, "shop.carts") || !strings.Contains(out, "epoch 1\n") {
		t.Fatalf("apply --yes:\n%s", out)
	}
	if out := run("plan", "-f", v1); out != "-- the schema at epoch 1 already matches: nothing to do\n" {
		t.Fatalf("plan once applied: %q", out)
	}

	// v2 keeps shop.carts without --prune, drops it with it.
	out = run("plan", "-f", v2, "--json")
	var p struct {
		Epoch       string   `json:"epoch"`
		Statements  []string `json:"statements"`
		Warnings    []string `json:"warnings"`
		Destructive bool     `json:"destructive"`
		Digest      string   `json:"digest"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	if p.Epoch != "1" || p.Destructive || len(p.Statements) != 3 || strings.Contains(strings.Join(p.Statements, "\n"), "carts") {
		t.Fatalf("plan of v2 without --prune: %+v", p)
	}
	out = run("plan", "-f", v2, "--prune")
	if !strings.Contains(out, "DESTRUCTIVE") || !strings.Contains(out, "-- warning: ") || !strings.Contains(out, "DROP TABLE shop.carts;") {
		t.Fatalf("plan of v2 with --prune:\n%s", out)
	}

	// A dry run of the pruned plan changes nothing and names the digest
	// the real apply makes.
	planFile := filepath.Join(dir, "plan.cql")
	if err := os.WriteFile(planFile, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	dry := run("exec", "--dry-run", "--atomic", "--if-epoch", "1", "-f", planFile)
	if !strings.Contains(dry, "would apply") || !strings.Contains(dry, "dry run: nothing was proposed; the schema would be at epoch 2") {
		t.Fatalf("exec --dry-run:\n%s", dry)
	}
	if r := schemaNow(); r.Epoch != 1 {
		t.Fatalf("the dry run changed the schema: epoch %d", r.Epoch)
	}

	// The schema moves between plan and apply: nothing of the plan lands.
	run("exec", "-e", "CREATE TABLE shop.other (id int PRIMARY KEY)")
	o, stderr, rc := s.cli("exec", "--atomic", "--if-epoch", "1", "-f", planFile)
	if rc != 1 || !strings.Contains(stderr, "FailedPrecondition: if_epoch 1: the schema is at epoch 2") {
		t.Fatalf("exec --if-epoch 1 at epoch 2: rc=%d\n%s%s", rc, o, stderr)
	}
	if r := schemaNow(); r.Epoch != 2 || strings.Contains(r.Cql, "orders") {
		t.Fatalf("a refused if_epoch applied something: epoch %d", r.Epoch)
	}
	out = run("apply", "-f", v2, "--prune", "--yes")
	if !strings.Contains(out, "DROP TABLE shop.other;") || !strings.Contains(out, "epoch 3\n") {
		t.Fatalf("apply v2 --prune:\n%s", out)
	}
	applied := schemaNow()
	described := filepath.Join(dir, "described.cql")
	if err := os.WriteFile(described, []byte(applied.Cql), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run("diff", "-f", described, "-f", v2); out != "-- no difference\n" {
		t.Fatalf("the applied schema differs from v2:\n%s", out)
	}
	if out := run("plan", "-f", v2, "--prune"); !strings.Contains(out, "already matches") {
		t.Fatalf("plan of v2 once applied:\n%s", out)
	}

	// diff between epochs: from 1 (v1) to 3 (v2) is the pruned plan.
	out = run("diff", "--from-epoch", "1", "--to-epoch", "3")
	for _, want := range []string{"ALTER TABLE shop.customers ADD email text;", "CREATE TABLE shop.orders", "CREATE INDEX orders_total", "DROP TABLE shop.carts;"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --from-epoch 1 --to-epoch 3 lacks %q:\n%s", want, out)
		}
	}
	if out := run("diff", "--from-epoch", "3"); out != "-- no difference\n" {
		t.Errorf("diff from the current epoch to now: %q", out)
	}
	out = run("diff", "-f", v1, "-f", v2)
	if !strings.Contains(out, "DROP TABLE shop.carts;") || !strings.Contains(out, "ALTER TABLE shop.customers ADD email text;") {
		t.Errorf("diff -f v1 -f v2:\n%s", out)
	}
	t.Logf("v2 applied at epoch %d, digest %s", applied.Epoch, applied.Digest)
}
