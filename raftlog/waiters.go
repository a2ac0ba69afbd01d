package raftlog

import (
	"fmt"
	"sync"

	"go.etcd.io/raft/v3"
)

// waiters is the registry of the calls waiting for the node's goroutine:
// the proposals (Propose, changeConf) by sequence number and the reads
// (ReadIndex) by request context. Callers register and unregister; the
// loop finishes them, or fails them all when it exits, after which nothing
// registers any more. Its methods are safe for concurrent use.
type waiters struct {
	mu        sync.Mutex // guards proposals, reads, stopped and err
	proposals map[uint64]*proposal
	reads     map[string]*readRequest
	stopped   bool
	err       error // why the loop exited on its own, nil after Stop
}

func newWaiters() *waiters {
	return &waiters{proposals: make(map[uint64]*proposal), reads: make(map[string]*readRequest)}
}

// register adds p, unless the loop has exited (its stop error).
func (w *waiters) register(p *proposal) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return w.stopErrorLocked()
	}
	w.proposals[p.seq] = p
	return nil
}

// unregister removes the proposal seq, if still there.
func (w *waiters) unregister(seq uint64) {
	w.mu.Lock()
	delete(w.proposals, seq)
	w.mu.Unlock()
}

// finish hands r to the waiter for seq, if it is still waiting.
func (w *waiters) finish(seq uint64, r proposalResult) {
	w.mu.Lock()
	p, ok := w.proposals[seq]
	delete(w.proposals, seq)
	w.mu.Unlock()
	if ok {
		p.done <- r
	}
}

// finishApplied hands each of results to the waiter of the entry at the
// same position in ids, if it was proposed by this boot of node and is
// still waiting: one lock for a whole apply batch.
func (w *waiters) finishApplied(ids []proposalID, results []Result, node, boot uint64) {
	w.mu.Lock()
	for i, id := range ids {
		if id.node != node || id.boot != boot {
			continue
		}
		if p, ok := w.proposals[id.seq]; ok {
			delete(w.proposals, id.seq)
			p.done <- proposalResult{Result: results[i]}
		}
	}
	w.mu.Unlock()
}

// addRead registers req under its key, unless the loop has exited (its
// stop error).
func (w *waiters) addRead(req *readRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return w.stopErrorLocked()
	}
	w.reads[string(req.key)] = req
	return nil
}

// removeRead removes the read of key, if still there.
func (w *waiters) removeRead(key []byte) {
	w.mu.Lock()
	delete(w.reads, string(key))
	w.mu.Unlock()
}

// confirmReads takes the reads of the read states raft produced out of the
// registry, marks them confirmed at the state's index and appends them to
// pending.
func (w *waiters) confirmReads(states []raft.ReadState, pending pendingReads) pendingReads {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rs := range states {
		req, ok := w.reads[string(rs.RequestCtx)]
		if !ok {
			continue // its caller gave up, or a duplicate answer
		}
		delete(w.reads, string(rs.RequestCtx))
		req.index = rs.Index
		req.confirmed.Store(true)
		pending = append(pending, req)
	}
	return pending
}

// stop marks the loop exited because of cause (nil for Stop), fails every
// registered proposal and read, and returns the error they got.
func (w *waiters) stop(cause error) error {
	w.mu.Lock()
	w.stopped = true
	w.err = cause
	errStop := w.stopErrorLocked()
	proposals, reads := w.proposals, w.reads
	w.proposals, w.reads = nil, nil
	w.mu.Unlock()
	for _, p := range proposals {
		p.done <- proposalResult{proposeErr: errStop}
	}
	for _, r := range reads {
		r.done <- readResult{err: errStop}
	}
	return errStop
}

// stopError is what a call gets once the loop has exited: ErrStopped,
// wrapping the cause if the loop stopped on its own.
func (w *waiters) stopError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopErrorLocked()
}

func (w *waiters) stopErrorLocked() error {
	if w.err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, w.err)
	}
	return ErrStopped
}

// cause is why the loop exited on its own, nil while it runs or after
// Stop.
func (w *waiters) cause() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
