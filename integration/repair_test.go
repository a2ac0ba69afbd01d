package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
)

// divergeStoredTable rewrites a stopped member's schema store without
// table ks.name, at the same log index and epoch: the state an older
// version's apply path would have left had it skipped the statement that
// created the table. The store is written through the metadata package, so
// it is consistently wrong: every value sealed, the summary recording the
// digest of the schema without the table. The member's at-rest checks
// (seals, digest, scrub) find nothing to rebuild; only comparing digests
// across members (cluster check) sees it, and only cluster repair fixes
// it. A record deleted from the file behind the store's back would not
// do: the member notices the digest damage at start and rebuilds the
// store from its log.
func divergeStoredTable(t *testing.T, s *server, ks, name string) {
	t.Helper()
	sm, err := metadata.Open(metadata.Config{Dir: s.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sm.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	cur := sm.Current()
	if _, ok := cur.Schema.Table(ks, name); !ok {
		t.Fatalf("no table %s.%s in the schema store of %s at epoch %d", ks, name, s.dir, cur.Epoch)
	}
	next, _, _, err := cur.Apply(metadata.Command{Kind: metadata.KindDDL, Text: fmt.Sprintf("DROP TABLE %s.%s", ks, name)}, cur.Index)
	if err != nil {
		t.Fatalf("drop %s.%s from the loaded schema: %v", ks, name, err)
	}
	// The table never existed, as far as this member knows: same index,
	// same epoch, another schema.
	wrong := *next
	wrong.Index, wrong.Epoch = cur.Index, cur.Epoch
	data, err := sm.Backup(&wrong)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Restore(wrong.Index, data); err != nil {
		t.Fatal(err)
	}
	if got := sm.Current(); got.Epoch != cur.Epoch || got.Index != cur.Index || got.Schema.Digest() == cur.Schema.Digest() {
		t.Fatalf("rewritten store at index %d epoch %d digest %x, want index %d epoch %d and a digest other than %x",
			got.Index, got.Epoch, got.Schema.Digest(), cur.Index, cur.Epoch, cur.Schema.Digest())
	}
}

// deleteStoredTable removes table ks.name's record from a stopped member's
// schema store behind its back, the way a lost write or a bad disk would:
// the file still opens, but the schema read no longer matches the digest
// its summary records.
func deleteStoredTable(t *testing.T, s *server, ks, name string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(s.dir, "schema.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		tables := tx.Bucket([]byte("tables"))
		if tables == nil || tables.Bucket([]byte(ks)) == nil {
			return fmt.Errorf("no bucket tables/%s in the schema store", ks)
		}
		b := tables.Bucket([]byte(ks))
		if b.Get([]byte(name)) == nil {
			return fmt.Errorf("no record %s in tables/%s", name, ks)
		}
		return b.Delete([]byte(name))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// schemaOf returns a member's local view once it has applied epoch.
func schemaOf(t *testing.T, s *server, epoch uint64) *pb.GetSchemaResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetSchema(ctx, &pb.GetSchemaRequest{MinEpoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRepairCorruptedFollower makes a stopped follower's schema store
// consistently wrong (one table missing, sealed and digested as if it never
// existed: divergeStoredTable), restarts it with a different digest at the
// same epoch, which its own checks of the store do not notice, and repairs
// it with `metalog cluster repair`, through another member and then through
// itself: every member agrees again, and the repaired store survives a
// restart.
func TestRepairCorruptedFollower(t *testing.T) {
	c := newCluster(t, 3)
	leader := c.leader()
	lc := c.servers[leader].client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ddl := range []string{
		ksRF3,
		"CREATE TYPE ks.address (street text, city text)",
		"CREATE TABLE ks.users (id uuid PRIMARY KEY, home frozen<address>, n int)",
		"CREATE INDEX ON ks.users (n)",
		"CREATE TABLE ks.orders (id int PRIMARY KEY, v text); CREATE TABLE ks.events (day date, at timeuuid, PRIMARY KEY (day, at))",
	} {
		if _, err := lc.Execute(ctx, &pb.ExecuteRequest{Statements: ddl}); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	want, epoch := c.waitSameDigest()

	f := (leader + 1) % len(c.servers)
	fs, name := c.servers[f], c.names[f]
	fs.stop()
	divergeStoredTable(t, fs, "ks", "orders")
	fs.start()
	got := schemaOf(t, fs, epoch)
	if got.Epoch != epoch || got.Digest == want {
		t.Fatalf("%s after corruption: epoch %d digest %.12s; want epoch %d and a digest other than %.12s", name, got.Epoch, got.Digest, epoch, want)
	}
	// Nothing at rest gave it away: the store was not rebuilt.
	if aside, err := filepath.Glob(filepath.Join(fs.dir, "schema.db.damaged-*")); err != nil || len(aside) > 0 {
		t.Fatalf("%s rebuilt its store at start (moved aside: %v, %v); the divergence must be one only other members see", name, aside, err)
	}
	if _, body := httpDo(t, "GET", "http://"+fs.httpAddr+"/metrics", ""); strings.Contains(body, "metalog_store_rebuilds_total{") {
		t.Fatalf("%s counts store rebuilds after the divergence:\n%s", name, body)
	}
	if lr := schemaOf(t, c.servers[leader], epoch); lr.Digest != want || lr.Epoch != epoch {
		t.Fatalf("leader at epoch %d digest %.12s, want %d %.12s", lr.Epoch, lr.Digest, epoch, want)
	}

	// The agreement check detects it and names the member and the epoch.
	out, stderr, code := c.servers[leader].cli("cluster", "check")
	if code == 0 || !strings.Contains(out, "agreement: NO") || !regexp.MustCompile(name+`\s+.*diverged`).MatchString(out) {
		t.Fatalf("cluster check before repair: exit %d\n%s%s", code, out, stderr)
	}

	// Repair through the leader: it calls the follower's PeerService.
	out, stderr, code = c.servers[leader].cli("cluster", "repair", name)
	if wantOut := fmt.Sprintf("repaired %s: epoch %d digest %s\n", name, epoch, want); code != 0 || out != wantOut {
		t.Fatalf("cluster repair %s: exit %d, stdout %q (want %q), stderr %s", name, code, out, wantOut, stderr)
	}
	if d, e := c.waitSameDigest(); d != want || e != epoch {
		t.Fatalf("after repair: epoch %d digest %.12s, want %d %.12s", e, d, epoch, want)
	}
	if out, _, code := c.servers[leader].cli("cluster", "check"); code != 0 || !strings.Contains(out, "agreement: yes") {
		t.Fatalf("cluster check after repair: exit %d\n%s", code, out)
	}

	// The store was rewritten: a restart loads the repaired schema.
	fs.stop()
	fs.start()
	if got := schemaOf(t, fs, epoch); got.Digest != want || got.Epoch != epoch {
		t.Fatalf("%s after restart: epoch %d digest %.12s, want %d %.12s", name, got.Epoch, got.Digest, epoch, want)
	}

	// Repair on the member itself, named by id: idempotent.
	lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
	members, err := fs.client().ListMembers(lctx, &pb.ListMembersRequest{})
	lcancel()
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, m := range members.Members {
		if m.Name == name {
			id = m.Id
		}
	}
	out, stderr, code = fs.cli("cluster", "repair", id)
	if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("repaired %s: epoch %d digest %s", name, epoch, want)) {
		t.Fatalf("cluster repair %s on itself: exit %d, stdout %q, stderr %s", id, code, out, stderr)
	}
	if d, e := c.waitSameDigest(); d != want || e != epoch {
		t.Fatalf("after the second repair: epoch %d digest %.12s, want %d %.12s", e, d, epoch, want)
	}

	// An unknown member.
	_, stderr, code = c.servers[leader].cli("cluster", "repair", "nope")
	if code == 0 || !strings.Contains(stderr, "NotFound") {
		t.Fatalf("cluster repair nope: exit %d, stderr %s", code, stderr)
	}
}

// TestDamagedFollowerStoreRebuilt deletes a table record from a stopped
// follower's schema store behind its back: unlike divergeStoredTable's
// consistent rewrite, that is damage the store's digest shows. The member
// notices it at start, moves the file aside (schema.db.damaged-*),
// rebuilds the store from its log and counts it
// (metalog_store_rebuilds_total{reason="digest"}): it comes back with the
// cluster's digest, and cluster check finds nothing to repair.
func TestDamagedFollowerStoreRebuilt(t *testing.T) {
	c := newCluster(t, 3)
	leader := c.leader()
	lc := c.servers[leader].client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ddl := range []string{
		ksRF3,
		"CREATE TABLE ks.orders (id int PRIMARY KEY, v text); CREATE TABLE ks.events (day date, at timeuuid, PRIMARY KEY (day, at))",
	} {
		if _, err := lc.Execute(ctx, &pb.ExecuteRequest{Statements: ddl}); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	want, epoch := c.waitSameDigest()

	f := (leader + 1) % len(c.servers)
	fs, name := c.servers[f], c.names[f]
	fs.stop()
	deleteStoredTable(t, fs, "ks", "orders")
	fs.start()
	if got := schemaOf(t, fs, epoch); got.Digest != want || got.Epoch != epoch {
		t.Fatalf("%s after the damage: epoch %d digest %.12s, want its store rebuilt at %d %.12s", name, got.Epoch, got.Digest, epoch, want)
	}
	aside, err := filepath.Glob(filepath.Join(fs.dir, "schema.db.damaged-*"))
	if err != nil || len(aside) != 1 {
		t.Fatalf("%s moved aside %v (%v), want one schema.db.damaged-* file", name, aside, err)
	}
	_, body := httpDo(t, "GET", "http://"+fs.httpAddr+"/metrics", "")
	if v, ok := metricValue(body, `metalog_store_rebuilds_total{reason="digest"}`); !ok || v != 1 {
		t.Fatalf("%s: metalog_store_rebuilds_total{reason=\"digest\"} = %v (present %v), want 1", name, v, ok)
	}
	if out, stderr, code := c.servers[leader].cli("cluster", "check"); code != 0 || !strings.Contains(out, "agreement: yes") {
		t.Fatalf("cluster check after the rebuild: exit %d\n%s%s", code, out, stderr)
	}
}
