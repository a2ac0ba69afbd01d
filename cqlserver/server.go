package cqlserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// Writer is the write slice of the member the server uses; *member.Writes
// implements it. Execute is called from the goroutines of many
// connections at once and answers within ctx.
type Writer interface {
	// Execute parses, checks, proposes and applies one request.
	Execute(ctx context.Context, req member.Request) (metadata.Outcome, error)
}

// Reader is the read slice of the member the server uses; *member.Reads
// implements it. Read and Watch are called from the goroutines of many
// connections at once; the metadata they give is immutable.
type Reader interface {
	// Read returns the metadata a read answers from, at or past minEpoch,
	// with consistency "", "local" or "linearizable", filtered by visible
	// (nil: every keyspace).
	Read(ctx context.Context, minEpoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error)
	// Watch runs the change feed q until ctx ends or send fails, handing
	// every message to send on the caller's goroutine; a connection
	// registered for SCHEMA_CHANGE follows it.
	Watch(ctx context.Context, q member.WatchQuery, send func(member.WatchMessage) error) error
}

// The member's services are the slices the server uses.
var (
	_ Writer = (*member.Writes)(nil)
	_ Reader = (*member.Reads)(nil)
)

// ErrServerClosed is returned by Serve after Close or Shutdown.
var ErrServerClosed = errors.New("cqlserver: server closed")

// The defaults of Config.
const (
	// DefaultMaxFrameBytes is the default of Config.MaxFrameBytes.
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxInFlight is the default of Config.MaxInFlight.
	DefaultMaxInFlight = 64
	// DefaultClusterName is the default of Config.ClusterName.
	DefaultClusterName = "metalog"
)

// Config configures a Server.
type Config struct {
	// Writer runs the DDL statements. Required.
	Writer Writer
	// Reader answers the reads of system tables. Required.
	Reader Reader
	// Authenticator, when set, turns authentication on: a client presents
	// a client certificate that identifies it, or answers AUTHENTICATE
	// (PasswordAuthenticator) with a token as its password; its DDL and
	// reads are held to the principal's grants. Nil: authentication off.
	Authenticator Authenticator
	// Logger receives one line per connection error; nil discards them.
	Logger *slog.Logger
	// HostID is the host_id system.local gives, which drivers key their
	// hosts by; HostID(memberID) derives it from the member's raft id.
	HostID [16]byte
	// ClusterName is the cluster_name of system.local. Default
	// DefaultClusterName.
	ClusterName string
	// MaxFrameBytes is the largest frame body in bytes a client may send
	// (decompressed, for a compressed frame); a longer frame is answered
	// with a protocol error and the connection closed. Default
	// DefaultMaxFrameBytes.
	MaxFrameBytes int
	// MaxInFlight is how many requests of one connection may be pending
	// (read, not yet answered) at once. Default DefaultMaxInFlight.
	MaxInFlight int
	// Membership gives the other members, for the TOPOLOGY_CHANGE and
	// STATUS_CHANGE events; nil sends none (one member).
	Membership Membership
	// IdleTimeout closes a connection that has had no request pending for
	// this long, unless it registered for events: a driver's control
	// connection waits for them in silence, as a watch stream holds its
	// gRPC connection. Default 0: never.
	IdleTimeout time.Duration
	// MembershipInterval is how often the Server asks Membership for the
	// members. Default DefaultMembershipInterval.
	MembershipInterval time.Duration
}

// validate fills the defaults and refuses a Config without a member.
func (c *Config) validate() error {
	switch {
	case c.Writer == nil:
		return errors.New("cqlserver: Config.Writer is nil")
	case c.Reader == nil:
		return errors.New("cqlserver: Config.Reader is nil")
	case c.MaxFrameBytes < 0:
		return errors.New("cqlserver: Config.MaxFrameBytes is negative")
	case c.MaxInFlight < 0:
		return errors.New("cqlserver: Config.MaxInFlight is negative")
	case c.IdleTimeout < 0:
		return errors.New("cqlserver: Config.IdleTimeout is negative")
	case c.MembershipInterval < 0:
		return errors.New("cqlserver: Config.MembershipInterval is negative")
	}
	if c.MembershipInterval == 0 {
		c.MembershipInterval = DefaultMembershipInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.ClusterName == "" {
		c.ClusterName = DefaultClusterName
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	return nil
}

// Server serves the CQL native protocol on listeners. Serve, Shutdown and
// Close may be called from any goroutine.
type Server struct {
	cfg    Config
	cfgErr error // from validate; Serve returns it
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the connections' goroutines

	prepared prepared
	connGone chan struct{} // a connection ended; Shutdown waits on it

	mu             sync.Mutex // guards listeners, conns, closed and membersWatched
	listeners      map[net.Listener]struct{}
	conns          map[*conn]struct{}
	closed         bool
	membersWatched bool // watchMembers is started (by the first Serve)

	// peers is the other members as watchMembers last saw them (nil
	// before its first poll), for the rows of the members that stop
	// answering.
	peers atomic.Pointer[map[string]peer]
}

// New returns a Server with cfg's defaults filled. A Config without a
// Writer or a Reader makes Serve fail.
func New(cfg Config) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ctx: ctx, cancel: cancel, listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{},
		connGone: make(chan struct{}, 1)}
	s.cfgErr = cfg.validate()
	s.cfg = cfg
	return s
}

// Serve accepts connections on lis until Shutdown or Close, serving each on goroutines
// of its own. It closes lis when it returns, and returns ErrServerClosed
// after Close, or the error that stopped accepting.
func (s *Server) Serve(lis net.Listener) error {
	if s.cfgErr != nil {
		lis.Close()
		return s.cfgErr
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		lis.Close()
		return ErrServerClosed
	}
	s.listeners[lis] = struct{}{}
	if s.cfg.Membership != nil && !s.membersWatched {
		s.membersWatched = true
		s.wg.Add(1)
		go s.watchMembers()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, lis)
		s.mu.Unlock()
		lis.Close()
	}()
	for {
		nc, err := lis.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			return err
		}
		s.start(nc)
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// start registers nc and starts its goroutines, or closes it when the
// server is closed.
func (s *Server) start(nc net.Conn) {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(2)
	startIdle(c)
	s.mu.Unlock()
	go c.readLoop()
	go c.writeLoop()
}

// forget removes a connection whose goroutines are ending.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	select {
	case s.connGone <- struct{}{}: // Shutdown counts them again
	default:
	}
}

// Close stops the listeners and closes every connection, cancels the
// requests running and the connections' event feeds, and waits for the
// connections' goroutines (feeds included) to end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for lis := range s.listeners {
		lis.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}
