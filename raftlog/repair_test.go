package raftlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// resetRecorder is a recorder that implements Resetter.
type resetRecorder struct {
	*recorder
	resets atomic.Int32
}

func (r *resetRecorder) Reset() error {
	r.mu.Lock()
	r.entries = nil
	r.mu.Unlock()
	r.resets.Add(1)
	return nil
}

// corrupt replaces what the recorder applied with a wrong history: some
// entries lost, one changed.
func corrupt(r *recorder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = slices.Clone(r.entries[:len(r.entries)/2])
	r.entries[0].Data = []byte("garbage")
}

// TestRepairWithoutSnapshot rebuilds a Resetter's state from the whole log:
// reset, then every normal entry re-applied, the applied index unchanged,
// and the node goes on applying afterwards.
func TestRepairWithoutSnapshot(t *testing.T) {
	app := &resetRecorder{recorder: &recorder{}}
	n := startSingle(t, t.TempDir(), app, 0)
	waitReady(t, n)
	ctx := testContext(t)
	proposeMany(t, ctx, "e", 200, 4, n)
	want := app.seen()
	applied := n.Status().Applied
	corrupt(app.recorder)

	if err := n.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, app.seen()); diff != "" {
		t.Fatalf("state after repair (-want +got):\n%s", diff)
	}
	if got := app.resets.Load(); got != 1 {
		t.Fatalf("%d resets, want 1", got)
	}
	if got := n.Status().Applied; got != applied {
		t.Fatalf("applied %d after repair, want %d", got, applied)
	}
	v, err := n.Propose(ctx, []byte("after"))
	if err != nil {
		t.Fatal(err)
	}
	if got := app.seen(); len(got) != len(want)+1 || v != fmt.Sprintf("after@%d", got[len(got)-1].Index) {
		t.Fatalf("proposal after repair: %v, %d entries applied, want %d", v, len(got), len(want)+1)
	}
}

// TestRepairFromSnapshot rebuilds a Snapshotter's state from the stored
// snapshot and the log after it, on a compacted log.
func TestRepairFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	app := &snapRecorder{recorder: &recorder{}}
	n := startSnapSingle(t, dir, app, 0, &events{})
	waitReady(t, n)
	ctx := testContext(t)
	proposeMany(t, ctx, "e", 1000, 10, n)
	waitFor(t, "a snapshot with the log compacted behind it", func() bool {
		first, _ := n.storage.FirstIndex()
		si := n.storage.snapshotIndex()
		return si >= 900 && first-1 == si-50
	})
	want := app.seen()
	applied := n.Status().Applied
	corrupt(app.recorder)

	if err := n.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, app.seen()); diff != "" {
		t.Fatalf("state after repair (-want +got):\n%s", diff)
	}
	r := app.restores()
	if len(r) != 1 || r[0] < 900 || r[0] > applied {
		t.Fatalf("restores %v, want one at the stored snapshot (applied %d)", r, applied)
	}
	if got := n.Status().Applied; got != applied {
		t.Fatalf("applied %d after repair, want %d", got, applied)
	}
	if _, err := n.Propose(ctx, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if got := app.count(); got != len(want)+1 {
		t.Fatalf("%d entries after a proposal, want %d", got, len(want)+1)
	}
}

// TestRepairUnsupportedAndStopped: an Applier that can be neither reset nor
// restored is left alone and the node goes on; after Stop, ErrStopped.
func TestRepairUnsupportedAndStopped(t *testing.T) {
	app := &recorder{}
	n := startSingle(t, t.TempDir(), app, 0)
	waitReady(t, n)
	ctx := testContext(t)
	if _, err := n.Propose(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	want := app.seen()
	if err := n.Repair(ctx); !errors.Is(err, ErrRepairUnsupported) {
		t.Fatalf("Repair: %v, want ErrRepairUnsupported", err)
	}
	if diff := cmp.Diff(want, app.seen()); diff != "" {
		t.Fatalf("state changed by a refused repair (-want +got):\n%s", diff)
	}
	if _, err := n.Propose(ctx, []byte("b")); err != nil {
		t.Fatalf("propose after a refused repair: %v", err)
	}
	n.Stop()
	if err := n.Repair(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Repair after Stop: %v, want ErrStopped", err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Repair(canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Repair with a canceled context: %v", err)
	}
}

// rebuildRecorder is a resetRecorder that implements Rebuilder and records
// the order of the calls Repair makes (applies before the first
// BeginRebuild are not recorded).
type rebuildRecorder struct {
	*resetRecorder
	callsMu sync.Mutex
	calls   []string
}

func (r *rebuildRecorder) call(what string) {
	r.callsMu.Lock()
	defer r.callsMu.Unlock()
	if n := len(r.calls); (n > 0 || what == "begin") && (n == 0 || r.calls[n-1] != what) {
		r.calls = append(r.calls, what)
	}
}

func (r *rebuildRecorder) BeginRebuild() { r.call("begin") }
func (r *rebuildRecorder) EndRebuild()   { r.call("end") }

func (r *rebuildRecorder) Reset() error {
	r.call("reset")
	return r.resetRecorder.Reset()
}

func (r *rebuildRecorder) Apply(es []Entry) []Result {
	r.call("apply")
	return r.resetRecorder.Apply(es)
}

// TestRepairBracketsTheRebuild checks that a Rebuilder hears BeginRebuild
// before the reset and EndRebuild after the replay, before Repair returns.
func TestRepairBracketsTheRebuild(t *testing.T) {
	app := &rebuildRecorder{resetRecorder: &resetRecorder{recorder: &recorder{}}}
	n := startSingle(t, t.TempDir(), app, 0)
	waitReady(t, n)
	ctx := testContext(t)
	proposeMany(t, ctx, "e", 20, 4, n)
	if err := n.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	app.callsMu.Lock()
	got := slices.Clone(app.calls)
	app.callsMu.Unlock()
	if diff := cmp.Diff([]string{"begin", "reset", "apply", "end"}, got); diff != "" {
		t.Fatalf("calls around the repair (-want +got):\n%s", diff)
	}
}
