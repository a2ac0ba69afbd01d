package raftlog

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// sampleCount returns the number of observations of histogram name in reg.
func sampleCount(t *testing.T, reg prometheus.Gatherer, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestMetrics proposes on a single node with its metrics on a private
// registry: every applied entry is counted, each in an Apply batch of its
// own (the proposals are sequential), and each proposal cost at least one
// persisted Ready with one wal fsync.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	n, err := Start(Config{ID: 1, Peers: peers(1), Dir: t.TempDir(), Applier: &recorder{}, TickInterval: testTick, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	waitReady(t, n)
	const (
		fsync   = "metalog_wal_fsync_duration_seconds"
		save    = "metalog_raft_save_duration_seconds"
		apply   = "metalog_raft_apply_duration_seconds"
		applied = "metalog_raft_applied_entries_total"
	)
	fsyncs, saves, applies := sampleCount(t, reg, fsync), sampleCount(t, reg, save), sampleCount(t, reg, apply)
	if got := testutil.ToFloat64(m.appliedEntries); got != 0 {
		t.Fatalf("%s = %v before any proposal, want 0", applied, got)
	}
	const count = 5
	for i := range count {
		if _, err := n.Propose(testContext(t), fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(m.appliedEntries); got != count {
		t.Errorf("%s = %v, want %d", applied, got, count)
	}
	if got := sampleCount(t, reg, apply) - applies; got != count {
		t.Errorf("%s observed %d batches for %d sequential proposals, want %d", apply, got, count, count)
	}
	if got := sampleCount(t, reg, save) - saves; got < count {
		t.Errorf("%s observed %d persisted Readys for %d proposals, want at least %d", save, got, count, count)
	}
	if got := sampleCount(t, reg, fsync) - fsyncs; got < count {
		t.Errorf("%s observed %d fsyncs for %d proposals, want at least %d", fsync, got, count, count)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
