package metadata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

func openWith(t *testing.T, cfg Config) (*StateMachine, *Metrics) {
	t.Helper()
	cfg.Metrics = NewMetrics(nil)
	sm, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sm, cfg.Metrics
}

// storedTable reads a table straight from the store file, bypassing the
// in-memory view.
func storedTable(t *testing.T, sm *StateMachine, ks, name string) bool {
	t.Helper()
	var found bool
	err := sm.store.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(familyBuckets[familyTables]).Bucket([]byte(ks)); b != nil {
			found = b.Get([]byte(name)) != nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestFlushWindowCoalescesABurst(t *testing.T) {
	dir := t.TempDir()
	sm, m := openWith(t, Config{Dir: dir, FlushWindow: time.Second})
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	const n = 500
	for i := range n {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY, v text)", i)})
	}
	if flushes := testutil.ToFloat64(m.flushes); flushes > 5 {
		t.Fatalf("%d DDLs caused %v store commits within one window; want them coalesced", n+1, flushes)
	}
	if err := sm.Close(); err != nil { // drain: flush synchronously
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.flushes); got > 6 {
		t.Fatalf("store commits after drain = %v", got)
	}
	sm = openSM(t, dir)
	defer sm.Close()
	if got := sm.Current().Schema.TableCount(); got != n {
		t.Fatalf("after drain and reopen: %d tables, want %d", got, n)
	}
	if sm.Current().Index != a.index {
		t.Fatalf("store covers index %d, want %d", sm.Current().Index, a.index)
	}
}

func TestZeroWindowWritesBeforeApplyReturns(t *testing.T) {
	sm, m := openWith(t, Config{Dir: t.TempDir()})
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	for i := range 20 {
		name := fmt.Sprintf("t_%d", i)
		a.apply(Command{Text: "CREATE TABLE shop." + name + " (id int PRIMARY KEY)"})
		if !storedTable(t, sm, "shop", name) {
			t.Fatalf("shop.%s not in the store when Apply returned", name)
		}
	}
	if got := testutil.ToFloat64(m.flushes); got != 21 {
		t.Fatalf("flushes = %v, want one per applying batch (21)", got)
	}
}

func TestPendingBoundForcesFlush(t *testing.T) {
	sm, m := openWith(t, Config{Dir: t.TempDir(), FlushWindow: time.Hour, MaxPendingChanges: 50})
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	for i := range 500 {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY)", i)})
		if p := testutil.ToFloat64(m.pending); p > 50 {
			t.Fatalf("pending changes %v exceed the bound 50", p)
		}
	}
	if got := testutil.ToFloat64(m.flushes); got < 9 || got > 11 {
		t.Fatalf("flushes = %v, want about 501/50", got)
	}
}

func TestMergedDropsAndRecreatesLand(t *testing.T) {
	dir := t.TempDir()
	sm, _ := openWith(t, Config{Dir: dir, FlushWindow: time.Hour})
	a := &applier{t: t, sm: sm}
	// Flushed first, so the drop below must delete what is on disk.
	a.apply(Command{Text: ksDDL + "; CREATE TABLE shop.old (id int PRIMARY KEY); CREATE TABLE shop.keep (id int PRIMARY KEY)"})
	if err := sm.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	a.apply(Command{Text: "DROP TABLE shop.keep; CREATE TABLE shop.keep (id int PRIMARY KEY, v text)"})
	a.apply(Command{Text: "CREATE TABLE shop.mid (id int PRIMARY KEY); DROP KEYSPACE shop"})
	a.apply(Command{Text: ksDDL + "; CREATE TABLE shop.new (id int PRIMARY KEY)"})
	a.apply(Command{Text: "CREATE TABLE shop.gone (id int PRIMARY KEY); DROP TABLE shop.gone"})
	want := describe.Schema(sm.Current().Schema)
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	sm = openSM(t, dir)
	defer sm.Close()
	if diff := cmp.Diff(want, describe.Schema(sm.Current().Schema)); diff != "" {
		t.Fatalf("store after merged flush (-memory +disk):\n%s", diff)
	}
	if _, ok := sm.Current().Schema.Table("shop", "new"); !ok || sm.Current().Schema.TableCount() != 1 {
		t.Fatalf("want only shop.new, got:\n%s", want)
	}
}

func TestCorruptStoreFileIsAClearError(t *testing.T) {
	for name, content := range map[string][]byte{
		"truncated": []byte("bolt"),
		"garbage":   []byte(strings.Repeat("not a bbolt file ", 1024)),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "schema.db")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(Config{Dir: dir})
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open on a %s store: %v, want an error naming %s", name, err, path)
			}
		})
	}
}

// TestStoreRoundTripsEveryObjectKind writes types, tables, indexes, altered
// tables and drops through coalesced and synchronous flushes and checks a
// reopened store reproduces the same schema, digest included.
func TestStoreRoundTripsEveryObjectKind(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			dir := t.TempDir()
			sm, _ := openWith(t, Config{Dir: dir, FlushWindow: window})
			a := &applier{t: t, sm: sm}
			a.apply(Command{Text: ksDDL + `;
				CREATE TYPE shop.address (street text, city text);
				CREATE TYPE shop.unused (x int);
				CREATE TABLE shop.users (id uuid PRIMARY KEY, home frozen<address>, tags set<text>, n int);
				CREATE INDEX ON shop.users (n);
				CREATE INDEX tag_idx ON shop.users (values(tags))`})
			a.apply(Command{Text: `ALTER TABLE shop.users ADD (email text, age int);
				ALTER TABLE shop.users DROP age;
				ALTER TYPE shop.address ADD zip text;
				DROP INDEX shop.tag_idx;
				DROP TYPE shop.unused;
				ALTER KEYSPACE shop WITH durable_writes = false`})
			a.apply(Command{Text: "CREATE TABLE shop.gone (id int PRIMARY KEY); CREATE INDEX gone_idx ON shop.gone (id); DROP TABLE shop.gone"})
			for _, r := range a.apply(Command{Text: "SELECT"}) {
				if r.Err == nil {
					t.Fatal("SELECT applied")
				}
			}
			want := sm.Current()
			if err := sm.Close(); err != nil {
				t.Fatal(err)
			}
			sm = openSM(t, dir)
			defer sm.Close()
			got := sm.Current()
			if diff := cmp.Diff(describe.Schema(want.Schema), describe.Schema(got.Schema)); diff != "" {
				t.Fatalf("reopened schema (-want +got):\n%s", diff)
			}
			if got.Schema.Digest() != want.Schema.Digest() || got.Schema.Digest() != schema.ComputeDigest(got.Schema) {
				t.Fatal("reopened schema has a different digest")
			}
			ks, _ := got.Schema.Keyspace("shop")
			if _, ok := ks.Index("users_n_idx"); !ok || len(ks.Indexes()) != 1 || len(ks.UserTypes()) != 1 {
				t.Fatalf("reopened keyspace: indexes %v, types %v", ks.Indexes(), ks.UserTypes())
			}
		})
	}
}

// TestFailedFlushIsReported: a schema store write that fails is handed to
// Config.OnFlushError (the member raises its NOSPACE alarm on ENOSPC) and
// tried again one window later.
func TestFailedFlushIsReported(t *testing.T) {
	errs := make(chan error, 16)
	sm, _ := openWith(t, Config{Dir: t.TempDir(), FlushWindow: 10 * time.Millisecond, OnFlushError: func(err error) {
		select {
		case errs <- err:
		default:
		}
	}})
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	if err := sm.store.db.Close(); err != nil { // every write fails from here on
		t.Fatal(err)
	}
	a.apply(Command{Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	for i := range 2 {
		select {
		case err := <-errs:
			if !errors.Is(err, bolt.ErrDatabaseNotOpen) {
				t.Fatalf("reported flush error %v, want the store's %v", err, bolt.ErrDatabaseNotOpen)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("flush failure %d not reported within 10s", i+1)
		}
	}
	sm.Close() // fails: the store is closed
}

// TestBoundHandsFlushToWriter checks that a batch reaching the bound is
// written by the flusher's writer, not by the apply loop: while the store
// is busy (a write transaction held), the Apply that reaches the bound
// returns with the batch taken from pending and not yet on disk, and the
// writer lands it once the store is free.
func TestBoundHandsFlushToWriter(t *testing.T) {
	sm, m := openWith(t, Config{Dir: t.TempDir(), FlushWindow: time.Hour, MaxPendingChanges: 10})
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	if err := sm.flusher.flush(); err != nil {
		t.Fatal(err)
	}
	before := testutil.ToFloat64(m.flushes)
	tx, err := sm.store.db.Begin(true) // the writer's transaction waits for it
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() // a failure below must not leave the writer blocked
	for i := range 10 {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY)", i)})
	}
	sm.flusher.mu.Lock()
	pending := sm.flusher.pending.changes
	sm.flusher.mu.Unlock()
	if pending != 0 {
		t.Fatalf("%d changes still pending after the bound (10) was reached; want them handed to the writer", pending)
	}
	if got := testutil.ToFloat64(m.flushes); got != before {
		t.Fatalf("flushes = %v while the store is busy, want %v", got, before)
	}
	if storedTable(t, sm, "shop", "t_9") {
		t.Fatal("shop.t_9 is on disk while the store is busy")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for testutil.ToFloat64(m.flushes) < before+1 {
		if time.Now().After(deadline) {
			t.Fatal("the writer did not write the handed batch")
		}
		time.Sleep(time.Millisecond)
	}
	if !storedTable(t, sm, "shop", "t_9") {
		t.Fatal("shop.t_9 is not on disk after the writer's flush")
	}
}
