package raftlog

import (
	"slices"
	"strings"
	"testing"
)

// TestForceNewClusterFromASurvivor: with two of three members gone for
// good, ForceNewCluster on the survivor's log makes it the only voter: it
// starts, elects itself, has applied every entry it had committed and
// takes new proposals.
func TestForceNewClusterFromASurvivor(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	c.waitLeader(all...)
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 40, 4, c.node(1).node, c.node(2).node, c.node(3).node)
	c.waitApplied(40, all...)
	committed := c.node(1).app.seen()
	dir := c.node(1).dir
	c.stop()

	if _, err := ForceNewCluster(dir, 9); err == nil || !strings.Contains(err.Error(), "not a voter") {
		t.Fatalf("ForceNewCluster for a node that is not a member: %v", err)
	}
	removed, err := ForceNewCluster(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []uint64{2, 3}) {
		t.Fatalf("removed %v, want [2 3]", removed)
	}
	app := &recorder{}
	n, err := Start(Config{ID: 1, Dir: dir, Applier: app, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	waitFor(t, "node 1 leading alone", func() bool {
		st := n.Status()
		return st.Leader == 1 && slices.Equal(st.Voters, []uint64{1})
	})
	if _, err := n.Propose(ctx, []byte("after")); err != nil {
		t.Fatal(err)
	}
	seen := app.seen()
	// Node 1 may have committed more than it had applied when committed
	// was read (a retried proposal's second copy), never less.
	if len(seen) < len(committed)+1 || !entriesSame(seen[:len(committed)], committed) || string(seen[len(seen)-1].Data) != "after" {
		t.Fatalf("applied %d entries after the recovery, want the %d applied before, then the new one last", len(seen), len(committed))
	}
	if ms := n.Members(); len(ms) != 1 || ms[0].ID != 1 {
		t.Errorf("members %+v, want node 1 alone", ms)
	}
	n.Stop()
	if removed, err := ForceNewCluster(dir, 1); err != nil || len(removed) != 0 {
		t.Errorf("ForceNewCluster of a node alone: %v, %v; want nothing to do", removed, err)
	}
}
