package member

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// flipInFile changes the middle byte of every copy of b in the file at
// path, through its own descriptor, under a member that maps the file
// (MAP_SHARED: the member sees the change), as a bad disk would. It
// returns how many copies it changed.
func flipInFile(t *testing.T, path string, b []byte) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for off := 0; ; {
		i := bytes.Index(data[off:], b)
		if i < 0 {
			break
		}
		at := off + i + len(b)/2
		if _, err := f.WriteAt([]byte{data[at] ^ 0x20}, int64(at)); err != nil {
			t.Fatal(err)
		}
		n++
		off += i + len(b)
	}
	return n
}

// loadCopy loads a copy of the store file at path, which its member
// holds locked.
func loadCopy(t *testing.T, path string) *metadata.ClusterMetadata {
	t.Helper()
	dir := t.TempDir()
	src, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, "schema.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	s, err := metadata.OpenStore(dir)
	if err != nil {
		t.Fatalf("open the repaired store: %v", err)
	}
	defer s.Close()
	m, err := s.Load()
	if err != nil {
		t.Fatalf("load the repaired store: %v", err)
	}
	return m
}

// TestScrubRepairsADamagedStore: a byte of a table's value flipped in
// schema.db under a running member is found by a scrub (ERROR, metric,
// degraded), the file is moved aside and rewritten from the applied
// metadata, and the member goes on serving DDL, also after a restart.
func TestScrubRepairsADamagedStore(t *testing.T) {
	var logs logBuffer
	dir := t.TempDir()
	cfg := func(c *Config) {
		c.DataDir = dir
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.StoreScrubInterval = time.Hour // the test scrubs itself
	}
	m := startMember(t, cfg)
	ctx := testContext(t)
	for _, stmt := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks.scrub_target (id int PRIMARY KEY, payload text, more text, extra text)",
		"CREATE TABLE ks.other (id int PRIMARY KEY)",
	} {
		if _, err := m.Writes().Execute(ctx, Request{Statements: stmt}); err != nil {
			t.Fatal(err)
		}
	}
	tbl, _ := m.core.sm.Current().Schema.Table("ks", "scrub_target")
	path := filepath.Join(dir, "schema.db")
	if n := flipInFile(t, path, schema.AppendTable(nil, tbl)); n == 0 {
		t.Fatal("the table's value is not in schema.db")
	}

	if res, err := m.scrub.scrubOnce(ctx); err != nil || res.Damage == nil {
		t.Fatalf("scrub of the damaged store: %v, damage %v", err, res.Damage)
	}
	if got := logs.lines("schema store scrub found damage"); len(got) != 1 || !strings.Contains(got[0], "level=ERROR") || !strings.Contains(got[0], "kind=checksum") || !strings.Contains(got[0], "scrub_target") {
		t.Errorf("want one ERROR line with the kind and the table, got %q", got)
	}
	if c := testutil.ToFloat64(m.core.metrics.store.Corruptions); c != 1 {
		t.Errorf("metalog_store_corruptions_total %v, want 1", c)
	}
	if r := m.Readiness(); !r.Ready || !strings.Contains(r.Degraded, "schema store damaged") || !strings.Contains(r.Degraded, "scrub_target") {
		t.Fatalf("readiness %+v, want ready and degraded by the damaged store", r)
	}

	m.scrub.round(ctx) // finds it again, repairs, checks again
	if r := m.Readiness(); r.Degraded != "" {
		t.Errorf("degraded after the repair: %s", r.Degraded)
	}
	aside, _ := filepath.Glob(path + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("damaged files kept: %q, want one", aside)
	}
	if r := testutil.ToFloat64(m.core.metrics.store.Rebuilds.WithLabelValues(metadata.DamageChecksum)); r != 1 {
		t.Errorf("metalog_store_rebuilds_total{reason=checksum} %v, want 1", r)
	}
	cur := m.core.sm.Current()
	if got := loadCopy(t, path); got.Index != cur.Index || got.Epoch != cur.Epoch || got.Schema.Digest() != cur.Schema.Digest() {
		t.Fatalf("the repaired store holds index %d epoch %d, want the applied index %d epoch %d and the same schema", got.Index, got.Epoch, cur.Index, cur.Epoch)
	}

	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE TABLE ks.after_repair (id int PRIMARY KEY)"}); err != nil {
		t.Fatalf("DDL after the repair: %v", err)
	}
	if res, err := m.scrub.scrubOnce(ctx); err != nil || res.Damage != nil {
		t.Fatalf("scrub after more DDL: %v, damage %v", err, res.Damage)
	}
	want := m.core.sm.Current()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	again := startMember(t, cfg)
	if got := again.core.sm.Current(); got.Schema.Digest() != want.Schema.Digest() || got.Schema.TableCount() != 3 {
		t.Fatalf("restarted with %d tables, want the 3 applied before", got.Schema.TableCount())
	}
}

// scrubsCounted is metalog_store_scrubs_total{result} as reg serves it.
func scrubsCounted(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "metalog_store_scrubs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestScrubLoopRunsEveryInterval: with store_scrub_interval set the member
// scrubs by itself, without degrading a clean store, and its loop ends
// with the member (TestMain checks for leaks).
func TestScrubLoopRunsEveryInterval(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := startMember(t, func(c *Config) {
		c.Registerer = reg
		c.StoreScrubInterval = 20 * time.Millisecond
	})
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	for scrubsCounted(t, reg, "clean") < 3 {
		select {
		case <-ctx.Done():
			t.Fatalf("%v clean scrubs by the deadline, want 3", scrubsCounted(t, reg, "clean"))
		case <-time.After(10 * time.Millisecond):
		}
	}
	if d := m.Readiness().Degraded; d != "" {
		t.Errorf("a clean store degrades the member: %s", d)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestScrubDoesNotRepairWhenUnsafe: a damage found while a repair is not
// safe leaves the file in place and says why on /readyz.
func TestScrubDoesNotRepairWhenUnsafe(t *testing.T) {
	m := startMember(t, func(c *Config) { c.StoreScrubInterval = time.Hour })
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	ks, _ := m.core.sm.Current().Schema.Keyspace("ks")
	path := filepath.Join(m.core.cfg.DataDir, "schema.db")
	if flipInFile(t, path, schema.AppendKeyspace(nil, ks)) == 0 {
		t.Fatal("the keyspace's value is not in schema.db")
	}
	m.scrub.unsafe = func() string { return "a test says so" }
	m.scrub.round(ctx)
	if d := m.Readiness().Degraded; !strings.Contains(d, "schema store damaged") || !strings.Contains(d, "not repaired: a test says so") {
		t.Errorf("degraded %q, want the damage and why it was not repaired", d)
	}
	if aside, _ := filepath.Glob(path + ".damaged-*"); len(aside) != 0 {
		t.Errorf("moved aside although unsafe: %q", aside)
	}
}
