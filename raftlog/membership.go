package raftlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// errConfChangePending is the loop's answer to a conf change proposed on
// the leader while an earlier one is not applied yet; the caller retries.
var errConfChangePending = errors.New("raftlog: a configuration change is pending")

// AddLearner adds member id, with its opaque context (name, address), as a
// learner: it receives the log but does not vote. It returns once the
// change is applied on this node. The leader promotes the learner to a
// voter on its own once it has caught up (Members and OnConfChange show
// it). Adding an id that is already a member does nothing and returns nil.
//
// Without a leader it waits for one until ctx ends, then returns an error
// wrapping ErrNoLeader and ctx.Err(). The change may still be applied after
// ctx ends.
func (n *Node) AddLearner(ctx context.Context, id uint64, context []byte) error {
	if id == 0 {
		return errors.New("raftlog: add learner: id must be non-zero")
	}
	err := n.changeConf(ctx, raftpb.ConfChangeAddLearnerNode, id, context, func(ms []Peer) bool {
		return slices.ContainsFunc(ms, func(m Peer) bool { return m.ID == id })
	})
	if err != nil {
		return fmt.Errorf("raftlog: add learner %d: %w", id, err)
	}
	return nil
}

// RemoveMember removes member id (voter or learner) and returns once the
// removal is applied on this node. Removing the leader works: it steps
// down when it applies its removal and the others elect a new leader. A
// node that applies its own removal stops (Err returns ErrRemoved; Done is
// closed). Removing an id that is not a member does nothing and returns
// nil; removing the only voter is refused with ErrConfChangeRefused.
//
// Errors on ctx and without a leader are as for AddLearner.
func (n *Node) RemoveMember(ctx context.Context, id uint64) error {
	if id == 0 {
		return errors.New("raftlog: remove member: id must be non-zero")
	}
	ms := n.Members()
	if i := slices.IndexFunc(ms, func(m Peer) bool { return m.ID == id }); i >= 0 && !ms[i].Learner {
		voters := 0
		for _, m := range ms {
			if !m.Learner {
				voters++
			}
		}
		if voters == 1 {
			return fmt.Errorf("raftlog: remove member %d: %w: it is the only voter", id, ErrConfChangeRefused)
		}
	}
	err := n.changeConf(ctx, raftpb.ConfChangeRemoveNode, id, nil, func(ms []Peer) bool {
		return !slices.ContainsFunc(ms, func(m Peer) bool { return m.ID == id })
	})
	if err != nil && !(id == n.id && errors.Is(err, ErrRemoved)) {
		return fmt.Errorf("raftlog: remove member %d: %w", id, err)
	}
	return nil
}

// changeConf proposes a single conf change and waits until this node has
// applied it. Raft may lose a conf change without telling anyone (a leader
// change, or a leader replacing it by an empty entry because another is
// pending), so the wait is bounded by a retry interval after which done
// decides on the applied membership whether the change already holds;
// otherwise it is proposed again.
func (n *Node) changeConf(ctx context.Context, typ raftpb.ConfChangeType, id uint64, context []byte, done func([]Peer) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	retryEvery := 2 * time.Duration(n.cfg.ElectionTicks) * n.cfg.TickInterval
	retry := time.NewTimer(retryEvery)
	defer retry.Stop()
	for {
		if done(n.Members()) {
			return nil
		}
		watch := n.watch.Load()
		if n.status.Load().Leader == 0 {
			select {
			case <-watch.ch:
				continue
			case <-ctx.Done():
				return fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
			case <-n.donec:
				return n.stopError()
			}
		}
		p := &proposal{seq: n.seq.Add(1), done: make(chan proposalResult, 1)}
		p.cc = &raftpb.ConfChange{
			Type:    typ.Enum(),
			NodeId:  new(id),
			Context: encodeProposal(proposalID{node: n.id, boot: n.boot, seq: p.seq}, context),
		}
		if err := n.register(p); err != nil {
			return err
		}
		select {
		case n.propc <- p:
		case <-ctx.Done():
			n.unregister(p.seq)
			return ctx.Err()
		case <-n.donec:
			n.unregister(p.seq)
			return n.stopError()
		}
		retry.Reset(retryEvery)
		var r proposalResult
		select {
		case r = <-p.done:
		case <-retry.C:
			n.unregister(p.seq)
			continue
		case <-ctx.Done():
			n.unregister(p.seq)
			return ctx.Err()
		}
		if r.proposeErr == nil {
			return r.Err
		}
		if errors.Is(r.proposeErr, ErrRemoved) {
			// This node applied a removal of itself while waiting.
			if done(n.Members()) {
				return nil
			}
			return r.proposeErr
		}
		if !errors.Is(r.proposeErr, raft.ErrProposalDropped) && !errors.Is(r.proposeErr, errConfChangePending) {
			return r.proposeErr
		}
		retry.Reset(n.cfg.TickInterval)
		select {
		case <-watch.ch:
		case <-retry.C:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
		case <-n.donec:
			return n.stopError()
		}
	}
}

// ReportUnreachable tells raft that the last send to member id failed, so
// it stops pipelining appends to it and probes instead (LocalNode). It
// never blocks; a report the node's goroutine has no room for is dropped
// (the next failure reports again).
func (n *Node) ReportUnreachable(id uint64) {
	select {
	case n.reportc <- report{id: id}:
	default:
	}
}

// ReportSnapshot tells raft how sending a snapshot to member id ended
// (LocalNode); raft sends the peer nothing more until it knows. It blocks
// until the node's goroutine has room or has stopped, so it must not be
// called from that goroutine (Sender.Send).
func (n *Node) ReportSnapshot(id uint64, status raft.SnapshotStatus) {
	select {
	case n.reportc <- report{id: id, snapshot: true, status: status}:
	case <-n.donec:
	}
}
