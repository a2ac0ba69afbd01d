package raftlog

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// promotionFaults is a network filter for TestCaughtUpLearnerThatDiedIsNotPromoted:
// it can mute a member (drop everything it sends), hold the followers'
// append acknowledgements to the leader (so nothing commits), and counts
// the leader's heartbeats, one per tick, to wait for ticks to pass.
type promotionFaults struct {
	leader, learner uint64      // set before the filter is installed
	muted           atomic.Bool // the learner sends nothing
	holdAcks        atomic.Bool // the voters' MsgAppResp to the leader are lost
	heartbeats      atomic.Int64
}

func (f *promotionFaults) drop(m *raftpb.Message) bool {
	if m.GetFrom() == f.learner {
		return f.muted.Load()
	}
	if m.GetFrom() == f.leader && m.GetType() == raftpb.MsgHeartbeat && m.GetTo() != f.learner {
		f.heartbeats.Add(1)
	}
	return f.holdAcks.Load() && m.GetTo() == f.leader && m.GetType() == raftpb.MsgAppResp
}

// waitTicks waits until the leader sent count more heartbeats to the
// voters (count/2 ticks at least, with two followers).
func (f *promotionFaults) waitTicks(t *testing.T, count int64) {
	t.Helper()
	target := f.heartbeats.Load() + 2*count
	waitFor(t, "the leader to tick", func() bool { return f.heartbeats.Load() >= target })
}

// TestCaughtUpLearnerThatDiedIsNotPromoted: a learner whose log reached
// the commit index and which then stopped answering is never made a
// voter, and the cluster keeps committing. The learner catches up while a
// configuration change is pending (no promotion then), goes silent, and
// only after a few ticks does the pending change commit: a leader that
// promoted on the match index alone would promote the silent learner.
func TestCaughtUpLearnerThatDiedIsNotPromoted(t *testing.T) {
	f := &promotionFaults{learner: 4}
	f.muted.Store(true)
	c := startClusterWith(t, func(id uint64, cfg *Config, _ *recorder) {
		cfg.ElectionTicks = 50 // no election while acknowledgements are held
		if id == 4 {
			cfg.Peers, cfg.Join = nil, true
		}
	}, 1, 2, 3)
	f.leader = c.waitLeader(1, 2, 3)
	c.net.setFilter(f.drop) // f.leader is read under the network's lock
	leader := c.nodes[f.leader]
	ctx := testContext(t)
	if _, err := leader.Propose(ctx, []byte("before")); err != nil {
		t.Fatal(err)
	}
	c.dirs[4] = t.TempDir()
	c.start(4)
	if err := leader.AddLearner(ctx, 4, nil); err != nil {
		t.Fatalf("AddLearner(4): %v", err)
	}

	// A configuration change that cannot commit yet: no promotion while it
	// is pending.
	f.holdAcks.Store(true)
	pendingCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	added := make(chan error, 1)
	go func() { added <- leader.AddLearner(pendingCtx, 5, nil) }()
	var pending uint64
	waitFor(t, "the pending configuration change appended", func() bool {
		last, _ := leader.storage.LastIndex()
		pending = last
		return last > leader.Status().Commit
	})
	// The learner catches up to it, then dies.
	f.muted.Store(false)
	waitFor(t, "the learner's log to reach the pending change", func() bool {
		return leader.Status().Progress[4] >= pending
	})
	f.muted.Store(true)
	f.waitTicks(t, 5)

	f.holdAcks.Store(false)
	if err := <-added; err != nil {
		t.Fatalf("AddLearner(5): %v", err)
	}
	if st := leader.Status(); st.Leader != f.leader || st.Progress[4] < st.Commit {
		t.Skipf("the leader changed, or the commit index moved past the learner (%+v): the case is not set up", st)
	}
	f.waitTicks(t, 5)
	// Anything committed from now on follows a promotion proposed at
	// those ticks.
	if _, err := leader.Propose(ctx, []byte("after")); err != nil {
		t.Fatalf("the cluster stopped committing: %v", err)
	}
	if voters := peerIDs(leader.Members(), false); slices.Contains(voters, 4) {
		t.Fatalf("the silent learner 4 was promoted: voters %v", voters)
	}
	if learners := peerIDs(leader.Members(), true); !slices.Equal(learners, []uint64{4, 5}) {
		t.Fatalf("learners %v, want [4 5]", learners)
	}
}

// TestPromotionNeedsAnsweringQuorum: a learner is promoted only when the
// voters heard from within the window, this node among them, and the
// learner make a quorum of the grown voter set.
func TestPromotionNeedsAnsweringQuorum(t *testing.T) {
	for _, tc := range []struct {
		voters []uint64
		heard  []uint64 // heard from at the current tick; the others long ago
		want   bool
	}{
		{voters: []uint64{1}, want: true},                                  // 2 of 2
		{voters: []uint64{1, 2, 3}, heard: []uint64{2}, want: true},        // 3 of 4: quorum 3
		{voters: []uint64{1, 2, 3}, want: false},                           // 2 of 4
		{voters: []uint64{1, 2, 3, 4, 5}, heard: []uint64{2}, want: false}, // 3 of 6: quorum 4
		{voters: []uint64{1, 2, 3, 4, 5}, heard: []uint64{2, 3}, want: true},
	} {
		live := newLiveness(2)
		for _, id := range tc.voters[1:] {
			live.note(id) // at tick 0
		}
		for range 10 {
			live.tick()
		}
		for _, id := range tc.heard {
			live.note(id)
		}
		m := &membership{self: 1, voters: tc.voters}
		if got := m.quorumAnswersWith(&live); got != tc.want {
			t.Errorf("voters %v, heard %v: promotion allowed = %v, want %v", tc.voters, tc.heard, got, tc.want)
		}
	}
	live := newLiveness(2)
	live.note(7)
	live.tick()
	live.tick()
	if !live.answering(7) {
		t.Error("a peer heard 2 ticks ago (window 2) is not answering")
	}
	live.tick()
	if live.answering(7) || live.answering(8) {
		t.Error("a peer heard 3 ticks ago, or never, is answering")
	}
}
