package raftlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestReadIndex reads on the leader and on a follower, and checks that a
// read on one node covers a write acknowledged on another.
func TestReadIndex(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startCluster(t, all...)
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	other := without(without(all, leader), follower)[0]
	ctx := testContext(t)

	for _, id := range []uint64{leader, follower} {
		idx, err := c.nodes[id].ReadIndex(ctx)
		if err != nil {
			t.Fatalf("ReadIndex on %d: %v", id, err)
		}
		if st := c.nodes[id].Status(); st.Applied < idx || idx == 0 {
			t.Errorf("ReadIndex on %d = %d, applied %d", id, idx, st.Applied)
		}
	}
	for i := range 20 {
		v, err := c.nodes[follower].Propose(ctx, fmt.Appendf(nil, "w%d", i))
		if err != nil {
			t.Fatal(err)
		}
		written := indexOf(t, v)
		// other may not have applied the write yet; ReadIndex waits.
		idx, err := c.nodes[other].ReadIndex(ctx)
		if err != nil {
			t.Fatalf("ReadIndex on %d: %v", other, err)
		}
		if idx < written {
			t.Fatalf("ReadIndex on %d = %d after a write acknowledged at %d on %d", other, idx, written, follower)
		}
		if applied := c.nodes[other].Status().Applied; applied < idx {
			t.Fatalf("ReadIndex returned %d with only %d applied", idx, applied)
		}
	}
	// Concurrent reads share rounds and all succeed.
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := c.nodes[follower].ReadIndex(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestReadIndexNoLeader(t *testing.T) {
	n, err := Start(Config{ID: 1, Peers: peers(1, 2, 3), Dir: t.TempDir(), Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = n.ReadIndex(ctx)
	if !errors.Is(err, ErrNoLeader) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadIndex without a leader: err = %v, want ErrNoLeader and DeadlineExceeded", err)
	}
	// A read waiting across Stop ends with ErrStopped.
	done := make(chan error, 1)
	go func() {
		_, err := n.ReadIndex(context.Background())
		done <- err
	}()
	waitFor(t, "the read registered", func() bool {
		n.waits.mu.Lock()
		defer n.waits.mu.Unlock()
		return len(n.waits.reads) == 1
	})
	n.Stop()
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Errorf("ReadIndex across Stop: err = %v, want ErrStopped", err)
	}
	if _, err := n.ReadIndex(context.Background()); !errors.Is(err, ErrStopped) {
		t.Errorf("ReadIndex after Stop: err = %v, want ErrStopped", err)
	}
}

func TestReadIndexSingleNode(t *testing.T) {
	n := startSingle(t, t.TempDir(), &recorder{}, 0)
	v, err := n.Propose(testContext(t), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := n.ReadIndex(testContext(t))
	if err != nil || idx < indexOf(t, v) {
		t.Fatalf("ReadIndex = %d, %v; want >= %d", idx, err, indexOf(t, v))
	}
}

// TestReadIndexCoveredByStatus reads on every member after each change of
// leader, when the last committed entry is the new leader's empty entry:
// raft may confirm such a read in the Ready that applies that entry, and the
// index ReadIndex returns must already be in Status when it returns (the
// empty entry moves the applied index without an Apply call).
func TestReadIndexCoveredByStatus(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startCluster(t, all...)
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	for i := range 10 {
		next := without(all, leader)[i%2]
		c.nodes[leader].TransferLeadership(next)
		waitFor(t, "the new leader", func() bool { return c.nodes[next].Status().Leader == next })
		// The new leader first, then the others, which learn of its empty
		// entry as the read is confirmed.
		for _, id := range append([]uint64{next}, without(all, next)...) {
			idx, err := c.nodes[id].ReadIndex(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if applied := c.nodes[id].Status().Applied; applied < idx {
				t.Fatalf("transfer %d: ReadIndex on %d (leader %d) = %d, but Status().Applied = %d", i, id, next, idx, applied)
			}
		}
		leader = next
	}
}
