package raftlog

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/raft/v3/raftpb"
)

func msgApp(to, term, commit uint64, entries int) *raftpb.Message {
	m := &raftpb.Message{Type: raftpb.MsgApp.Enum(), To: new(to), Term: new(term), Commit: new(commit)}
	for i := range entries {
		m.Entries = append(m.Entries, &raftpb.Entry{Index: new(commit + uint64(i) + 1)})
	}
	return m
}

// describe names each message by type, peer and commit index.
func describe(msgs []*raftpb.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.GetType().String()+" to "+string(rune('0'+m.GetTo()))+" commit "+string(rune('0'+m.GetCommit())))
	}
	return out
}

func TestCommitUpdatesHoldEntrylessAppends(t *testing.T) {
	c := newCommitUpdates(0)
	defer c.stop()
	hb := &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), To: new(uint64(2)), Term: new(uint64(1))}
	in := []*raftpb.Message{msgApp(2, 1, 5, 1), msgApp(3, 1, 5, 0), hb, msgApp(2, 1, 6, 0)}
	orig := append([]*raftpb.Message(nil), in...)
	got := c.filter(in)
	if diff := cmp.Diff(describe([]*raftpb.Message{in[0], hb}), describe(got)); diff != "" {
		t.Errorf("sent now (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(describe(orig), describe(in)); diff != "" {
		t.Errorf("filter modified its argument (-want +got):\n%s", diff)
	}
	if !c.armed {
		t.Fatal("updates held but no timer armed")
	}
	// A newer update for peer 3 replaces the held one; an append with
	// entries and a commit index as new drops peer 2's.
	got = c.filter([]*raftpb.Message{msgApp(3, 1, 7, 0), msgApp(2, 1, 7, 2)})
	if diff := cmp.Diff([]string{"MsgApp to 2 commit 7"}, describe(got)); diff != "" {
		t.Errorf("sent now (-want +got):\n%s", diff)
	}
	<-c.timer.C
	if diff := cmp.Diff([]string{"MsgApp to 3 commit 7"}, describe(c.take())); diff != "" {
		t.Errorf("sent when the timer fired (-want +got):\n%s", diff)
	}
	if c.armed || len(c.held) != 0 {
		t.Errorf("after take: armed %v, %d held; want nothing", c.armed, len(c.held))
	}
}

// TestCommitUpdatesDisarmWhenAllReplaced: once appends with entries have
// replaced every held update, the timer is stopped, so the node's
// goroutine is not woken for nothing (with one DDL after another, the
// next DDL's append replaces the update every time).
func TestCommitUpdatesDisarmWhenAllReplaced(t *testing.T) {
	c := newCommitUpdates(time.Millisecond)
	defer c.stop()
	for commit := uint64(1); commit <= 3; commit++ {
		if got := c.filter([]*raftpb.Message{msgApp(2, 1, commit, 0), msgApp(3, 1, commit, 0)}); len(got) != 0 {
			t.Fatalf("commit %d: sent %v, want both held", commit, describe(got))
		}
		if !c.armed {
			t.Fatalf("commit %d: updates held but no timer armed", commit)
		}
		got := c.filter([]*raftpb.Message{msgApp(2, 1, commit, 1), msgApp(3, 1, commit, 1)})
		if len(got) != 2 || len(c.held) != 0 {
			t.Fatalf("commit %d: sent %v with %d held, want both appends sent and nothing held", commit, describe(got), len(c.held))
		}
		if c.armed {
			t.Fatalf("commit %d: nothing held, but the timer is still armed", commit)
		}
	}
	// A stopped timer delivers nothing, however long one waits past its
	// delay: the node's select would not wake.
	stale := time.NewTimer(20 * time.Millisecond)
	defer stale.Stop()
	select {
	case <-c.timer.C:
		t.Fatal("the timer fired after it was disarmed")
	case <-stale.C:
	}
}

func TestCommitUpdatesAppendWithOlderCommitKeepsHeld(t *testing.T) {
	c := newCommitUpdates(0)
	defer c.stop()
	c.filter([]*raftpb.Message{msgApp(2, 1, 8, 0)})
	// Same peer, entries but an older commit index (or another term):
	// the held update still says something new.
	c.filter([]*raftpb.Message{msgApp(2, 1, 7, 1), msgApp(2, 2, 9, 1)})
	if got := describe(c.take()); len(got) != 1 || got[0] != "MsgApp to 2 commit 8" {
		t.Errorf("held %v, want the commit 8 update", got)
	}
}

func TestCommitUpdatesNotHeldForForwardingFollower(t *testing.T) {
	c := newCommitUpdates(0)
	defer c.stop()
	// Follower 2 forwarded a proposal that became entry 6: updates to it
	// go out at once until one reaches 6.
	c.forwarded(2)
	c.appended(6)
	if got := c.filter([]*raftpb.Message{msgApp(2, 1, 5, 0), msgApp(3, 1, 5, 0)}); len(got) != 1 || got[0].GetTo() != 2 {
		t.Errorf("sent %v, want the update to the forwarding follower 2 only", describe(got))
	}
	if got := c.filter([]*raftpb.Message{msgApp(2, 1, 6, 0)}); len(got) != 1 {
		t.Errorf("sent %v, want the update reaching 6", describe(got))
	}
	if got := c.filter([]*raftpb.Message{msgApp(2, 1, 7, 0)}); len(got) != 0 {
		t.Errorf("sent %v; once its proposals are committed, follower 2's updates are held again", describe(got))
	}
	if _, ok := c.held[3]; !ok {
		t.Error("update to follower 3 not held")
	}
}

// TestCommitUpdatesSaveMessages counts what a leader sends for sequential
// proposals in a 3-member cluster: one append per follower and proposal,
// not two (the entries, then the commit index), plus heartbeats.
func TestCommitUpdatesSaveMessages(t *testing.T) {
	const countTick = 100 * time.Millisecond
	all := []uint64{1, 2, 3}
	c := newGRPCCluster(t)
	ps := c.listenPeers(all...)
	for _, id := range all {
		// Held long enough that every update but the last is replaced,
		// however slowly this machine runs the proposals. Ticks as long
		// as the count below allows for: with the tests' short tick the
		// heartbeats of a slow run would pass the limit.
		c.start(id, func(cfg *Config) {
			cfg.Peers, cfg.commitUpdateDelay, cfg.TickInterval = ps, time.Minute, countTick
		})
	}
	leader := c.waitLeader(all...)
	ctx := testContext(t)
	// Warm up the streams, then count.
	if _, err := c.node(leader).node.Propose(ctx, []byte("warm")); err != nil {
		t.Fatal(err)
	}
	c.waitApplied(1, all...)
	before := c.node(leader).tr.sent.Load()
	start := time.Now()
	const n = 100
	for i := range n {
		if _, err := c.node(leader).node.Propose(ctx, fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	sent := c.node(leader).tr.sent.Load() - before
	// Each tick while this ran (and one either side) adds a
	// heartbeat per follower and, when a follower's answer finds it
	// behind, an append. Without the hold it is 4 per proposal; allow a
	// quarter more than 2 for appends raft sends again.
	ticks := uint64(time.Since(start)/countTick + 2)
	if limit := uint64(2*n+n/4) + 4*ticks; sent > limit {
		t.Errorf("leader sent %d messages for %d sequential proposals, want at most %d (2 per proposal, slack, and 4 for each of %d ticks); commit-index updates are not held", sent, n, limit, ticks)
	}
	t.Logf("leader sent %d messages for %d proposals", sent, n)
}

// sentMsgs records what a loop sends.
type sentMsgs struct{ msgs []*raftpb.Message }

func (s *sentMsgs) Send(msgs []*raftpb.Message) { s.msgs = append(s.msgs, msgs...) }

// TestReleaseCommitUpdatesSendsHeld: the update a leader holds for a
// follower goes out when Node.ReleaseCommitUpdates asks, not a hold
// later; a second release, with nothing held, sends nothing.
func TestReleaseCommitUpdatesSendsHeld(t *testing.T) {
	releasec := make(chan struct{}, 1)
	n := &Node{releasec: releasec}
	sent := &sentMsgs{}
	l := &loop{cfg: &Config{Transport: sent}, id: 1, leader: 1, term: 1, releasec: releasec, snaps: &snapScheduler{},
		commitUpdates: newCommitUpdates(time.Hour)}
	defer l.commitUpdates.stop()
	if got := l.commitUpdates.filter([]*raftpb.Message{msgApp(2, 1, 5, 0)}); len(got) != 0 {
		t.Fatalf("the update was not held: %v", describe(got))
	}
	n.ReleaseCommitUpdates()
	n.ReleaseCommitUpdates() // queued already: the same release
	if stop, err := l.handleNext(nil); stop || err != nil {
		t.Fatalf("handleNext: stop %v, err %v", stop, err)
	}
	if diff := cmp.Diff([]string{"MsgApp to 2 commit 5"}, describe(sent.msgs)); diff != "" {
		t.Errorf("sent on release (-want +got):\n%s", diff)
	}
	n.ReleaseCommitUpdates()
	if _, err := l.handleNext(nil); err != nil || len(sent.msgs) != 1 {
		t.Errorf("a release with nothing held: err %v, %d sent in all, want 1", err, len(sent.msgs))
	}
}
