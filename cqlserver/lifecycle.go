package cqlserver

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// lifeState is what the idle timeout and the drain know of a
// connection.
type lifeState struct {
	registered atomic.Bool  // a REGISTER was answered: the connection is never idle
	draining   atomic.Bool  // Shutdown stopped the reader: its read error is no fault
	last       atomic.Int64 // unix nanoseconds of the last activity
	timer      *time.Timer  // the idle clock; nil without an idle timeout
	timeout    time.Duration
}

// startIdle starts c's idle clock, when the server has an idle timeout:
// c is closed once it has had no request pending, no registration for
// events and no activity (a request read, a response written) for the
// timeout. A timer checks when the timeout could have run out, and
// looks again later while it has not.
func startIdle(c *conn) {
	l := &c.life
	if l.timeout = c.srv.cfg.IdleTimeout; l.timeout <= 0 {
		return
	}
	l.touch()
	// Armed once l.timer is set, which the function reads.
	l.timer = time.AfterFunc(math.MaxInt64, func() {
		wait := l.timeout - time.Since(time.Unix(0, l.last.Load()))
		if len(c.slots) > 0 || l.registered.Load() {
			wait = l.timeout
		}
		if wait > 0 {
			l.timer.Reset(wait)
			return
		}
		c.srv.cfg.Logger.Info("cql connection: closed after the idle timeout", "remote", c.nc.RemoteAddr().String(), "idle_timeout", l.timeout)
		c.nc.Close()
	})
	l.timer.Reset(l.timeout)
}

// touch marks activity now.
func (l *lifeState) touch() { l.last.Store(time.Now().UnixNano()) }

// stop stops the idle clock; the writer calls it as it ends.
func (l *lifeState) stop() {
	if l.timer != nil {
		l.timer.Stop()
	}
}

// Shutdown drains the server: it stops accepting connections, stops
// reading requests, lets the requests in flight finish and writes their
// responses, then closes each connection, and returns once every
// connection is closed, or ctx ends: then it closes the rest as Close
// does (cancelling their requests) and returns ctx's error. A request
// that arrives during the drain is not read; its client sees the
// connection close, as after any cut connection.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for lis := range s.listeners {
		lis.Close()
	}
	for c := range s.conns {
		// The reader's next read fails at once; it ends the connection
		// once the responses before it are written.
		c.life.draining.Store(true)
		c.nc.SetReadDeadline(time.Unix(1, 0))
	}
	s.mu.Unlock()
	var err error
	for !s.drained() {
		select {
		case <-s.connGone:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	s.Close()
	return err
}

// drained says whether every connection is gone.
func (s *Server) drained() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns) == 0
}
