package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
)

// Options are what the handlers need besides the member: where their
// metrics go, the limits they enforce, who may call what, and the
// profiler. Package server fills them from its configuration file; the
// settings named here are its keys.
type Options struct {
	// Logger receives the handlers' lines (one per DDL answered, and the
	// refusals at debug). Nil discards them.
	Logger *slog.Logger
	// Registry takes the handlers' metrics and the Go runtime and process
	// collectors, and /metrics serves what it gathers (the member's
	// metrics too, when registered on it). Nil: a registry of its own.
	Registry *prometheus.Registry
	// Auth says how callers authenticate; the zero value is
	// authentication off.
	Auth AuthOptions
	// MaxRequestBytes is the largest request in bytes, a gRPC message or
	// an HTTP body (max_request_bytes). Must be positive.
	MaxRequestBytes int
	// MaxConcurrentRequestsPerConnection is the most requests one client
	// connection, gRPC or HTTP, may have in flight
	// (max_concurrent_requests_per_connection). Must be positive.
	MaxConcurrentRequestsPerConnection int
	// MaxWatchStreams and MaxWatchStreamsPerIdentity bound the long-lived
	// streams (watches, backup downloads) of the member and of one
	// identity (max_watch_streams, max_watch_streams_per_identity). Must
	// be positive.
	MaxWatchStreams, MaxWatchStreamsPerIdentity int
	// RequestReadTimeout bounds how long an HTTP client may take to send a
	// request's headers (the TLS handshake included), then, counted anew,
	// its body (request_read_timeout). Must be positive.
	RequestReadTimeout time.Duration
	// IdleTimeout closes HTTP keep-alive and HTTP/2 connections idle for
	// this long (idle_timeout). Must be positive.
	IdleTimeout time.Duration
	// Profiler, if not nil, is served under PprofPath on the HTTP side
	// (enable_pprof): with authentication on, to callers holding the
	// operator role for every keyspace only.
	Profiler http.Handler
}

// validate fills the defaults and names the first setting that is wrong.
func (o *Options) validate() error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	for _, v := range []struct {
		name string
		n    int64
	}{
		{"max_request_bytes", int64(o.MaxRequestBytes)},
		{"max_concurrent_requests_per_connection", int64(o.MaxConcurrentRequestsPerConnection)},
		{"max_watch_streams", int64(o.MaxWatchStreams)},
		{"max_watch_streams_per_identity", int64(o.MaxWatchStreamsPerIdentity)},
		{"request_read_timeout", int64(o.RequestReadTimeout)},
		{"idle_timeout", int64(o.IdleTimeout)},
	} {
		if v.n <= 0 {
			return fmt.Errorf("api: %s must be positive, got %d", v.name, v.n)
		}
	}
	return nil
}

// Handlers serve one member to clients: the gRPC service behind its
// interceptors (NewGRPCServer) and the HTTP side (NewGateway). Build
// them with New once the member runs; their servers share the stream
// limits and the metrics.
type Handlers struct {
	opts    Options
	svc     *service
	ready   Readier // answers /readyz
	auth    *authenticator
	streams *streamLimits
}

// New returns the handlers of the member b cuts in slices with opts,
// registering their metrics on opts.Registry. It refuses options that are
// not usable, naming the setting, and a Backend without one of its
// required slices.
func New(b Backend, opts Options) (*Handlers, error) {
	if err := b.validate(); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	auth := newAuthenticator(opts.Auth)
	logger := opts.Logger
	auth.onRefusal = func(method, id string) {
		logger.Debug("request refused", "method", method, "identity", id)
	}
	return &Handlers{
		opts:    opts,
		svc:     newService(b, logger, newMetrics(opts.Registry)),
		ready:   b.Readiness,
		auth:    auth,
		streams: newStreamLimits(opts.MaxWatchStreams, opts.MaxWatchStreamsPerIdentity),
	}, nil
}

// Gateway is the HTTP side of the handlers. HTTP is the server to run on
// the HTTP listener (set its TLSConfig first for TLS): grpc-gateway under
// /v1/ behind the limits, /metrics, /healthz, /readyz and the profiler.
// The gateway calls the metadata service through a gRPC server of its
// own over in-memory connections (gateway.go), which Serve runs until
// Stop; Close releases those connections once both servers stopped.
type Gateway struct {
	// HTTP is the HTTP listener's server, with its handler, timeouts and
	// HTTP/2 bounds set.
	HTTP *http.Server

	srv  *grpc.Server // the gateway's own gRPC server
	lis  *pipeListener
	pool *gatewayPool
}

// Serve runs the gateway's own gRPC server until Stop; it returns
// grpc.ErrServerStopped after Stop.
func (g *Gateway) Serve() error { return g.srv.Serve(g.lis) }

// Stop stops the gateway's own gRPC server at once, with its stream
// workers: call it once the HTTP server no longer takes requests.
func (g *Gateway) Stop() { g.srv.Stop() }

// Close closes the gateway's connections to its gRPC server.
func (g *Gateway) Close() { g.pool.Close() }
