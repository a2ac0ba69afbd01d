package member

import (
	"fmt"
	"sync"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// applier adapts the state machine to raftlog.Applier. If the state machine
// fails to persist a batch it can no longer apply deterministically, so every
// later entry fails with the same error and the member reports it fatal.
type applier struct {
	sm    *metadata.StateMachine
	fatal func(error)

	entries []metadata.Entry // reused across batches; only the raft goroutine touches it
	results []raftlog.Result // returned by Apply and reused by the next one, as raftlog.Applier allows; raft goroutine only

	mu  sync.Mutex // guards err
	err error
}

func (a *applier) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Apply implements raftlog.Applier.
func (a *applier) Apply(entries []raftlog.Entry) []raftlog.Result {
	out := a.resultsFor(len(entries))
	if err := a.failed(); err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	a.entries = a.entries[:0]
	for _, e := range entries {
		a.entries = append(a.entries, metadata.Entry{Index: e.Index, Data: e.Data})
	}
	results, err := a.sm.Apply(a.entries)
	if err != nil {
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
		a.fatal(err)
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	for i, r := range results {
		out[i] = raftlog.Result{Value: r.Outcome, Err: r.Err}
	}
	return out
}

// resultsFor returns a zeroed slice of n results, reusing the one the
// previous Apply returned: raftlog is done with it once Apply is called
// again.
func (a *applier) resultsFor(n int) []raftlog.Result {
	if cap(a.results) < n {
		a.results = make([]raftlog.Result, n)
		return a.results
	}
	a.results = a.results[:n]
	clear(a.results)
	return a.results
}

// Capture implements raftlog.Snapshotter.
func (a *applier) Capture(index uint64) func() ([]byte, error) { return a.sm.Capture(index) }

// Restore implements raftlog.Snapshotter.
func (a *applier) Restore(index uint64, data []byte) error { return a.sm.Restore(index, data) }

// SnapshotWork implements raftlog.SnapshotSizer: a snapshot is compressed,
// its schedule counts the store file it holds.
func (a *applier) SnapshotWork(data []byte) int { return metadata.SnapshotWork(data) }

// BeginRebuild implements raftlog.Rebuilder: readers keep the metadata of
// before a repair until its replay is done.
func (a *applier) BeginRebuild() { a.sm.BeginRebuild() }

// EndRebuild implements raftlog.Rebuilder.
func (a *applier) EndRebuild() { a.sm.EndRebuild() }

// Reset implements raftlog.Resetter, for Node.Repair. After an apply
// failure nothing could be replayed onto the empty state, so it refuses.
func (a *applier) Reset() error {
	if err := a.failed(); err != nil {
		return fmt.Errorf("apply failed earlier: %w", err)
	}
	return a.sm.Reset()
}
