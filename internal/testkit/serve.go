package testkit

import (
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// ServeOption changes how Serve and Start serve a MetadataService.
type ServeOption func(*serveConfig)

type serveConfig struct {
	addr string
	opts []grpc.ServerOption
}

// At serves on addr instead of a free loopback port: a member that comes
// back where it was, or where nothing listened.
func At(addr string) ServeOption { return func(c *serveConfig) { c.addr = addr } }

// WithGRPC gives the gRPC server opts (credentials, interceptors).
func WithGRPC(opts ...grpc.ServerOption) ServeOption {
	return func(c *serveConfig) { c.opts = append(c.opts, opts...) }
}

// Served is a MetadataService served on loopback by Start.
type Served struct {
	Addr string       // where it listens
	GRPC *grpc.Server // its server

	done chan struct{} // closed when Serve returned
	once sync.Once
}

// Start serves srv on a free loopback port (see At) until Stop or the end
// of the test.
func Start(t testing.TB, srv pb.MetadataServiceServer, opts ...ServeOption) *Served {
	t.Helper()
	cfg := serveConfig{addr: "127.0.0.1:0"}
	for _, o := range opts {
		o(&cfg)
	}
	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		t.Fatalf("listening on %s: %v", cfg.addr, err)
	}
	s := &Served{Addr: lis.Addr().String(), GRPC: grpc.NewServer(cfg.opts...), done: make(chan struct{})}
	pb.RegisterMetadataServiceServer(s.GRPC, srv)
	go func() { defer close(s.done); s.GRPC.Serve(lis) }()
	t.Cleanup(s.Stop)
	return s
}

// Stop stops the server at once, closing its connections and streams,
// and returns when it has stopped. It may be called more than once, from
// any goroutine.
func (s *Served) Stop() {
	s.once.Do(s.GRPC.Stop)
	<-s.done
}

// Serve serves srv as Start does and returns its address.
func Serve(t testing.TB, srv pb.MetadataServiceServer, opts ...ServeOption) string {
	t.Helper()
	return Start(t, srv, opts...).Addr
}
