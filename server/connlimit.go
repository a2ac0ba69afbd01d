package server

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Why a connection was refused by a listener's caps: the labels of
// metalog_connections_refused_total.
const (
	connRefusedListener = "max_connections"            // the listener holds max_connections
	connRefusedSource   = "max_connections_per_source" // the source address holds max_connections_per_source
)

// refusalLogInterval is the least time between two WARN lines of one
// listener about refused connections: a flood logs one line per interval
// with the count, not one per connection.
const refusalLogInterval = 10 * time.Second

// connMetrics are the client listeners' connection metrics, by listener
// ("grpc", "http" or "cql").
type connMetrics struct {
	open         *prometheus.GaugeVec
	refused      *prometheus.CounterVec
	acceptErrors *prometheus.CounterVec
}

// newConnMetrics registers the connection metrics on reg, with the series
// of the listeners named present from the start.
func newConnMetrics(reg prometheus.Registerer, listeners ...string) *connMetrics {
	m := &connMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "metalog_connections_open",
			Help: "Client connections open, by listener (grpc, http, cql).",
		}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metalog_connections_refused_total",
			Help: "Client connections closed as soon as accepted because a cap was reached, by listener and cap (max_connections, max_connections_per_source).",
		}, []string{"listener", "reason"}),
		acceptErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metalog_accept_errors_total",
			Help: "Failed accepts of client connections (such as too many open files), by listener; the listener retries after a pause.",
		}, []string{"listener"}),
	}
	for _, l := range listeners {
		m.open.WithLabelValues(l)
		m.refused.WithLabelValues(l, connRefusedListener)
		m.refused.WithLabelValues(l, connRefusedSource)
		m.acceptErrors.WithLabelValues(l)
	}
	reg.MustRegister(m.open, m.refused, m.acceptErrors)
	return m
}

// capListener is a client listener that holds at most max connections
// open, and at most perSource from one IP address: a connection past a cap
// is closed as soon as it is accepted, before a byte of it is read, so
// that a flood of idle connections cannot use up the process's file
// descriptors (then nobody could connect, and the member could not open
// its own files). Accept errors (too many open files, say) go to the
// server, which pauses and retries (net/http and grpc-go both do); the
// listener logs when they start and when accepting works again.
type capListener struct {
	net.Listener
	name           string // "grpc", "http" or "cql"
	max, perSource int
	logger         *slog.Logger
	metrics        *connMetrics

	mu          sync.Mutex         // guards the fields below
	open        int                // connections accepted and not closed
	bySource    map[netip.Addr]int // open connections by source address; no zero counts
	failing     int                // accept errors since the last accept that worked
	refusedLog  time.Time          // when refusals were last logged
	refusedSeen int                // refusals since then
}

// newCapListener wraps l (named name in logs and metrics) with the caps.
func newCapListener(l net.Listener, name string, max, perSource int, logger *slog.Logger, m *connMetrics) *capListener {
	return &capListener{Listener: l, name: name, max: max, perSource: perSource, logger: logger, metrics: m,
		bySource: map[netip.Addr]int{}}
}

// Accept returns the next connection within the caps, closing those past
// them.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.acceptFailed(err)
			return nil, err
		}
		src := sourceAddr(c.RemoteAddr())
		if reason := l.admit(src); reason != "" {
			// Counted before the close, so that whoever sees the
			// connection closed finds it counted.
			l.refused(src, reason)
			c.Close()
			continue
		}
		l.metrics.open.WithLabelValues(l.name).Inc()
		return &cappedConn{Conn: c, l: l, src: src}, nil
	}
}

// sourceAddr is the IP address a connection comes from (the zero Addr
// for a connection that is not TCP: all such share one count).
func sourceAddr(a net.Addr) netip.Addr {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// admit counts a connection from src, or returns why it is refused.
func (l *capListener) admit(src netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failing > 0 {
		l.logger.Info("accepting client connections again", "listener", l.name, "failed_accepts", l.failing)
		l.failing = 0
	}
	switch {
	case l.open >= l.max:
		return connRefusedListener
	case l.bySource[src] >= l.perSource:
		return connRefusedSource
	}
	l.open++
	l.bySource[src]++
	return ""
}

// release uncounts a connection from src.
func (l *capListener) release(src netip.Addr) {
	l.mu.Lock()
	l.open--
	if l.bySource[src]--; l.bySource[src] <= 0 {
		delete(l.bySource, src)
	}
	l.mu.Unlock()
	l.metrics.open.WithLabelValues(l.name).Dec()
}

// refused counts a refused connection, and logs the refusals at most once
// per refusalLogInterval.
func (l *capListener) refused(src netip.Addr, reason string) {
	l.metrics.refused.WithLabelValues(l.name, reason).Inc()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refusedSeen++
	if now := time.Now(); now.Sub(l.refusedLog) >= refusalLogInterval {
		l.logger.Warn("client connections refused: a cap is reached; they were closed as soon as accepted",
			"listener", l.name, "refused", l.refusedSeen, "last_source", src.String(), "cap", reason,
			"max_connections", l.max, "max_connections_per_source", l.perSource)
		l.refusedLog, l.refusedSeen = now, 0
	}
}

// acceptFailed counts an accept error and logs the first of a run (the
// server retries every few milliseconds up to a second).
func (l *capListener) acceptFailed(err error) {
	if errors.Is(err, net.ErrClosed) {
		return
	}
	l.metrics.acceptErrors.WithLabelValues(l.name).Inc()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failing++; l.failing == 1 {
		msg := "accepting client connections failed; the listener retries until it works again"
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			msg += ": no file descriptor is left; lower max_connections or raise the open-file limit (ulimit -n)"
		}
		l.logger.Warn(msg, "listener", l.name, "err", err, "open", l.open, "max_connections", l.max)
	}
}

// cappedConn is a connection counted by its capListener until it is
// closed.
type cappedConn struct {
	net.Conn
	l      *capListener
	src    netip.Addr
	closed atomic.Bool
}

// Close closes the connection and uncounts it, once.
func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.release(c.src)
	}
	return err
}

// CloseWrite shuts the sending side of a TCP connection, as net/http does
// before closing a connection it answered with an error.
func (c *cappedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// capListeners puts the client listeners behind the connection caps
// (max_connections, max_connections_per_source, their defaults worked out
// from the open-file limit), with their metrics on reg.
func (s *Server) capListeners(reg prometheus.Registerer) {
	nofile := openFileLimit()
	maxConns, perSource := s.cfg.connectionCaps(nofile)
	names := []string{"grpc", "http"}
	if s.cqlLis != nil {
		names = append(names, "cql")
	}
	m := newConnMetrics(reg, names...)
	s.grpcLis = newCapListener(s.grpcLis, "grpc", maxConns, perSource, s.logger, m)
	s.httpLis = newCapListener(s.httpLis, "http", maxConns, perSource, s.logger, m)
	if s.cqlLis != nil {
		s.cqlLis = newCapListener(s.cqlLis, "cql", maxConns, perSource, s.logger, m)
	}
	s.logger.Info("client connection caps, per listener", "max_connections", maxConns, "max_connections_per_source", perSource,
		"open_file_limit", nofile, "idle_timeout", time.Duration(s.cfg.IdleTimeout), "request_read_timeout", time.Duration(s.cfg.RequestReadTimeout))
}
