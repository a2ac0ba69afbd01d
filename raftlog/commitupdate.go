package raftlog

import (
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// commitUpdateDelay is how long a leader holds an append that carries no
// entries before sending it.
//
// Raft answers every commit with such an append to each follower, only to
// tell it the new commit index. With one DDL after another, the next DDL's
// append follows a fraction of a millisecond later and carries the same
// index, so the update costs each side a write, a read and a wakeup, in
// the moment the leader is answering its client, for nothing. Held this
// long, it is replaced by the next append when one comes, and sent
// otherwise: followers then learn a commit at most this much later (not a
// heartbeat later). Raft is safe with any message delayed or lost.
const commitUpdateDelay = 2 * time.Millisecond

// A follower that forwarded a proposal waits for the commit index to
// reach it before it can apply and answer its client: updates to such a
// follower are not held.
//
// commitUpdates holds, per follower, the newest entry-less append the
// leader has not sent yet. It is owned by the node's goroutine.
type commitUpdates struct {
	held  map[uint64]*raftpb.Message
	delay time.Duration
	timer *time.Timer
	armed bool
	// forwarding are the followers whose proposals the leader stepped
	// since the last appended entries; waiting maps a follower to the
	// index its proposals reach.
	forwarding map[uint64]struct{}
	waiting    map[uint64]uint64
}

// newCommitUpdates holds updates for delay, or commitUpdateDelay if zero.
func newCommitUpdates(delay time.Duration) *commitUpdates {
	if delay <= 0 {
		delay = commitUpdateDelay
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &commitUpdates{held: make(map[uint64]*raftpb.Message), delay: delay, timer: t,
		forwarding: make(map[uint64]struct{}), waiting: make(map[uint64]uint64)}
}

// forwarded notes a proposal forwarded by follower from.
func (c *commitUpdates) forwarded(from uint64) { c.forwarding[from] = struct{}{} }

// appended notes that this leader appended entries up to last: the
// proposals forwarded since the last call are among them (or dropped).
func (c *commitUpdates) appended(last uint64) {
	for id := range c.forwarding {
		c.waiting[id] = max(c.waiting[id], last)
		delete(c.forwarding, id)
	}
}

// filter returns msgs without the entry-less appends, which it holds (a
// newer one replacing an older); an append that carries entries, and with
// them a commit index at least as new, drops what is held for its peer.
// msgs itself is not modified.
func (c *commitUpdates) filter(msgs []*raftpb.Message) []*raftpb.Message {
	out, copied := msgs, false
	for i, m := range msgs {
		if c.hold(m) {
			if !copied {
				out, copied = append(make([]*raftpb.Message, 0, len(msgs)), msgs[:i]...), true
			}
			continue
		}
		if copied {
			out = append(out, m)
		}
	}
	switch {
	case len(c.held) > 0 && !c.armed:
		c.timer.Reset(c.delay)
		c.armed = true
	case len(c.held) == 0 && c.armed:
		// Everything held was replaced by appends: nothing is left for
		// the timer to send, and it would wake the node's goroutine
		// for nothing (with one DDL after another, every other DDL).
		// Since Go 1.23 a stopped timer delivers no stale tick.
		c.timer.Stop()
		c.armed = false
	}
	return out
}

// hold reports whether m is an entry-less append, now held.
func (c *commitUpdates) hold(m *raftpb.Message) bool {
	if m.GetType() != raftpb.MsgApp {
		return false
	}
	if len(m.GetEntries()) == 0 {
		if want, ok := c.waiting[m.GetTo()]; ok {
			if m.GetCommit() >= want {
				delete(c.waiting, m.GetTo())
			}
			delete(c.held, m.GetTo()) // this one is newer
			return false
		}
		c.held[m.GetTo()] = m
		return true
	}
	if held, ok := c.held[m.GetTo()]; ok && held.GetTerm() == m.GetTerm() && held.GetCommit() <= m.GetCommit() {
		delete(c.held, m.GetTo())
	}
	return false
}

// take returns what is held and forgets it; the timer has fired.
func (c *commitUpdates) take() []*raftpb.Message {
	c.armed = false
	if len(c.held) == 0 {
		return nil
	}
	out := make([]*raftpb.Message, 0, len(c.held))
	for id, m := range c.held {
		out = append(out, m)
		delete(c.held, id)
	}
	return out
}

// stop releases the timer.
func (c *commitUpdates) stop() { c.timer.Stop() }
