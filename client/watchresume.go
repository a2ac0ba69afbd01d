package client

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// endedReason is the failure noted for a member that ended a watch with
// OK status (io.EOF), which it does only when it stops serving it.
const endedReason = "the member ended the watch"

// open opens the watch on the next endpoint that takes it, going round
// the endpoints like call does, and makes it the current stream.
func (s *watchStream) open() error {
	for {
		k, err := s.nextEndpoint()
		if err != nil {
			return err
		}
		i := s.route.at(k)
		rpc, err := s.c.rpc(i)
		if err != nil {
			return err
		}
		es := s.newEndpointStream(i)
		stream, err := rpc.Watch(es.ctx, s.request(), s.opts...)
		if err != nil {
			es.cancel()
			if err := s.failed(i, err); err != nil {
				return err
			}
			continue
		}
		es.stream = stream
		s.cur.Store(es)
		s.broken = false
		return nil
	}
}

// errWatchIdle is the cause of the end of an endpoint's stream that sent
// nothing for Config.WatchIdleTimeout.
var errWatchIdle = errors.New("client: watch: idle")

// newEndpointStream starts the context of a watch on endpoint i, which
// ends with errWatchIdle when no message came for WatchIdleTimeout (the
// timer is reset by each message: endpointStream.received).
func (s *watchStream) newEndpointStream(i int) *endpointStream {
	ctx, cancel := context.WithCancelCause(s.ctx)
	idle := time.AfterFunc(s.c.cfg.WatchIdleTimeout, func() { cancel(errWatchIdle) })
	return &endpointStream{ep: i, ctx: ctx, idle: idle, cancel: func() {
		idle.Stop()
		cancel(context.Canceled)
	}}
}

// received restarts the idle timer after a message.
func (es *endpointStream) received(timeout time.Duration) { es.idle.Reset(timeout) }

// reason is err, the error of the endpoint's stream, or, when the stream
// was silent too long, an Unavailable that says so.
func (es *endpointStream) reason(err error, timeout time.Duration) error {
	if errors.Is(context.Cause(es.ctx), errWatchIdle) {
		return status.Errorf(codes.Unavailable, "no message from the member for %v (it sends progress messages while idle): taken for lost", timeout)
	}
	return err
}

// nextEndpoint returns the position in the route of the endpoint to try
// next, skipping those left out, after the pause between two rounds when
// the last round was complete.
func (s *watchStream) nextEndpoint() (int, error) {
	n := s.route.len()
	for {
		if s.tried >= n {
			if err := s.pauseRound(); err != nil {
				return 0, err
			}
		}
		k := s.next
		s.next = (k + 1) % n
		s.tried++
		if !s.fails.isOut(s.route.at(k)) {
			return k, nil
		}
	}
}

// pauseRound waits between two rounds over the endpoints, or returns the
// watch's error when it should stop trying: every endpoint left out, the
// time to keep trying over, or ctx done.
func (s *watchStream) pauseRound() error {
	if s.fails.left == 0 {
		return s.fails.err(s.c.eps)
	}
	wait, last := s.roundPause(), false
	if !s.giveUp.IsZero() {
		if left := time.Until(s.giveUp); left <= wait {
			wait, last = max(left, 0), true
		}
	}
	t := time.NewTimer(wait)
	select {
	case <-s.ctx.Done():
		t.Stop()
		return s.ctx.Err()
	case <-t.C:
	}
	if last {
		return s.fails.err(s.c.eps)
	}
	s.pause = min(2*s.pause, s.retry.maxPause)
	s.tried, s.wait = 0, 0
	return nil
}

// failed notes err, the failure of the watch on endpoint i, and returns
// nil when the watch goes on elsewhere (after telling the OnFailover
// hook), or the error that ends it.
func (s *watchStream) failed(i int, err error) error {
	if ctxErr := s.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, io.EOF) {
		err = status.Error(codes.Unavailable, endedReason)
	}
	now := time.Now()
	if s.fails == nil {
		s.fails = newFailures(len(s.c.eps), s.route.len(), s.c.cfg.ConnectTimeout)
		s.fails.keepRefused = s.retry.keepRefused
		if s.retry.giveUpAfter > 0 {
			s.giveUp = now.Add(s.retry.giveUpAfter)
		}
	}
	if !s.fails.note(i, err, now) {
		return err
	}
	s.failures++
	s.reportFailover(i, err)
	return nil
}

// accept reports whether m, received from endpoint i, goes to the caller:
// not when its epoch is not past the last one returned (or the request's
// from_epoch), but for a progress message at that epoch. An accepted
// message moves the watch's epoch on and starts the rounds afresh from
// endpoint i, where the watch goes on: the next round starts after it,
// or, when i is an Endpoint a read fell back to, at the read endpoints.
func (s *watchStream) accept(m *pb.WatchResponse, i int) bool {
	if s.resumable && (m.Epoch < s.epoch || m.Epoch == s.epoch && WatchTypeOf(m) != WatchProgress) {
		return false
	}
	s.resumable, s.epoch = true, m.Epoch
	s.fails, s.failures, s.giveUp, s.pause, s.wait = nil, 0, time.Time{}, firstPause, 0
	s.route.answeredBy(i)
	s.route = s.c.routes.read()
	if s.route.at(0) == i {
		s.tried, s.next = 1, 1%s.route.len()
	} else {
		s.tried, s.next = 0, 0
	}
	return true
}
