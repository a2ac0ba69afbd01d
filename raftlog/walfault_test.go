package raftlog

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestFailedFsyncStopsTheNode: an fsync of the write-ahead log that fails
// is never retried (what reached the disk is unknown): the node stops with
// an error naming the segment file, and a restart replays what is durable.
func TestFailedFsyncStopsTheNode(t *testing.T) {
	dir := t.TempDir()
	n := startSingle(t, dir, &recorder{}, 0)
	ctx := testContext(t)
	proposeMany(t, ctx, "a", 5, 1, n)

	var calls atomic.Int32
	fail := func(f *os.File) error {
		calls.Add(1)
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: syscall.EIO}
	}
	walSyncHook.Store(&fail)
	defer walSyncHook.Store(nil)
	if _, err := n.Propose(ctx, []byte("unsynced")); err == nil {
		t.Fatal("a proposal whose fsync failed succeeded")
	}
	select {
	case <-n.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the node still runs after a failed fsync")
	}
	err := n.Err()
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "sync wal segment") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Err() = %v, want the failed sync naming the segment in %s", err, dir)
	}
	if c := calls.Load(); c != 1 {
		t.Errorf("the failed sync was tried %d times, want once", c)
	}

	walSyncHook.Store(nil)
	n.Stop()
	app := &recorder{}
	startSingle(t, dir, app, 0)
	waitFor(t, "the entries made before the failure", func() bool { return app.count() >= 5 })
	for i, e := range app.seen()[:5] {
		if !strings.HasPrefix(string(e.Data), "a") {
			t.Fatalf("entry %d after the restart is %q", i, e.Data)
		}
	}
}
