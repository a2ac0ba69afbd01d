package serverkit

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/metalog/metalog/server"
)

// stopTimeout bounds Stop's drain of the server.
const stopTimeout = 10 * time.Second

// Server is a one-member cluster running in this process.
type Server struct {
	*server.Server
	dir string // the data directory, removed by Stop
}

// Option changes the configuration before the server starts.
type Option func(*server.Config)

// WithCQL turns the CQL listener on, on a free loopback port; the
// server's CQLAddr gives its address.
func WithCQL() Option {
	return func(c *server.Config) { c.CQLAddr = "127.0.0.1:0" }
}

// Start starts a one-member cluster with server.DefaultConfig, its data
// in a new temporary directory, its gRPC, HTTP and peer ports on free
// loopback ports and its CQL listener off (WithCQL turns it on), changed
// by opts. Stop closes it.
func Start(opts ...Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "metalog-test-")
	if err != nil {
		return nil, err
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.PeerAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.CQLAddr = "" // not the default port, which another server may hold
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.Start(cfg, nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Server{Server: srv, dir: dir}, nil
}

// Stop closes the server, draining it for at most ten seconds, and
// removes its data directory.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	defer os.RemoveAll(s.dir)
	return s.Close(ctx)
}

// New is Start for one test: it fails t if the server does not start,
// and stops it when the test ends, failing t if that fails.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}
