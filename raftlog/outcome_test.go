package raftlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// fakeLoopNode is a Node without raft: the test plays the loop, taking
// proposals from propc and finishing them as raft would, so that every
// way an attempt can end is reached in a known order. Only what
// proposeWait and attempt touch is set.
type fakeLoopNode struct {
	*Node
	leader uint64
}

// newFakeLoopNode returns a node whose published status names leader
// (0: none), with a proposal queue of capacity queue.
func newFakeLoopNode(t *testing.T, leader uint64, queue int) *fakeLoopNode {
	t.Helper()
	n := &Node{
		cfg: Config{TickInterval: testTick}, id: 1, boot: 1,
		propc: make(chan *proposal, queue), donec: make(chan struct{}),
		pub: &published{readyc: make(chan struct{})}, waits: newWaiters(),
	}
	n.pub.watch.Store(&leaderWatch{ch: make(chan struct{})})
	n.pub.status.Store(&Status{ID: 1, Leader: leader})
	n.pub.members.Store(&[]Peer{{ID: 1}, {ID: 2}, {ID: 3}})
	return &fakeLoopNode{Node: n, leader: leader}
}

// setLeader publishes another leader, as the loop does.
func (f *fakeLoopNode) setLeader(leader uint64) {
	f.pub.status.Store(&Status{ID: 1, Leader: leader})
	old := f.pub.watch.Swap(&leaderWatch{ch: make(chan struct{})})
	close(old.ch)
}

// stop fails the waiters and closes donec, as the loop's exit does.
func (f *fakeLoopNode) stop() {
	f.waits.stop(nil)
	close(f.donec)
}

// take receives the next proposal, as the loop would, and marks it taken
// by raft (appended or forwarded) when taken is set.
func (f *fakeLoopNode) take(t *testing.T, taken bool) *proposal {
	t.Helper()
	select {
	case p := <-f.propc:
		if taken {
			p.taken.Store(true)
		}
		return p
	case <-time.After(waitTimeout):
		t.Fatal("no proposal reached the loop")
		return nil
	}
}

// proposeAsync runs Propose (or the conf change conf) with ctx and
// returns where its error will come.
func (f *fakeLoopNode) proposeAsync(ctx context.Context, conf *confRequest) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := f.proposeWait(ctx, []byte("x"), conf)
		errc <- err
	}()
	return errc
}

func waitErr(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(waitTimeout):
		t.Fatal("the proposal did not end")
		return nil
	}
}

// TestProposeSaysWhetherTheEntryMayBeInTheLog walks every way a Propose
// attempt ends and checks that the error matches ErrOutcomeUnknown exactly
// when raft may have the entry: after raft took it (appended on a leader or
// forwarded from a follower) or while it waits in the loop's queue (the
// loop proposes it later), never when raft dropped every attempt, nothing
// reached the loop, or the loop refused it.
func TestProposeSaysWhetherTheEntryMayBeInTheLog(t *testing.T) {
	errGate := errors.New("append gate closed")
	cases := []struct {
		name    string
		leader  uint64
		queue   int
		run     func(t *testing.T, f *fakeLoopNode, cancel context.CancelFunc)
		unknown bool
		want    []error // also matched
	}{
		{name: "no leader until the deadline", leader: 0, queue: 1, unknown: false,
			run:  func(*testing.T, *fakeLoopNode, context.CancelFunc) {},
			want: []error{ErrNoLeader, context.DeadlineExceeded}},
		// The queue has no room: after three drops the next attempt waits
		// to reach the loop until the deadline.
		{name: "dropped by raft at every attempt", leader: 2, queue: 0, unknown: false,
			run: func(t *testing.T, f *fakeLoopNode, _ context.CancelFunc) {
				for range 3 {
					p := f.take(t, false)
					f.waits.finish(p.seq, proposalResult{proposeErr: raft.ErrProposalDropped})
				}
			},
			want: []error{context.DeadlineExceeded}},
		{name: "refused by the loop before raft", leader: 1, queue: 1, unknown: false,
			run: func(t *testing.T, f *fakeLoopNode, _ context.CancelFunc) {
				p := f.take(t, false)
				f.waits.finish(p.seq, proposalResult{proposeErr: errGate})
			},
			want: []error{errGate}},
		{name: "the queue full until the deadline", leader: 1, queue: 0, unknown: false,
			run:  func(*testing.T, *fakeLoopNode, context.CancelFunc) {},
			want: []error{context.DeadlineExceeded}},
		{name: "queued for the loop at the deadline", leader: 1, queue: 1, unknown: true,
			run:  func(*testing.T, *fakeLoopNode, context.CancelFunc) {},
			want: []error{context.DeadlineExceeded}},
		{name: "appended on the leader, deadline", leader: 1, queue: 1, unknown: true,
			run:  func(t *testing.T, f *fakeLoopNode, _ context.CancelFunc) { f.take(t, true) },
			want: []error{context.DeadlineExceeded}},
		{name: "forwarded, then the leader changed", leader: 2, queue: 1, unknown: true,
			run: func(t *testing.T, f *fakeLoopNode, _ context.CancelFunc) {
				f.take(t, true)
				f.setLeader(3)
			},
			want: []error{ErrLeaderChanged}},
		{name: "dropped once, then forwarded and canceled", leader: 2, queue: 1, unknown: true,
			run: func(t *testing.T, f *fakeLoopNode, cancel context.CancelFunc) {
				p := f.take(t, false)
				f.waits.finish(p.seq, proposalResult{proposeErr: raft.ErrProposalDropped})
				f.take(t, true)
				cancel()
			},
			want: []error{context.Canceled}},
		{name: "stopped while queued", leader: 1, queue: 1, unknown: false,
			run: func(t *testing.T, f *fakeLoopNode, _ context.CancelFunc) {
				waitFor(t, "the proposal registered", func() bool { return len(f.propc) == 1 })
				f.stop()
			},
			want: []error{ErrStopped}},
		{name: "stopped after raft took it", leader: 1, queue: 1, unknown: true,
			run: func(t *testing.T, f *fakeLoopNode, _ context.CancelFunc) {
				f.take(t, true)
				f.stop()
			},
			want: []error{ErrStopped}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLoopNode(t, tc.leader, tc.queue)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			errc := f.proposeAsync(ctx, nil)
			tc.run(t, f, cancel)
			err := waitErr(t, errc)
			if err == nil {
				t.Fatal("Propose succeeded")
			}
			if got := errors.Is(err, ErrOutcomeUnknown); got != tc.unknown {
				t.Errorf("err = %v: matches ErrOutcomeUnknown %v, want %v", err, got, tc.unknown)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("err = %v, want it to match %v", err, w)
				}
			}
		})
	}
}

// TestConfChangeRemembersAnEarlierAttempt: a conf change proposed once
// (raft took it, its wait ran out) and then stuck without a leader ends
// with ErrNoLeader and ErrOutcomeUnknown: the first attempt may still
// commit although the last one never reached the loop.
func TestConfChangeRemembersAnEarlierAttempt(t *testing.T) {
	f := newFakeLoopNode(t, 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	conf := &confRequest{typ: raftpb.ConfChangeAddLearnerNode, id: 4, retryEvery: 20 * time.Millisecond,
		holds: func(ms []Peer) bool { return len(ms) == 4 }}
	errc := f.proposeAsync(ctx, conf)
	f.take(t, true)
	// A conf change does not give up at a leader change: the attempt's
	// wait runs out, and the next one finds no leader.
	f.setLeader(0)
	err := waitErr(t, errc)
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrNoLeader) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown, ErrNoLeader and DeadlineExceeded", err)
	}
}

// TestProposeOnALeaderWithoutQuorum: on a real cluster whose leader lost
// both followers, a Propose the leader appended ends with
// ErrOutcomeUnknown (its deadline passed, or the leader stepped down); a
// Propose on a member that knows no leader ends without it.
func TestProposeOnALeaderWithoutQuorum(t *testing.T) {
	c := startCluster(t, 1, 2, 3)
	all := []uint64{1, 2, 3}
	leader := c.waitLeader(all...)
	for _, id := range without(all, leader) {
		c.net.isolate(id, true)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.nodes[leader].Propose(ctx, []byte("stuck"))
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("Propose on a leader without quorum: %v, want ErrOutcomeUnknown", err)
	}
	follower := without(all, leader)[0]
	waitFor(t, "the isolated follower to lose its leader", func() bool { return c.nodes[follower].Status().Leader == 0 })
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = c.nodes[follower].Propose(short, []byte("never"))
	if !errors.Is(err, ErrNoLeader) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("Propose without a known leader: %v, want ErrNoLeader and not ErrOutcomeUnknown", err)
	}
}

// dropProposals is a Sender that passes every message to next except the
// proposals a follower forwards to its leader.
type dropProposals struct{ next Sender }

func (d dropProposals) Send(msgs []*raftpb.Message) {
	kept := msgs[:0:0]
	for _, m := range msgs {
		if m.GetType() != raftpb.MsgProp {
			kept = append(kept, m)
		}
	}
	d.next.Send(kept)
}

// TestForwardedProposalLostOnTheWay: a follower forwards its proposal to a
// leader that never gets it (the message is lost); the leader stays, so
// the Propose waits out its deadline, and its error matches
// ErrOutcomeUnknown: the follower cannot know the proposal was lost.
func TestForwardedProposalLostOnTheWay(t *testing.T) {
	c := startClusterWith(t, func(_ uint64, cfg *Config, _ *recorder) {
		cfg.Transport = dropProposals{next: cfg.Transport}
	}, 1, 2, 3)
	all := []uint64{1, 2, 3}
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.nodes[follower].Propose(ctx, []byte("lost"))
	if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Propose of a lost forwarded proposal: %v, want ErrOutcomeUnknown and DeadlineExceeded", err)
	}
	if _, err := c.nodes[leader].Propose(testContext(t), []byte("direct")); err != nil {
		t.Fatalf("Propose on the leader: %v", err)
	}
}
