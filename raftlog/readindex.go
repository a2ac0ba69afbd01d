package raftlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
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
	if err := n.waits.addRead(req); err != nil {
		return 0, err
	}
	defer n.waits.removeRead(key)

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
			return 0, readCtxError(req, ctx)
		case <-n.donec:
			return 0, n.waits.stopError()
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
				return 0, readCtxError(req, ctx)
			case <-n.donec:
				// exit fails every read; prefer its answer if it has one.
				select {
				case r := <-req.done:
					return r.index, r.err
				default:
					return 0, n.waits.stopError()
				}
			}
		}
	}
}

// readCtxError is ReadIndex's error when ctx ended while it waited for req.
func readCtxError(req *readRequest, ctx context.Context) error {
	if req.confirmed.Load() {
		return fmt.Errorf("raftlog: read index: waiting to apply index %d: %w", req.index, ctx.Err())
	}
	return fmt.Errorf("raftlog: read index: %w: %w", ErrNoLeader, ctx.Err())
}

// readRequest is one ReadIndex call. The loop sends on done at most once,
// after removing the request from the waiters (or from pendingReads).
type readRequest struct {
	key       []byte
	done      chan readResult // capacity 1
	index     uint64          // set by the loop when confirmed
	confirmed atomic.Bool     // a quorum confirmed index; waiting to apply
}

type readResult struct {
	index uint64
	err   error
}

// pendingReads are the reads a quorum confirmed, waiting for their index
// to be applied. They are owned by the node's goroutine.
type pendingReads []*readRequest

// complete answers every read whose index is applied and keeps the others.
func (p *pendingReads) complete(applied uint64) {
	if len(*p) == 0 {
		return
	}
	keep := (*p)[:0]
	for _, req := range *p {
		if req.index <= applied {
			req.done <- readResult{index: req.index}
			continue
		}
		keep = append(keep, req)
	}
	clear((*p)[len(keep):])
	*p = keep
}

// fail answers every read with err and forgets them.
func (p *pendingReads) fail(err error) {
	for _, r := range *p {
		r.done <- readResult{err: err}
	}
	*p = nil
}
