package raftlog

import (
	"errors"
	"testing"
	"time"
)

// TestRemovedIDsTravelInSnapshots: a member removed while it was down is
// recorded in the snapshots taken after; a member that learns the
// membership from such a snapshot (it was cut off during the removal)
// knows the removal, refuses to add the id again, and refuses the removed
// member's traffic and tells it so, although it does not lead: the removed
// member, started again and able to reach only that member, stops as
// removed.
func TestRemovedIDsTravelInSnapshots(t *testing.T) {
	all := []uint64{1, 2, 3, 4, 5}
	c, snaps := grpcSnapCluster(t, 0, nil, nil, all...)
	leader := c.waitLeader(all...)
	gone, behind := without(all, leader)[0], without(all, leader)[1]
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 10, 2, c.node(leader).node)
	c.waitApplied(10, all...)
	dir := c.node(gone).dir
	c.stopNode(c.node(gone))
	// behind misses the removal: it learns it from a snapshot.
	others := without(without(all, gone), behind)
	c.faults.Partition([]uint64{behind}, others)
	if err := c.node(leader).node.RemoveMember(ctx, gone); err != nil {
		t.Fatalf("RemoveMember(%d): %v", gone, err)
	}
	removedAt, _ := c.node(leader).node.PeerRemoved(gone)
	if removedAt == 0 {
		t.Fatalf("the leader does not know %d was removed", gone)
	}
	if err := c.node(leader).node.AddLearner(ctx, gone, nil); !errors.Is(err, ErrIDRemoved) {
		t.Errorf("AddLearner of the removed id %d: %v, want ErrIDRemoved", gone, err)
	}
	proposeMany(t, ctx, "post", 250, 5, c.node(leader).node)
	waitFor(t, "the log compacted past the removal", func() bool {
		first, _ := c.node(leader).node.storage.FirstIndex()
		return first > removedAt+1
	})
	c.faults.Heal()
	c.waitApplied(c.node(leader).app.count(), without(all, gone)...)
	if len(snaps[behind].restores()) == 0 {
		t.Fatalf("node %d caught up without a snapshot: the case is not set up", behind)
	}
	b := c.node(behind).node
	if at, _ := b.PeerRemoved(gone); at != removedAt {
		t.Fatalf("node %d, from the snapshot: %d removed at %d, want at %d", behind, gone, at, removedAt)
	}
	if err := b.AddLearner(ctx, gone, nil); !errors.Is(err, ErrIDRemoved) {
		t.Errorf("AddLearner of the removed id %d on node %d: %v, want ErrIDRemoved", gone, behind, err)
	}

	// The removed member comes back; it reaches behind only, which does
	// not lead.
	if c.waitLeader(without(all, gone)...) == behind {
		t.Skip("the leadership moved to the member that is to answer as a follower")
	}
	c.faults.Partition([]uint64{gone}, others)
	g := c.listen(gone)
	g.dir = dir
	c.start(gone, snapConfig(0, snaps, gone, func(*Config) {}))
	select {
	case <-g.node.Done():
	case <-time.After(waitTimeout):
		t.Fatalf("member %d, removed while down and told by node %d, still runs", gone, behind)
	}
	if err := g.node.Err(); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Err() = %v, want ErrRemoved", err)
	}
	for _, id := range without(all, gone) {
		if err := c.node(id).node.Err(); err != nil {
			t.Fatalf("member %d stopped: %v", id, err)
		}
	}
	proposeMany(t, ctx, "after", 5, 1, c.node(behind).node)

	// What the snapshot brought is in behind's data dir: a restart keeps it.
	bdir := c.node(behind).dir
	c.stopNode(c.node(behind))
	rb := c.listen(behind)
	rb.dir = bdir
	c.start(behind, snapConfig(0, snaps, behind, func(*Config) {}))
	if at, _ := rb.node.PeerRemoved(gone); at != removedAt {
		t.Fatalf("node %d after a restart: %d removed at %d, want at %d", behind, gone, at, removedAt)
	}
}

// TestRemovedReportOfALaggingMember: a node that applied past the index of
// the removal a member that does not lead reports was added again after
// it (a log of an earlier release reused its id): it ignores the report;
// a report of a removal it has not applied, or a leader's, stops it.
func TestRemovedReportOfALaggingMember(t *testing.T) {
	for _, tc := range []struct {
		name    string
		atDelta int64 // the reported index, relative to what the node applied
		leader  bool
		stopped bool
	}{
		{name: "applied past it, not the leader", atDelta: -1, stopped: false},
		{name: "not applied yet", atDelta: 100, stopped: true},
		{name: "the leader says so", atDelta: -1, leader: true, stopped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startSingle(t, t.TempDir(), &recorder{}, 0)
			waitReady(t, n)
			ctx := testContext(t)
			for range 3 {
				if _, err := n.Propose(ctx, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			applied := n.Status().Applied
			n.ReportRemoved(9, uint64(int64(applied)+tc.atDelta), tc.leader)
			if tc.stopped {
				select {
				case <-n.Done():
				case <-time.After(waitTimeout):
					t.Fatal("the node did not stop")
				}
				if !errors.Is(n.Err(), ErrRemoved) {
					t.Fatalf("Err() = %v, want ErrRemoved", n.Err())
				}
				return
			}
			waitFor(t, "the report taken by the node", func() bool { return len(n.removedc) == 0 })
			// The loop handles the report before it takes the next input.
			if _, err := n.Propose(ctx, []byte("after")); err != nil {
				t.Fatalf("the node stopped on the report: %v", err)
			}
			if _, err := n.Propose(ctx, []byte("after again")); err != nil || n.Err() != nil {
				t.Fatalf("the node stopped on the report: %v, %v", err, n.Err())
			}
		})
	}
}
