package raftlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/raft/v3/raftpb"
)

func peerIDs(ms []Peer, learners bool) []uint64 {
	var out []uint64
	for _, m := range ms {
		if m.Learner == learners {
			out = append(out, m.ID)
		}
	}
	return out
}

// TestAddLearnerCatchesUp adds a fourth member to a cluster holding a few
// thousand entries: it catches up, is promoted and applied the same log.
func TestAddLearnerCatchesUp(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	const entries = 2000
	proposeMany(t, ctx, "pre", entries, 40, c.node(1).node, c.node(2).node, c.node(3).node)

	g4 := c.listen(4)
	c.start(4, func(cfg *Config) { cfg.Join = true })
	if err := c.node(2).node.AddLearner(ctx, 4, []byte(g4.addr)); err != nil {
		t.Fatalf("AddLearner: %v", err)
	}
	// AddLearner returns once node 2 applied it; it is a member everywhere
	// soon, and promoted once caught up.
	waitFor(t, "node 4 promoted to voter on every node", func() bool {
		for _, id := range []uint64{1, 2, 3, 4} {
			if !slices.Equal(peerIDs(c.node(id).node.Members(), false), []uint64{1, 2, 3, 4}) {
				return false
			}
		}
		return true
	})
	st := c.node(c.waitLeader(1, 2, 3, 4)).node.Status()
	if len(st.Learners) != 0 || !slices.Equal(st.Voters, []uint64{1, 2, 3, 4}) {
		t.Errorf("leader status after promotion: voters %v learners %v", st.Voters, st.Learners)
	}
	waitFor(t, "leader progress for every member", func() bool {
		p := c.node(leader).node.Status().Progress
		if c.node(leader).node.Status().Leader != leader {
			return true // leadership moved; nothing to check
		}
		return len(p) == 4 && p[4] > 0
	})
	// The new voter proposes; a leadership change on a loaded machine
	// (CheckQuorum) is retried like in proposeMany.
	proposeMany(t, ctx, "from four", 1, 1, c.node(4).node)
	c.waitApplied(entries+1, 1, 2, 3, 4)
	c.checkSame(1, 2, 3, 4)
	if ms := c.node(4).node.Members(); string(ms[3].Context) != g4.addr || string(ms[0].Context) != c.node(1).addr {
		t.Errorf("node 4 members = %+v", ms)
	}
	// Adding again is a no-op.
	if err := c.node(1).node.AddLearner(ctx, 4, []byte(g4.addr)); err != nil {
		t.Errorf("AddLearner of a member: %v", err)
	}
}

// TestRemoveFollower removes a follower; the others go on committing and
// the removed node stops with ErrRemoved.
func TestRemoveFollower(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	follower := without(all, leader)[0]
	proposeMany(t, ctx, "pre", 20, 4, c.node(leader).node)
	if err := c.node(leader).node.RemoveMember(ctx, follower); err != nil {
		t.Fatalf("RemoveMember(%d): %v", follower, err)
	}
	rest := without(all, follower)
	for _, id := range rest {
		waitFor(t, fmt.Sprintf("node %d without %d", id, follower), func() bool {
			return slices.Equal(peerIDs(c.node(id).node.Members(), false), rest)
		})
	}
	select {
	case <-c.node(follower).node.Done():
	case <-ctx.Done():
		t.Fatalf("removed node %d still runs", follower)
	}
	if err := c.node(follower).node.Err(); !errors.Is(err, ErrRemoved) {
		t.Errorf("removed node Err() = %v, want ErrRemoved", err)
	}
	if _, err := c.node(follower).node.Propose(ctx, []byte("x")); !errors.Is(err, ErrStopped) || !errors.Is(err, ErrRemoved) {
		t.Errorf("Propose on the removed node: err = %v, want ErrStopped and ErrRemoved", err)
	}
	proposeMany(t, ctx, "post", 20, 4, c.node(rest[0]).node, c.node(rest[1]).node)
	c.waitApplied(40, rest...)
	c.checkSame(rest...)

	// Its data directory cannot be started again.
	g := c.node(follower)
	g.node.Stop()
	_, err := Start(Config{ID: follower, Dir: g.dir, Applier: &recorder{}, TickInterval: testTick})
	if !errors.Is(err, ErrRemoved) {
		t.Errorf("Start of a removed member: err = %v, want ErrRemoved", err)
	}
}

// TestRemoveLeader removes the leader through itself: a new leader is
// elected and the old one reports ErrRemoved.
func TestRemoveLeader(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 10, 2, c.node(leader).node)
	if err := c.node(leader).node.RemoveMember(ctx, leader); err != nil {
		t.Fatalf("RemoveMember(leader %d): %v", leader, err)
	}
	select {
	case <-c.node(leader).node.Done():
	case <-ctx.Done():
		t.Fatal("removed leader still runs")
	}
	if err := c.node(leader).node.Err(); !errors.Is(err, ErrRemoved) {
		t.Errorf("removed leader Err() = %v, want ErrRemoved", err)
	}
	rest := without(all, leader)
	newLeader := c.waitLeader(rest...)
	for _, id := range rest {
		waitFor(t, fmt.Sprintf("node %d without %d", id, leader), func() bool {
			return slices.Equal(peerIDs(c.node(id).node.Members(), false), rest)
		})
	}
	if _, err := c.node(newLeader).node.Propose(ctx, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.node(without(rest, newLeader)[0]).node.Propose(ctx, []byte("after2")); err != nil {
		t.Fatal(err)
	}
	c.waitApplied(12, rest...)
	c.checkSame(rest...)
	// The last voter cannot be removed.
	if err := c.node(newLeader).node.RemoveMember(ctx, without(rest, newLeader)[0]); err != nil {
		t.Fatal(err)
	}
	if err := c.node(newLeader).node.RemoveMember(ctx, newLeader); !errors.Is(err, ErrConfChangeRefused) {
		t.Errorf("removing the only voter: err = %v, want ErrConfChangeRefused", err)
	}
}

// TestMembersAfterRestart checks Members comes back from raft.db.
func TestMembersAfterRestart(t *testing.T) {
	c := startCluster(t, 1, 2, 3)
	leader := c.waitLeader(1, 2, 3)
	ctx := testContext(t)
	n := c.nodes[leader]
	if err := n.AddLearner(ctx, 4, []byte("four")); err != nil {
		t.Fatal(err)
	}
	st := n.Status()
	if !slices.Equal(st.Learners, []uint64{4}) {
		t.Errorf("Learners = %v, want [4]", st.Learners)
	}
	waitFor(t, "leader progress of the learner", func() bool {
		_, ok := n.Status().Progress[4]
		return ok || n.Status().Leader != leader
	})
	victim := without([]uint64{1, 2, 3}, leader)[0]
	if err := n.RemoveMember(ctx, victim); err != nil {
		t.Fatal(err)
	}
	survivor := without(without([]uint64{1, 2, 3}, leader), victim)[0]
	want := []Peer{{ID: leader}, {ID: survivor}, {ID: 4, Context: []byte("four"), Learner: true}}
	slices.SortFunc(want, func(a, b Peer) int { return int(a.ID) - int(b.ID) })
	// Three members is also what the survivor has before it applied the
	// learner's addition: wait for the learner and the removal both.
	waitFor(t, "the survivor applies the addition and the removal", func() bool {
		ms := c.nodes[survivor].Members()
		return len(ms) == 3 && slices.ContainsFunc(ms, func(m Peer) bool { return m.ID == 4 })
	})
	before := c.nodes[survivor].Members()
	applied := c.nodes[survivor].Status().Applied
	if diff := cmp.Diff(want, before, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("members before restart (-want +got):\n%s", diff)
	}
	dir := c.nodes[survivor].storage.path
	c.nodes[survivor].Stop()
	n2, err := Start(Config{ID: survivor, Dir: dir[:len(dir)-len("/raft.db")], Applier: &recorder{}, Applied: applied, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Stop()
	if diff := cmp.Diff(before, n2.Members()); diff != "" {
		t.Errorf("members after restart (-before +after):\n%s", diff)
	}
}

// TestOnConfChange sees the bootstrap and later changes.
func TestOnConfChange(t *testing.T) {
	got := make(chan ConfChangeApplied, 16)
	n, err := Start(Config{
		ID: 1, Peers: []Peer{{ID: 1, Context: []byte("one")}}, Dir: t.TempDir(), Applier: &recorder{}, TickInterval: testTick,
		OnConfChange: func(cc ConfChangeApplied) { got <- cc },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	ctx := testContext(t)
	if err := n.AddLearner(ctx, 2, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if err := n.RemoveMember(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for range 3 {
		cc := <-got
		seen = append(seen, fmt.Sprintf("%d %v %d %s %d", cc.Index, cc.Type, cc.ID, cc.Context, len(cc.Members)))
	}
	// The learner never catches up (no node 2), so it is never promoted.
	want := []string{
		"1 ConfChangeAddNode 1 one 1",
		fmt.Sprintf("%s ConfChangeAddLearnerNode 2 two 2", seen[1][:1]),
		fmt.Sprintf("%s ConfChangeRemoveNode 2  1", seen[2][:1]),
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("conf changes (-want +got):\n%s", diff)
	}
	if err := n.RemoveMember(ctx, 1); !errors.Is(err, ErrConfChangeRefused) {
		t.Errorf("removing the only voter: err = %v, want ErrConfChangeRefused", err)
	}
	if err := n.RemoveMember(ctx, 42); err != nil {
		t.Errorf("removing a non-member: %v", err)
	}
}

func TestJoinNeedsNoPeers(t *testing.T) {
	n, err := Start(Config{ID: 5, Join: true, Dir: t.TempDir(), Applier: &recorder{}, TickInterval: testTick})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	short, cancel := context.WithTimeout(context.Background(), 100*testTick)
	defer cancel()
	if _, err := n.Propose(short, []byte("x")); !errors.Is(err, ErrNoLeader) {
		t.Errorf("Propose on a node that joined nobody: %v", err)
	}
	if st := n.Status(); st.Leader != 0 || st.Term != 0 || len(n.Members()) != 0 {
		t.Errorf("joining node campaigned or has members: %+v %v", st, n.Members())
	}
}

// TestRemovedWhileDownIsTold removes a member while it is down: it never
// applies its removal, but when it comes back and campaigns the leader
// tells it on its log stream, and it stops as removed, for good.
func TestRemovedWhileDownIsTold(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	leader := c.waitLeader(all...)
	gone := without(all, leader)[0]
	ctx := testContext(t)
	proposeMany(t, ctx, "pre", 10, 2, c.node(leader).node)
	c.waitApplied(10, all...)

	dir := c.node(gone).dir
	c.stopNode(c.node(gone))
	if err := c.node(leader).node.RemoveMember(ctx, gone); err != nil {
		t.Fatalf("RemoveMember(%d): %v", gone, err)
	}
	proposeMany(t, ctx, "post", 10, 2, c.node(leader).node)

	g := c.listen(gone) // a new listener; its own data dir again
	g.dir = dir
	c.start(gone, func(*Config) {})
	select {
	case <-g.node.Done():
	case <-ctx.Done():
		t.Fatalf("member %d, removed while down, still runs", gone)
	}
	if err := g.node.Err(); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Err() = %v, want ErrRemoved", err)
	}
	c.stopNode(g)
	if _, err := Start(Config{ID: gone, Dir: dir, Applier: &recorder{}, TickInterval: testTick}); !errors.Is(err, ErrRemoved) {
		t.Errorf("Start on the removed member's data dir: %v, want ErrRemoved", err)
	}
	// The others went on without it.
	rest := without(all, gone)
	proposeMany(t, ctx, "after", 5, 1, c.node(leader).node)
	c.waitApplied(25, rest...)
}

// TestPromotableKeepsObserverLearner: with Config.Promotable refusing a
// context, a learner added with it catches up and stays a learner, while
// one added after it with another context is promoted to voter.
func TestPromotableKeepsObserverLearner(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newGRPCCluster(t)
	ps := c.listenPeers(all...)
	// An observer's context is its address after "observer ".
	const mark = "observer "
	mod := func(g *gnode, join bool) func(*Config) {
		return func(cfg *Config) {
			cfg.Promotable = func(ctx []byte) bool { return !strings.HasPrefix(string(ctx), mark) }
			cfg.OnConfChange = func(cc ConfChangeApplied) {
				if cc.Type == raftpb.ConfChangeRemoveNode {
					g.tr.RemovePeer(cc.ID)
				} else if err := g.tr.AddPeer(cc.ID, strings.TrimPrefix(string(cc.Context), mark)); err != nil {
					panic(err)
				}
			}
			if cfg.Join = join; !join {
				cfg.Peers = ps
			}
		}
	}
	for _, id := range all {
		c.start(id, mod(c.node(id), false))
	}
	c.waitLeader(all...)
	ctx := testContext(t)
	g4, g5 := c.listen(4), c.listen(5)
	for _, g := range []*gnode{g4, g5} {
		c.start(g.id, mod(g, true))
	}
	if err := c.node(1).node.AddLearner(ctx, 4, []byte(mark+g4.addr)); err != nil {
		t.Fatal(err)
	}
	proposeMany(t, ctx, "p", 20, 5, c.node(1).node)
	c.waitApplied(20, 1, 2, 3, 4)
	if err := c.node(1).node.AddLearner(ctx, 5, []byte(g5.addr)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node 5 promoted on every node", func() bool {
		for _, id := range []uint64{1, 2, 3, 4, 5} {
			if !slices.Equal(peerIDs(c.node(id).node.Members(), false), []uint64{1, 2, 3, 5}) {
				return false
			}
		}
		return true
	})
	for _, id := range []uint64{1, 2, 3, 4, 5} {
		if got := peerIDs(c.node(id).node.Members(), true); !slices.Equal(got, []uint64{4}) {
			t.Errorf("node %d: learners %v, want the observer [4] alone", id, got)
		}
	}
}
