package raftlog

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestForceNewClusterFromASurvivor: with two of three members gone for
// good, ForceNewCluster on the survivor's log makes it the only voter of a
// new cluster: its id derives from the old one, the index and the member,
// raft.db records the forcing, and the node starts, elects itself, has
// applied every entry it had committed and takes new proposals. Forcing it
// again while it is alone does nothing.
func TestForceNewClusterFromASurvivor(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newGRPCCluster(t)
	ps := c.listenPeers(all...)
	for _, id := range all {
		c.start(id, func(cfg *Config) { cfg.Peers, cfg.ClusterID = ps, 0xaa })
	}
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
	forced, err := ForceNewCluster(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := forced.Forcing
	if !slices.Equal(forced.Removed, []uint64{2, 3}) || f.From != 0xaa || f.By != 1 || f.Index == 0 ||
		f.To != ForcedClusterID(0xaa, f.Index, 1) || f.To == 0xaa {
		t.Fatalf("forced %+v, want [2 3] removed and a new id derived from aa, the index and 1", forced)
	}
	if ForcedClusterID(0xaa, f.Index, 2) == f.To || ForcedClusterID(0xaa, f.Index+1, 1) == f.To {
		t.Errorf("another member or index gives the same id %x", f.To)
	}
	dd, err := Inspect(dir)
	if err != nil || dd.ClusterID != f.To || !slices.Equal(dd.Forcings, []Forcing{f}) {
		t.Fatalf("Inspect after the forcing: %+v %v, want cluster %x and the forcing %+v", dd, err, f.To, f)
	}
	if dd.Naming != NamingBegun {
		t.Errorf("Inspect after the forcing of a log that recorded no naming: naming %q, want %q (the forcing begins a new history)", dd.Naming, NamingBegun)
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
	if got, ok := n.ForcedFrom(0xaa); n.ClusterID() != f.To || !ok || got != f {
		t.Errorf("node: cluster %x, forced from aa: %+v %v; want %x and the forcing", n.ClusterID(), got, ok, f.To)
	}
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
	if again, err := ForceNewCluster(dir, 1); err != nil || len(again.Removed) != 0 || again.Forcing != (Forcing{}) {
		t.Errorf("ForceNewCluster of a node alone: %+v, %v; want nothing to do", again, err)
	}
	if dd, _ := Inspect(dir); dd.ClusterID != f.To || len(dd.Forcings) != 1 {
		t.Errorf("after a forcing of a node alone: %+v", dd)
	}
}

// TestInterruptedForcingIsFinished: a forcing that recorded its new
// cluster id but not its entries (a crash between the two writes) makes
// Start refuse the log, so that the member never runs with the new id and
// the old members; ForceNewCluster finishes that same forcing.
func TestInterruptedForcingIsFinished(t *testing.T) {
	dir := t.TempDir()
	n, err := Start(Config{ID: 1, Peers: peers(1, 2, 3), Dir: dir, Applier: &recorder{}, TickInterval: testTick, ClusterID: 0xaa})
	if err != nil {
		t.Fatal(err)
	}
	n.Stop()
	st, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs, cs, _ := st.InitialState()
	ents, _, err := removalEntries(st, hs, cs, 1)
	if err != nil || len(ents) != 2 {
		t.Fatalf("removal entries: %d, %v", len(ents), err)
	}
	last := ents[len(ents)-1].GetIndex()
	f := Forcing{From: 0xaa, To: ForcedClusterID(0xaa, last, 1), Index: last, By: 1}
	if err := st.db.recordForcing(f); err != nil {
		t.Fatal(err)
	}
	st.Close()

	_, err = Start(Config{ID: 1, Dir: dir, Applier: &recorder{}, TickInterval: testTick})
	if !errors.Is(err, ErrForceIncomplete) || !strings.Contains(err.Error(), "--force-new-cluster") {
		t.Fatalf("Start of an interrupted forcing: %v, want ErrForceIncomplete saying to force again", err)
	}
	forced, err := ForceNewCluster(dir, 1)
	if err != nil || forced.Forcing != f || !slices.Equal(forced.Removed, []uint64{2, 3}) {
		t.Fatalf("finishing the forcing: %+v %v, want %+v", forced, err, f)
	}
	n, err = Start(Config{ID: 1, Dir: dir, Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	waitFor(t, "node 1 leading alone", func() bool { return n.Status().Leader == 1 })
	if n.ClusterID() != f.To {
		t.Errorf("cluster %x, want %x", n.ClusterID(), f.To)
	}
}

// TestOldMembersStopAtFirstContactWithTheForcedMember: after node 1 was
// forced, the old data dirs of nodes 2 and 3, started while node 1 is
// down, form a quorum of the old cluster and commit; once node 1 is up,
// each is refused at its first contact, told that its cluster was forced
// into node 1's, and stops with a ForcedError that Start repeats from then
// on. Node 1 never stops.
func TestOldMembersStopAtFirstContactWithTheForcedMember(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newGRPCCluster(t)
	ps := c.listenPeers(all...)
	old := func(cfg *Config) { cfg.Peers, cfg.ClusterID = ps, 0xaa }
	for _, id := range all {
		c.start(id, old)
	}
	c.waitLeader(all...)
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 10, 2, c.node(1).node)
	for _, id := range all {
		c.node(id).node.Stop()
	}
	forced, err := ForceNewCluster(c.node(1).dir, 1)
	if err != nil {
		t.Fatal(err)
	}

	// Node 1 is down, its listener closed; the old members form a quorum
	// of the old cluster without it.
	g1 := c.node(1)
	c.stopNode(g1)
	for _, id := range []uint64{2, 3} {
		c.start(id, old)
	}
	leader := c.waitLeader(2, 3)
	proposeMany(t, ctx, "split", 1, 1, c.node(leader).node)

	lis, err := net.Listen("tcp", g1.addr)
	if err != nil {
		t.Skipf("node 1's address %s was taken meanwhile: %v", g1.addr, err)
	}
	c.serve(1, lis, g1.dir)
	n1 := c.start(1, func(cfg *Config) {})
	for _, id := range []uint64{2, 3} {
		g := c.node(id)
		select {
		case <-g.node.Done():
		case <-time.After(waitTimeout):
			t.Fatalf("old member %d still runs after contacting the forced member", id)
		}
		var fe *ForcedError
		if err := g.node.Err(); !errors.As(err, &fe) || fe.Forcing != forced.Forcing || !errors.Is(err, ErrClusterForced) ||
			!strings.Contains(err.Error(), fmt.Sprintf("at index %d", forced.Forcing.Index)) || !strings.Contains(err.Error(), "must not be started again") {
			t.Fatalf("old member %d stopped with %v, want the ForcedError of %+v", id, err, forced.Forcing)
		}
		g.node.Stop()
		_, err := Start(Config{ID: id, Dir: g.dir, Applier: &recorder{}, TickInterval: testTick})
		if !errors.As(err, &fe) || fe.Forcing != forced.Forcing {
			t.Fatalf("restart of old member %d: %v, want the ForcedError", id, err)
		}
	}
	if _, err := n1.node.Propose(ctx, []byte("after")); err != nil || n1.node.Err() != nil {
		t.Fatalf("forced member after refusing the old ones: propose %v, err %v", err, n1.node.Err())
	}
}
