package member

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// damageColumn is a column name that appears in schema.db only inside the
// stored value of its table.
const damageColumn = "damage_me_column"

// storeBefore is what a member served before it was stopped.
type storeBefore struct {
	digest [32]byte
	epoch  uint64
	tables []string
}

// runAndStop starts a one-member cluster on dir (snapshot every
// snapEntries entries, compacting to 1 before it; 0: the default, no
// snapshot in this test), makes some schema, waits for snapshots when
// asked, stops it and returns what it served.
func runAndStop(t *testing.T, dir string, snapEntries uint64) storeBefore {
	t.Helper()
	var logs logBuffer
	m := startMember(t, func(c *Config) {
		c.DataDir = dir
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if snapEntries > 0 {
			c.SnapshotEntries, c.SnapshotCatchUpEntries = snapEntries, 1
		}
	})
	ctx := testContext(t)
	stmts := []string{writeKeyspace, "CREATE TABLE shop.damaged (id int PRIMARY KEY, " + damageColumn + " text)"}
	for i := range 8 {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i))
	}
	for _, s := range stmts {
		if _, err := m.Writes().Execute(ctx, Request{Statements: s}); err != nil {
			t.Fatal(err)
		}
	}
	if snapEntries > 0 {
		// Logged once the log is compacted behind it.
		waitForLog(t, &logs, "snapshot stored")
	}
	cur := m.core.sm.Current()
	before := storeBefore{digest: cur.Schema.Digest(), epoch: cur.Epoch, tables: tableNames(cur)}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	ls, err := raftlog.ReadLogState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if compacted := ls.CompactedIndex > 0 && ls.SnapshotIndex > 0; compacted != (snapEntries > 0) {
		t.Fatalf("log %+v: compacted %v, want %v", ls, compacted, snapEntries > 0)
	}
	return before
}

func tableNames(cm *metadata.ClusterMetadata) []string {
	var out []string
	for _, ks := range cm.Schema.Keyspaces() {
		for _, tb := range ks.Tables() {
			out = append(out, ks.Name+"."+tb.Name)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// flipColumn changes one byte of every copy of damageColumn in dir's
// schema.db (copies in freed pages too, so that the live one is hit).
func flipColumn(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, schemaStoreFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(damageColumn))
		if i < 0 {
			break
		}
		b[off+i+3] ^= 0x20
		off += i + len(damageColumn)
		n++
	}
	if n == 0 {
		t.Fatalf("%s does not hold %q", path, damageColumn)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedStoreRebuilt: a member whose schema.db has a damaged table
// record starts, moves the file aside, rebuilds the store from its
// snapshot and log (or from the whole log when nothing was compacted),
// serves the schema it had, logs a WARN and counts the rebuild by kind.
func TestDamagedStoreRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name        string
		snapEntries uint64
	}{{"snapshot and log", 5}, {"whole log", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			before := runAndStop(t, dir, tc.snapEntries)
			flipColumn(t, dir)
			var logs logBuffer
			reg := prometheus.NewRegistry()
			m := startMember(t, func(c *Config) {
				c.DataDir, c.Registerer = dir, reg
				c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
			})
			waitFor(t, "the schema of before", func() bool { return m.core.sm.Current().Schema.Digest() == before.digest })
			if cur := m.core.sm.Current(); cur.Epoch != before.epoch || strings.Join(tableNames(cur), ",") != strings.Join(before.tables, ",") {
				t.Errorf("serves epoch %d, tables %v; want epoch %d, tables %v", cur.Epoch, tableNames(cur), before.epoch, before.tables)
			}
			if restored := logs.lines("restored the state machine from the stored snapshot"); (len(restored) > 0) != (tc.snapEntries > 0) {
				t.Errorf("restored from the snapshot: %q, want that only when there is one", restored)
			}
			aside, _ := filepath.Glob(filepath.Join(dir, schemaStoreFile+".damaged-*"))
			if len(aside) != 1 {
				t.Fatalf("moved aside: %v, want one schema.db.damaged-* file", aside)
			}
			if got := testutil.ToFloat64(m.core.metrics.store.Rebuilds.WithLabelValues(metadata.DamageChecksum)); got != 1 {
				t.Errorf("metalog_store_rebuilds_total{reason=%q} = %v, want 1", metadata.DamageChecksum, got)
			}
			warn := logs.lines("schema store damaged")
			if len(warn) != 1 || !strings.Contains(warn[0], "level=WARN") || !strings.Contains(warn[0], "kind="+metadata.DamageChecksum) ||
				!strings.Contains(warn[0], aside[0]) || !strings.Contains(warn[0], filepath.Join(dir, schemaStoreFile)) {
				t.Errorf("WARN lines %q, want one naming the file, the kind and %s", warn, aside[0])
			}
		})
	}
}

// TestDamagedStoreRefused: a damaged schema.db whose log is compacted and
// whose snapshot file is damaged or gone is refused, naming the file and
// the commands to recover, and left where it is.
func TestDamagedStoreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		snap func(path string) error
	}{
		{"snapshot damaged", func(p string) error { return os.WriteFile(p, []byte("damaged"), 0o600) }},
		{"snapshot removed", os.Remove},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			runAndStop(t, dir, 5)
			flipColumn(t, dir)
			files, _ := filepath.Glob(filepath.Join(dir, "snap", "*.snap"))
			for _, f := range files {
				if err := tc.snap(f); err != nil {
					t.Fatal(err)
				}
			}
			m, err := Start(Config{Name: "n1", DataDir: dir, PeerAddr: "127.0.0.1:0"})
			if err == nil {
				m.Close()
				t.Fatal("a member whose damaged schema.db cannot be rebuilt started")
			}
			if !errors.Is(err, metadata.ErrDamaged) {
				t.Errorf("error %v does not match metadata.ErrDamaged", err)
			}
			for _, want := range []string{filepath.Join(dir, schemaStoreFile) + " is damaged", "cannot be started", "cluster remove n1", "cluster add --name n1", "--join", "backup restore"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if aside, _ := filepath.Glob(filepath.Join(dir, schemaStoreFile+".damaged-*")); len(aside) != 0 {
				t.Errorf("moved aside although refused: %v", aside)
			}
			if _, err := os.Stat(filepath.Join(dir, schemaStoreFile)); err != nil {
				t.Errorf("schema.db is gone: %v", err)
			}
		})
	}
}

// TestDamagedRaftDBRefused: a raft.db with a page header zeroed is refused,
// naming raft.db and the commands to recover, without a panic.
func TestDamagedRaftDBRefused(t *testing.T) {
	dir := t.TempDir()
	runAndStop(t, dir, 0)
	path := filepath.Join(dir, "raft.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Both meta pages (pages 0 and 1) name a root page (after the 16-byte
	// page header and the magic, version, page size and flags): zero its
	// page header.
	pageSize := int(binary.LittleEndian.Uint32(b[24:]))
	for _, meta := range []int{0, pageSize} {
		root := int(binary.LittleEndian.Uint64(b[meta+32:]))
		if root < 2 || (root+1)*pageSize > len(b) {
			t.Fatalf("meta at %d names root page %d of a %d-byte file", meta, root, len(b))
		}
		clear(b[root*pageSize : root*pageSize+16])
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Start(Config{Name: "n1", DataDir: dir, PeerAddr: "127.0.0.1:0"})
	if err == nil {
		m.Close()
		t.Fatal("a member with a damaged raft.db started")
	}
	if !errors.Is(err, raftlog.ErrDamaged) {
		t.Errorf("error %v does not match raftlog.ErrDamaged", err)
	}
	for _, want := range []string{path + " is damaged", "cannot be started", "cluster remove n1", "--join", "backup restore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestDamagedRestoredStoreRefused: the schema.db of a member restored from
// a backup holds the backup's state, which its raft log does not: damaged
// before the log has a snapshot of it, it is refused (never rebuilt from
// the log alone, which would lose the backup's schema), whether the
// member ever started or not.
func TestDamagedRestoredStoreRefused(t *testing.T) {
	src := startMember(t, nil)
	ctx := testContext(t)
	if _, err := src.Writes().Execute(ctx, Request{Statements: writeKeyspace + "; CREATE TABLE shop.damaged (id int PRIMARY KEY, " + damageColumn + " text)"}); err != nil {
		t.Fatal(err)
	}
	data, _, err := src.Reads().Backup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, started := range []bool{false, true} {
		t.Run(fmt.Sprintf("started %v", started), func(t *testing.T) {
			dir := t.TempDir()
			peer := freePeerAddr(t)
			cfg := Config{Name: "r1", DataDir: dir, PeerAddr: peer, InitialCluster: []InitialMember{{Name: "r1", PeerAddr: peer}}}
			if _, err := RestoreDataDir(dir, cfg.Name, cfg.InitialCluster, data); err != nil {
				t.Fatal(err)
			}
			if started {
				r := startMember(t, func(c *Config) { *c = cfg })
				if _, err := r.Writes().Execute(ctx, Request{Statements: "CREATE TABLE shop.after (id int PRIMARY KEY)"}); err != nil {
					t.Fatal(err)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			flipColumn(t, dir)
			m, err := Start(cfg)
			if err == nil {
				m.Close()
				t.Fatal("a restored member whose damaged schema.db the log cannot rebuild started")
			}
			wants := []string{filepath.Join(dir, schemaStoreFile) + " is damaged", "cannot be started", "backup restore"}
			if started {
				wants = append(wants, "restored from a backup", "no snapshot")
			} else {
				wants = append(wants, "holds no raft log")
			}
			for _, want := range wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if aside, _ := filepath.Glob(filepath.Join(dir, schemaStoreFile+".damaged-*")); len(aside) != 0 {
				t.Errorf("moved aside although refused: %v", aside)
			}
		})
	}
}
