package raftlog

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// proposal is one attempt of a Propose or changeConf call, handed to the
// loop on propc and registered with the waiters until its result comes.
type proposal struct {
	seq  uint64
	data []byte
	cc   *raftpb.ConfChange  // proposed instead of data when set
	done chan proposalResult // capacity 1; receives exactly one value
	// taken is set by the loop once raft took the proposal (appended it,
	// or forwarded it to the leader): from then on it may be in the log.
	// A proposal still queued on propc when the loop exits never is.
	taken atomic.Bool
}

type proposalResult struct {
	Result
	// proposeErr is set when the proposal never reached the log's result:
	// raft refused it, or the node stopped.
	proposeErr error
}

// confRequest is what changeConf proposes, and how its wait differs from
// Propose's.
type confRequest struct {
	typ     raftpb.ConfChangeType
	id      uint64
	context []byte
	// holds reports, on the applied membership, whether the change is in
	// effect: raft may lose a conf change without telling anyone.
	holds func([]Peer) bool
	// retryEvery bounds the wait for a proposed change before holds
	// decides and it is proposed again.
	retryEvery time.Duration
}

// Propose appends data to the log and waits until this entry is applied,
// returning the Applier's Result for it: Value, or Err as the error.
//
// Without a leader it waits for one until ctx ends and then returns an error
// wrapping both ErrNoLeader and ctx.Err(). When ctx ends otherwise the error
// wraps ctx.Err(). After Stop it returns ErrStopped. When the leader changes
// before the entry applies it returns ErrLeaderChanged: the entry may be lost
// or may still commit, so only a proposal that is safe to apply twice may be
// retried. An error that matches ErrOutcomeUnknown says the entry may still
// commit and apply after Propose returned (raft took it); any other error
// says it is not in the log and never will be.
//
// Propose allocates the proposal, its channel and one copy of data with a
// small header.
func (n *Node) Propose(ctx context.Context, data []byte) (any, error) {
	return n.proposeWait(ctx, data, nil)
}

// tries is what the attempts of one proposeWait share.
type tries struct {
	// retry is the timer of the wait between attempts (and of a conf
	// change's wait for its result), made once.
	retry *time.Timer
	// entered is set once an attempt ended while its entry may be in the
	// log: only a conf change, proposed again after conf.retryEvery, goes
	// on to other attempts after one.
	entered bool
}

// unknownIf returns err, made to match ErrOutcomeUnknown as well when
// entered says the entry may be in the log.
func unknownIf(entered bool, err error) error {
	if !entered {
		return err
	}
	return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
}

// proposeWait proposes data, or the conf change of conf when it is not
// nil, and waits for the result, for Propose and changeConf. Each attempt
// waits for a leader first (until ctx ends: ErrNoLeader), registers a
// proposal, hands it to the loop and waits for its result; an attempt
// raft dropped (not in the log, so safe to repeat) is retried at the next
// leader change or tick.
//
// The two differ in what ends the wait for a result. Propose gives up at a
// leader change (ErrLeaderChanged: a forwarded proposal may be lost
// silently); changeConf instead proposes again after conf.retryEvery,
// unless conf.holds says the change is in effect, and takes a pending
// conf change for a reason to retry. Propose wraps ctx's error with
// "raftlog: propose"; changeConf's caller wraps it. Either error matches
// ErrOutcomeUnknown once an attempt may have put the entry in the log.
func (n *Node) proposeWait(ctx context.Context, data []byte, conf *confRequest) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, conf.ctxError(err)
	}
	t := &tries{}
	defer func() {
		if t.retry != nil {
			t.retry.Stop()
		}
	}()
	for {
		if conf != nil && conf.holds(n.Members()) {
			return nil, nil
		}
		// Load the watch before the status so a leader change between the
		// two cannot be missed.
		watch := n.pub.watch.Load()
		if n.pub.status.Load().Leader == 0 {
			select {
			case <-watch.ch:
				continue
			case <-ctx.Done():
				return nil, unknownIf(t.entered, fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err()))
			case <-n.donec:
				return nil, unknownIf(t.entered, n.waits.stopError())
			}
		}
		r, again, err := n.attempt(ctx, data, conf, watch, t)
		if err != nil || !again {
			return r.Value, err
		}
		if r.proposeErr == nil {
			continue // conf's wait ran out: does the change hold?
		}
		// Raft dropped it (no leader inside raft yet, or a leadership
		// transfer): it is not in the log, so trying again is safe. Wait
		// for a leader change, or a tick for causes that end without one.
		t.retry = resetTimer(t.retry, n.cfg.TickInterval)
		select {
		case <-watch.ch:
		case <-t.retry.C:
		case <-ctx.Done():
			return nil, unknownIf(t.entered, fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err()))
		case <-n.donec:
			return nil, unknownIf(t.entered, n.waits.stopError())
		}
	}
}

// attempt is one try of proposeWait, with watch the leader watch loaded
// while a leader was known: it proposes once and waits for the result.
// again reports that proposeWait tries again, after a tick when
// r.proposeErr says raft dropped the proposal (or a conf change was
// pending), at once when conf's wait ran out (t.entered is then set);
// otherwise r and err are the call's result. An error after the loop got
// the proposal matches ErrOutcomeUnknown unless raft refused it.
func (n *Node) attempt(ctx context.Context, data []byte, conf *confRequest, watch *leaderWatch, t *tries) (r proposalResult, again bool, err error) {
	p := &proposal{seq: n.seq.Add(1), done: make(chan proposalResult, 1)}
	id := proposalID{node: n.id, boot: n.boot, seq: p.seq}
	// A Propose gives up when the leader changes; a conf change is
	// retried after its own timeout instead.
	leaderChanged, timeout := watch.ch, (<-chan time.Time)(nil)
	if conf == nil {
		p.data = encodeProposal(id, data)
	} else {
		p.cc = &raftpb.ConfChange{Type: conf.typ.Enum(), NodeId: new(conf.id), Context: encodeProposal(id, conf.context)}
		leaderChanged = nil
	}
	if err := n.waits.register(p); err != nil {
		return r, false, unknownIf(t.entered, err)
	}
	select {
	case n.propc <- p:
	case <-ctx.Done():
		n.waits.unregister(p.seq)
		return r, false, unknownIf(t.entered, conf.ctxError(ctx.Err()))
	case <-n.donec:
		n.waits.unregister(p.seq)
		return r, false, unknownIf(t.entered, n.waits.stopError())
	}
	// From here on the loop proposes p unless it exits first: p may end up
	// in the log even if this call gives up.
	if conf != nil {
		t.retry = resetTimer(t.retry, conf.retryEvery)
		timeout = t.retry.C
	}
	select {
	case r = <-p.done:
	case <-timeout:
		n.waits.unregister(p.seq)
		t.entered = true
		return r, true, nil
	case <-leaderChanged:
		// A new leader: a proposal forwarded to the old one may be lost.
		select {
		case r = <-p.done:
		default:
			n.waits.unregister(p.seq)
			return r, false, unknownOutcome{ErrLeaderChanged}
		}
	case <-ctx.Done():
		n.waits.unregister(p.seq)
		return r, false, unknownIf(true, conf.ctxError(ctx.Err()))
	}
	return attemptResult(p, r, conf, t, n.Members)
}

// attemptResult is attempt's answer once the loop finished p with r;
// members is the node's Members.
func attemptResult(p *proposal, r proposalResult, conf *confRequest, t *tries, members func() []Peer) (proposalResult, bool, error) {
	switch {
	case r.proposeErr == nil:
		return r, false, r.Err
	case conf != nil && errors.Is(r.proposeErr, ErrRemoved):
		// This node applied a removal of itself while waiting.
		if conf.holds(members()) {
			return proposalResult{}, false, nil
		}
		return r, false, r.proposeErr
	case errors.Is(r.proposeErr, raft.ErrProposalDropped), errors.Is(r.proposeErr, errConfChangePending):
		return r, true, nil
	}
	// The node stopped (or refused the proposal before raft saw it, as
	// the append gate does): in the log only if raft took it first.
	return r, false, unknownIf(t.entered || p.taken.Load(), r.proposeErr)
}

// unknownOutcome is an error of a proposal that may be in the log whose
// message already says so: it reads as err and matches ErrOutcomeUnknown
// besides what err matches.
type unknownOutcome struct{ err error }

func (e unknownOutcome) Error() string   { return e.err.Error() }
func (e unknownOutcome) Unwrap() []error { return []error{e.err, ErrOutcomeUnknown} }

// ctxError is the error of a proposeWait whose ctx ended while a leader
// was known: Propose's says so, changeConf's caller wraps it.
func (c *confRequest) ctxError(err error) error {
	if c == nil {
		return fmt.Errorf("raftlog: propose: %w", err)
	}
	return err
}

// resetTimer makes t, or a new timer if t is nil, fire after d.
func resetTimer(t *time.Timer, d time.Duration) *time.Timer {
	if t == nil {
		return time.NewTimer(d)
	}
	t.Reset(d)
	return t
}
