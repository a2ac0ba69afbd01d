package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// shopRefusal is the refusal of a third table in shop limited to 2.
const shopRefusal = "Guardrail tables_fail_threshold violated: Cannot have more than 2 tables, aborting the creation of table shop.t3 (keyspace shop: tables_fail_threshold=2)"

// keyspaceGuardrail returns the value and source of the guardrail name in
// keyspace ks as s answers it.
func keyspaceGuardrail(t *testing.T, s *server, ks, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetGuardrails(ctx, &pb.GetGuardrailsRequest{Keyspace: ks})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range r.Guardrails {
		if v.Name == name {
			return v.Value + " " + v.Source
		}
	}
	t.Fatalf("no guardrail %s", name)
	return ""
}

// refusesShopT3 checks that s refuses shop.t3 with the scoped wording.
func refusesShopT3(t *testing.T, s *server, who string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.t3 (id int PRIMARY KEY)"})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != shopRefusal {
		t.Fatalf("%s: shop.t3: %v, want FailedPrecondition %q", who, err, shopRefusal)
	}
}

// TestKeyspaceGuardrailsAreClusterState: an override set with the CLI on
// one member limits shop to 2 tables on every member (Cassandra's words
// plus the scope), leaves other alone while the cluster's total still
// applies, shows in get and history, and survives a restart of a member
// without its schema store and a new member that joins through a
// snapshot.
func TestKeyspaceGuardrailsAreClusterState(t *testing.T) {
	c := newCluster(t, 3, "--snapshot-interval-entries", "10", "--snapshot-catch-up-entries", "5")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := c.servers[0].client()
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}; CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}"}); err != nil {
		t.Fatal(err)
	}
	out, stderr, rc := c.servers[1].cli("guardrails", "set", "--keyspace", "shop", "tables_fail_threshold=2")
	if rc != 0 || !strings.Contains(out, "keyspace:shop") || !strings.Contains(out, "override (1):") {
		t.Fatalf("guardrails set --keyspace: rc=%d %s %s", rc, out, stderr)
	}
	if out, stderr, rc := c.servers[1].cli("guardrails", "set", "tables_warn_threshold=4", "tables_fail_threshold=5"); rc != 0 {
		t.Fatalf("guardrails set: rc=%d %s %s", rc, out, stderr)
	}
	// A setting an override cannot hold is refused, saying why.
	if _, stderr, rc := c.servers[0].cli("guardrails", "set", "--keyspace", "shop", "keyspaces_fail_threshold=1"); rc == 0 || !strings.Contains(stderr, "cannot be overridden per keyspace") {
		t.Fatalf("keyspaces_fail_threshold in an override: rc=%d %s", rc, stderr)
	}
	for i, s := range c.servers {
		waitFor(t, 10*time.Second, "the override on "+c.names[i], func() error {
			if v := keyspaceGuardrail(t, s, "shop", "tables_fail_threshold"); v != "2 keyspace:shop" {
				return fmt.Errorf("shop tables_fail_threshold = %s", v)
			}
			return nil
		})
	}
	if _, err := c.servers[2].client().Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE shop.t1 (id int PRIMARY KEY); CREATE TABLE shop.t2 (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	refusesShopT3(t, c.servers[2], "n3")
	// other is unaffected by shop's override: three more tables fit the
	// cluster's 5, the fourth crosses the total (no scope in its words).
	if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE other.t1 (id int PRIMARY KEY); CREATE TABLE other.t2 (id int PRIMARY KEY); CREATE TABLE other.t3 (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("other: %v", err)
	}
	_, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: "CREATE TABLE other.t4 (id int PRIMARY KEY)"})
	if msg := status.Convert(err).Message(); status.Code(err) != codes.FailedPrecondition ||
		msg != "Guardrail tables_fail_threshold violated: Cannot have more than 5 tables, aborting the creation of table other.t4" {
		t.Fatalf("other.t4 over the total: %v", err)
	}
	if v := keyspaceGuardrail(t, c.servers[0], "other", "tables_fail_threshold"); v != "5 cluster" {
		t.Fatalf("other: %s", v)
	}
	out, _, _ = c.servers[0].cli("guardrails", "get")
	if !strings.Contains(out, "keyspace overrides (1):") || !strings.Contains(out, "shop  tables_fail_threshold=2") {
		t.Fatalf("guardrails get lists no override:\n%s", out)
	}
	out, _, _ = c.servers[0].cli("history")
	if !strings.Contains(out, "SET GUARDRAILS keyspace shop") {
		t.Fatalf("history:\n%s", out)
	}
	out, _, _ = c.servers[0].cli("history", "--json")
	if !strings.Contains(out, `"scope":"shop"`) || !strings.Contains(out, `"after":"tables_fail_threshold=2\n"`) {
		t.Fatalf("history --json:\n%s", out)
	}

	// More entries than snapshot_interval_entries: snapshots and compaction.
	for i := range 15 {
		if _, err := cl.Execute(ctx, &pb.ExecuteRequest{Statements: fmt.Sprintf("ALTER TABLE other.t1 WITH comment = 'c%d'", i)}); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := c.waitSameDigest()

	// A follower restarted without its schema store rebuilds it from the
	// snapshot and the log.
	f := c.servers[(c.leader()+1)%3]
	f.stop()
	os.Remove(filepath.Join(f.dir, "schema.db"))
	f.start()
	if got, _ := c.waitSameDigest(); got != want {
		t.Fatalf("digest after restart: %s, want %s", got, want)
	}
	refusesShopT3(t, f, "the restarted member")

	// A new member joins through a snapshot and has the override.
	n4 := newServer(t)
	if out, stderr, rc := c.servers[0].cli("cluster", "add", "--name", "n4", "--peer-addr", n4.peers); rc != 0 {
		t.Fatalf("cluster add: %s %s", out, stderr)
	}
	n4.start("--name", "n4", "--join", c.servers[0].grpcAddr, "--snapshot-interval-entries", "10", "--snapshot-catch-up-entries", "5")
	c.servers = append(c.servers, n4)
	c.names = append(c.names, "n4")
	if got, _ := c.waitSameDigest(); got != want {
		t.Fatalf("n4 digest %s, want %s", got, want)
	}
	n4.waitLog(10*time.Second, "restored metadata snapshot")
	if v := keyspaceGuardrail(t, n4, "shop", "tables_fail_threshold"); v != "2 keyspace:shop" {
		t.Fatalf("n4: shop tables_fail_threshold = %s", v)
	}
	refusesShopT3(t, n4, "n4")

	// --reset removes the override: shop then only counts in the total.
	if out, stderr, rc := n4.cli("guardrails", "set", "--keyspace", "shop", "--reset"); rc != 0 || !strings.Contains(out, "no override left") {
		t.Fatalf("reset: rc=%d %s %s", rc, out, stderr)
	}
	waitFor(t, 10*time.Second, "the reset on n1", func() error {
		if v := keyspaceGuardrail(t, c.servers[0], "shop", "tables_fail_threshold"); v != "5 cluster" {
			return fmt.Errorf("after reset: %s", v)
		}
		return nil
	})
}
