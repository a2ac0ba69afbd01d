package raftlog

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestThreeNodes replicates proposals made on the leader and on a follower,
// then isolates the leader and checks the others elect a new one and go on,
// and that the old leader catches up once it can talk again.
func TestThreeNodes(t *testing.T) {
	c := startCluster(t, 1, 2, 3)
	all := []uint64{1, 2, 3}
	leader := c.waitLeader(all...)
	follower := all[0]
	if follower == leader {
		follower = all[1]
	}
	ctx := testContext(t)

	propose := func(on uint64, payload string) {
		t.Helper()
		v, err := c.nodes[on].Propose(ctx, []byte(payload))
		if err != nil {
			t.Fatalf("Propose(%q) on node %d: %v", payload, on, err)
		}
		if s, _ := v.(string); len(s) <= len(payload) || s[:len(payload)+1] != payload+"@" {
			t.Fatalf("Propose(%q) on node %d returned %v", payload, on, v)
		}
	}
	for i := range 5 {
		propose(leader, fmt.Sprintf("L%d", i))
		propose(follower, fmt.Sprintf("F%d", i)) // raft forwards it to the leader
	}
	c.waitApplied(10, all...)
	c.checkSame(all...)

	// Cut the leader off. With CheckQuorum it steps down; the other two
	// elect a new leader among themselves.
	c.net.isolate(leader, true)
	rest := without(all, leader)
	newLeader := c.waitLeader(rest...)
	if newLeader == leader {
		t.Fatalf("isolated node %d is still the leader of %v", leader, rest)
	}
	for i := range 3 {
		propose(newLeader, fmt.Sprintf("N%d", i))
		propose(without(rest, newLeader)[0], fmt.Sprintf("M%d", i))
	}
	// The isolated node cannot commit anything.
	shortCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err := c.nodes[leader].Propose(shortCtx, []byte("lost"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrLeaderChanged) {
		t.Errorf("Propose on the isolated node: err = %v, want DeadlineExceeded or ErrLeaderChanged (it steps down)", err)
	}
	c.waitApplied(16, rest...)

	// Heal: the old leader learns the new log (dropping anything it
	// appended alone) and applies the same entries.
	c.net.isolate(leader, false)
	c.waitApplied(16, all...)
	c.waitLeader(all...)
	propose(leader, "healed")
	c.waitApplied(17, all...)
	c.checkSame(all...)
	for _, e := range c.apps[1].seen() {
		if string(e.Data) == "lost" {
			t.Errorf("the isolated node's proposal was applied at %d", e.Index)
		}
	}
	for _, id := range all {
		if st := c.nodes[id].Status(); !cmp.Equal(st.Voters, all) {
			t.Errorf("node %d voters = %v, want %v", id, st.Voters, all)
		}
	}
}

// TestStopFailsPendingWaiters stops a leader that cannot reach a quorum
// while a proposal waits for its entry to commit.
func TestStopFailsPendingWaiters(t *testing.T) {
	c := startCluster(t, 1, 2, 3)
	leader := c.waitLeader(1, 2, 3)
	for _, id := range without([]uint64{1, 2, 3}, leader) {
		c.net.isolate(id, true)
	}
	n := c.nodes[leader]
	const pending = 3
	done := make(chan error, pending)
	for i := range pending {
		go func() {
			_, err := n.Propose(context.Background(), fmt.Appendf(nil, "stuck%d", i))
			done <- err
		}()
	}
	waitFor(t, "proposals waiting for their entries", func() bool {
		n.waits.mu.Lock()
		defer n.waits.mu.Unlock()
		return len(n.waits.proposals) == pending
	})
	n.Stop()
	for range pending {
		if err := <-done; !errors.Is(err, ErrStopped) {
			t.Errorf("pending Propose after Stop: err = %v, want ErrStopped", err)
		}
	}
	n.waits.mu.Lock()
	left := len(n.waits.proposals)
	n.waits.mu.Unlock()
	if left != 0 {
		t.Errorf("%d waiters left after Stop", left)
	}
}

// checkSame fails unless the appliers of ids saw identical entries.
func (c *cluster) checkSame(ids ...uint64) {
	c.t.Helper()
	// Retried proposals may have added entries past the count waited for,
	// still on their way to some nodes: compare once all have as many.
	waitFor(c.t, fmt.Sprintf("as many entries applied on %v", ids), func() bool {
		n := c.apps[ids[0]].count()
		for _, id := range ids[1:] {
			if c.apps[id].count() != n {
				return false
			}
		}
		return true
	})
	want := c.apps[ids[0]].seen()
	for _, id := range ids[1:] {
		if diff := cmp.Diff(want, c.apps[id].seen()); diff != "" {
			c.t.Errorf("node %d applied differently from node %d (-%d +%d):\n%s", id, ids[0], ids[0], id, diff)
		}
	}
}

func without(ids []uint64, drop uint64) []uint64 {
	var out []uint64
	for _, id := range ids {
		if id != drop {
			out = append(out, id)
		}
	}
	return out
}

// TestFollowerProposalLostWithTheLeader checks that a follower's proposal,
// forwarded to a leader that is then cut off, ends with ErrLeaderChanged as
// soon as a new leader is known instead of waiting out its context (or
// commits, if the new leader came first).
func TestFollowerProposalLostWithTheLeader(t *testing.T) {
	c := startCluster(t, 1, 2, 3)
	all := []uint64{1, 2, 3}
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	c.net.isolate(leader, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.nodes[follower].Propose(ctx, []byte("forwarded"))
	if err != nil && !errors.Is(err, ErrLeaderChanged) {
		t.Fatalf("Propose on a follower whose leader was cut off: %v, want success or ErrLeaderChanged", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Propose waited out its context")
	}
}
