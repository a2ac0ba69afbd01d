package raftlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// ReadIndex returns a log index such that every write acknowledged (by any
// node) before the call is at or below it, once this node has applied up
// to it: reading the state machine after ReadIndex returns is
// linearizable. It asks the leader (raft forwards from a follower) to
// confirm its leadership with a quorum, then waits until this node's
// applied index reaches the confirmed commit index.
//
// If no quorum confirms a read before ctx ends (no leader, or a minority
// partition) the error wraps ErrNoLeader and ctx.Err(); if ctx ends while
// waiting for the apply, it wraps ctx.Err() only. After Stop it returns
// ErrStopped.
func (n *Node) ReadIndex(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("raftlog: read index: %w", err)
	}
	key := make([]byte, 0, 1+3*binary.MaxVarintLen64)
	key = append(key, 'r')
	key = binary.AppendUvarint(key, n.id)
	key = binary.AppendUvarint(key, n.boot)
	key = binary.AppendUvarint(key, n.seq.Add(1))
	req := &readRequest{key: key, done: make(chan readResult, 1)}
	n.mu.Lock()
	if n.stopped {
		err := n.stopErrorLocked()
		n.mu.Unlock()
		return 0, err
	}
	n.reads[string(key)] = req
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.reads, string(key))
		n.mu.Unlock()
	}()

	// Raft drops a read request silently when there is no leader, or when
	// the leader changes while it is in flight: ask again every election
	// timeout until one is confirmed.
	retryEvery := time.Duration(n.cfg.ElectionTicks) * n.cfg.TickInterval
	retry := time.NewTimer(retryEvery)
	defer retry.Stop()
	for {
		select {
		case n.readc <- req:
		case <-ctx.Done():
			return 0, n.readCtxError(req, ctx)
		case <-n.donec:
			return 0, n.stopError()
		}
		retry.Reset(retryEvery)
	wait:
		for {
			select {
			case r := <-req.done:
				return r.index, r.err
			case <-retry.C:
				if req.confirmed.Load() {
					continue wait
				}
				break wait
			case <-ctx.Done():
				return 0, n.readCtxError(req, ctx)
			case <-n.donec:
				// exit fails every read; prefer its answer if it has one.
				select {
				case r := <-req.done:
					return r.index, r.err
				default:
					return 0, n.stopError()
				}
			}
		}
	}
}

func (n *Node) readCtxError(req *readRequest, ctx context.Context) error {
	if req.confirmed.Load() {
		return fmt.Errorf("raftlog: read index: waiting to apply index %d: %w", req.index, ctx.Err())
	}
	return fmt.Errorf("raftlog: read index: %w: %w", ErrNoLeader, ctx.Err())
}
