package raftlog

import (
	"context"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// runPeer is the goroutine sending to p: it keeps one log stream open
// (stream.go) and writes whatever is queued, flushing once per batch.
func (t *Transport) runPeer(p *peer) {
	defer t.wg.Done()
	defer func() {
		if err := p.conn.Close(); err != nil {
			t.log.Debug("close peer connection", "peer", memberID(p.id), "err", err)
		}
	}()
	s := &peerSender{t: t, p: p, timer: time.NewTimer(maxBackoff), closing: p.closing}
	defer s.closeStream(false)
	s.timer.Stop()
	defer s.timer.Stop()
	for {
		m, ok := s.next()
		if !ok {
			return
		}
		s.fill(m)
		if !s.flush() {
			return
		}
	}
}

// peerSender is the state of one peer's sending goroutine (runPeer), which
// owns it.
type peerSender struct {
	t      *Transport
	p      *peer
	stream *streamConn // nil until opened, and after a failure
	opened bool        // a stream was opened before: the next is a reconnect
	wait   time.Duration
	// carry is a message taken from the queue that did not fit the last
	// batch; it starts the next.
	carry *raftpb.Message
	batch [][]byte // reused
	timer *time.Timer
	// closing is p.closing until RemovePeer closed it; then nil, and
	// draining is set: what is queued goes out, then the goroutine exits.
	closing  <-chan struct{}
	draining bool
}

// next returns the first message of the next batch, waiting for one; false
// means exit (the queue of a removed peer is drained, or p's context
// ended).
func (s *peerSender) next() (*raftpb.Message, bool) {
	if m := s.carry; m != nil {
		s.carry = nil
		return m, true
	}
	if !s.draining {
		select {
		case m := <-s.p.queue:
			return m, true
		case <-s.closing:
			s.closing, s.draining = nil, true
		case <-s.p.ctx.Done():
			return nil, false
		}
	}
	select {
	case m := <-s.p.queue:
		return m, true
	default:
		s.closeStream(true)
		return nil, false
	}
}

// fill makes the batch of m and what else is queued, up to maxBatchBytes
// (a single larger message goes alone); the first message that does not
// fit is carried to the next batch.
func (s *peerSender) fill(m *raftpb.Message) {
	s.batch = s.batch[:0]
	size := 0
	for m != nil {
		b := marshalMessage(m, s.p.id)
		if len(s.batch) > 0 && size+len(b) > maxBatchBytes {
			s.carry = m
			return
		}
		s.batch = append(s.batch, b)
		size += len(b)
		select {
		case m = <-s.p.queue:
		default:
			m = nil
		}
	}
}

// flush writes the batch to the stream, opening it first if needed. A
// batch that fails is lost (raft retransmits). False means exit.
func (s *peerSender) flush() bool {
	t, p := s.t, s.p
	if d := t.cfg.Faults.DelayFor(p.id); d > 0 && !s.sleep(d) {
		return false
	}
	if s.stream == nil {
		st, err := t.dialStream(p.ctx, p.id, p.addr)
		if err != nil {
			return s.fail("open stream", err)
		}
		s.stream = st
		if s.opened {
			t.reconnects.Add(1)
		}
		s.opened = true
	}
	if err := s.stream.send(s.batch); err != nil {
		return s.fail("send", err)
	}
	t.sent.Add(uint64(len(s.batch)))
	s.wait = 0
	return true
}

// fail counts a failed send, reports the peer unreachable, closes the
// stream and backs off. False means exit: p's context ended, or the peer
// is being drained (a removed peer gets no second try).
func (s *peerSender) fail(what string, err error) bool {
	t, p := s.t, s.p
	t.sendFailures.Add(1)
	if s.draining {
		return false
	}
	if n := t.local(); n != nil {
		n.ReportUnreachable(p.id)
	}
	s.closeStream(false)
	s.wait = min(max(2*s.wait, minBackoff), maxBackoff)
	t.log.Debug("send to peer failed", "peer", memberID(p.id), "addr", p.addr, "op", what, "err", err, "backoff", s.wait)
	return s.sleep(s.wait)
}

// sleep waits for d; false if p's context ended first.
func (s *peerSender) sleep(d time.Duration) bool {
	s.timer.Reset(d)
	select {
	case <-s.timer.C:
		return true
	case <-s.p.ctx.Done():
		return false
	}
}

// closeStream closes the stream, if open; with drain, after the peer has
// read everything sent (at most removeGrace).
func (s *peerSender) closeStream(drain bool) {
	if s.stream != nil {
		ctx, cancel := context.WithTimeout(s.p.ctx, removeGrace)
		s.stream.close(ctx, drain)
		cancel()
		s.stream = nil
	}
}
