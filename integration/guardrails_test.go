package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func guardrailValue(t *testing.T, s *server, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetGuardrails(ctx, &pb.GetGuardrailsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range r.Guardrails {
		if v.Name == name {
			return v.Value
		}
	}
	t.Fatalf("no guardrail %s", name)
	return ""
}

// TestGuardrailsAreClusterState changes guardrails with the CLI on one
// member of three, sees them on every member and after a kill -9, and has
// them enforced (warning, refusal) by any member.
func TestGuardrailsAreClusterState(t *testing.T) {
	c := newCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, stderr, rc := c.servers[1].cli("guardrails", "set", "tables_warn_threshold=1", "tables_fail_threshold=2")
	if rc != 0 || !strings.Contains(out, "tables_warn_threshold") {
		t.Fatalf("guardrails set: rc=%d %s %s", rc, out, stderr)
	}
	for i, s := range c.servers {
		waitFor(t, 10*time.Second, "the setting on "+c.names[i], func() error {
			if v := guardrailValue(t, s, "tables_fail_threshold"); v != "2" {
				return status.Errorf(codes.FailedPrecondition, "tables_fail_threshold = %s", v)
			}
			return nil
		})
	}
	if _, err := c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: ksRF3}); err != nil {
		t.Fatal(err)
	}
	r, err := c.servers[2].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.a (id int PRIMARY KEY); CREATE TABLE ks.b (id int PRIMARY KEY)"})
	if err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "tables_warn_threshold") {
		t.Fatalf("second table: want one warning, got %v, %v", r, err)
	}
	_, err = c.servers[0].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE ks.c (id int PRIMARY KEY)"})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "Cannot have more than 2 tables, aborting the creation of table ks.c") {
		t.Fatalf("third table: %v, want FailedPrecondition in Cassandra's wording", err)
	}
	// Invalid changes are refused and change nothing.
	for _, bad := range []string{"tables_warn_threshold=3", "no_such_guardrail=1", "tables_fail_threshold=-5", "drop_keyspace_enabled=maybe"} {
		if _, stderr, rc := c.servers[0].cli("guardrails", "set", bad); rc == 0 || !strings.Contains(stderr, "InvalidArgument") {
			t.Errorf("guardrails set %s: rc=%d %s", bad, rc, stderr)
		}
	}
	c.servers[1].kill()
	c.servers[1].start()
	if v := guardrailValue(t, c.servers[1], "tables_warn_threshold"); v != "1" {
		t.Fatalf("after kill -9 and restart: tables_warn_threshold = %s", v)
	}
}

// TestGuardrailsFromConfigFile starts a new cluster whose config file sets
// guardrails: they become the cluster's; a file with an invalid setting
// stops start-up with a clear error.
func TestGuardrailsFromConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("guardrails:\n  tables_warn_threshold: 7\n  drop_keyspace_enabled: false\n"), 0o600)
	s := newServer(t)
	s.start("--config", good)
	waitFor(t, 10*time.Second, "config guardrails applied", func() error {
		if v := guardrailValue(t, s, "tables_warn_threshold"); v != "7" {
			return status.Errorf(codes.FailedPrecondition, "tables_warn_threshold = %s", v)
		}
		return nil
	})
	if v := guardrailValue(t, s, "drop_keyspace_enabled"); v != "false" {
		t.Fatalf("drop_keyspace_enabled = %s", v)
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("guardrails:\n  tables_warn_threshold: 10\n  tables_fail_threshold: 5\n"), 0o600)
	b := newServer(t)
	b.args = []string{"--config", bad}
	out, stderr, rc := runBinary(t, b.serveArgs()...)
	if rc == 0 || !strings.Contains(stderr, "tables_warn_threshold") || !strings.Contains(stderr, "tables_fail_threshold") {
		t.Fatalf("serve with an invalid guardrail in the file: rc=%d %s %s", rc, out, stderr)
	}
}

// TestMaterializedViewsGuardrail: a new cluster refuses CREATE
// MATERIALIZED VIEW (materialized_views_enabled is false, as in
// Cassandra 4.0 and later) with a FailedPrecondition saying how to turn
// it on; `metalog guardrails set materialized_views_enabled=true` does,
// and then the view applies, is described after its base table, and
// keeps its base from being dropped. A config file can turn it on for a
// new cluster.
func TestMaterializedViewsGuardrail(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const base = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE shop.orders (id int PRIMARY KEY, customer text)"
	const view = "CREATE MATERIALIZED VIEW shop.by_customer AS SELECT id, customer FROM shop.orders WHERE customer IS NOT NULL AND id IS NOT NULL PRIMARY KEY (customer, id)"
	s := newServer(t)
	s.start()
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: base}); err != nil {
		t.Fatal(err)
	}
	_, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: view})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "materialized_views_enabled") ||
		!strings.Contains(err.Error(), "metalog guardrails set materialized_views_enabled=true") {
		t.Fatalf("with the defaults: %v", err)
	}
	if out, stderr, rc := s.cli("guardrails", "set", "materialized_views_enabled=true", "materialized_views_per_table_fail_threshold=1"); rc != 0 || !strings.Contains(out, "materialized_views_enabled") {
		t.Fatalf("guardrails set: rc=%d %s %s", rc, out, stderr)
	}
	if _, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: view}); err != nil {
		t.Fatalf("enabled: %v", err)
	}
	out, stderr, rc := s.cli("describe", "shop")
	if rc != 0 || !strings.Contains(out, "CREATE MATERIALIZED VIEW shop.by_customer AS\n    SELECT customer, id\n    FROM shop.orders\n") {
		t.Fatalf("describe: rc=%d %s %s", rc, out, stderr)
	}
	_, err = s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "DROP TABLE shop.orders"})
	if err == nil || !strings.Contains(err.Error(), "Cannot drop a table when materialized views still depend on it (by_customer)") {
		t.Fatalf("DROP TABLE of the base: %v", err)
	}
	_, err = s.client().Execute(ctx, &pb.ExecuteRequest{Statements: strings.Replace(view, "by_customer", "second", 1)})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "Tables cannot have more than 1 materialized views") {
		t.Fatalf("a second view over the threshold: %v", err)
	}

	cfg := filepath.Join(t.TempDir(), "views.yaml")
	os.WriteFile(cfg, []byte("guardrails:\n  materialized_views_enabled: true\n"), 0o600)
	c := newServer(t)
	c.start("--config", cfg)
	waitFor(t, 10*time.Second, "config guardrails applied", func() error {
		if v := guardrailValue(t, c, "materialized_views_enabled"); v != "true" {
			return status.Errorf(codes.FailedPrecondition, "materialized_views_enabled = %s", v)
		}
		return nil
	})
	if _, err := c.client().Execute(ctx, &pb.ExecuteRequest{Statements: base + "; " + view}); err != nil {
		t.Fatalf("with the config file: %v", err)
	}
}
