package api

import (
	"context"
	"fmt"
	"net/http"
	goruntime "runtime"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// clientWindow is the HTTP/2 flow-control window of client connections.
// A fixed window turns off gRPC's bandwidth-delay probing, which answers a
// stream of small requests and responses with a ping and a ping ack per
// message: two syscalls on each side for nothing on a connection that
// never fills a window. The client package dials with the same window.
const clientWindow = 1 << 20

// newGRPCServer is the client gRPC server: limits, metrics, auth, the
// metadata service and server reflection, with the client listener's
// bounds on connections (connectionOptions) and streams per connection.
func (s *Server) newGRPCServer(svc *service) (*grpc.Server, error) {
	opts := append(s.serviceOptions(svc),
		grpc.MaxConcurrentStreams(uint32(streamsPerConnectionFactor*s.cfg.MaxConcurrentRequestsPerConnection)))
	opts = append(opts, s.cfg.connectionOptions()...)
	if s.sec.clientTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.sec.clientTLS.serverConfig(s.cfg.clientAuthType(), "h2"))))
	}
	srv := grpc.NewServer(opts...)
	pb.RegisterMetadataServiceServer(srv, svc)
	reflection.Register(srv)
	return srv, nil
}

// serviceOptions are the options of both gRPC servers, the client one and
// the gateway's (newGatewayServer), so that a request over HTTP goes
// through the same checks as one over gRPC.
func (s *Server) serviceOptions(svc *service) []grpc.ServerOption {
	lim := &limits{maxInFlight: s.cfg.MaxConcurrentRequestsPerConnection, secret: s.sec.auth.secret}
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.StatsHandler(connStats{}),
		grpc.InitialWindowSize(clientWindow), grpc.InitialConnWindowSize(clientWindow),
		// A pool of request goroutines, one per core, instead of a new
		// goroutine per request: a new one starts on a small stack and
		// grows it (copying it) on every DDL's deep call path. When all
		// are busy, gRPC starts a goroutine for the request as without
		// the pool, so a slow request never holds others up.
		grpc.NumStreamWorkers(uint32(goruntime.GOMAXPROCS(0))),
		// Metrics count every request, refused ones included (and those
		// by reason); limits and auth refuse before any handler runs,
		// and the stream limits (by the authenticated identity) before a
		// watch or a snapshot download starts.
		// Every response carries the member's cluster and history ids
		// (identity.go).
		grpc.ChainUnaryInterceptor(svc.metrics.unaryInterceptor, lim.inFlightUnary, s.sec.auth.unary, svc.stamp.unary),
		grpc.ChainStreamInterceptor(svc.metrics.streamInterceptor, lim.inFlightStream, s.sec.auth.stream, s.streams.stream, svc.stamp.stream),
	}
}

// newHTTPServer is the HTTP server of httpHandler, with the gateway over
// in-memory connections to the gateway's own gRPC server (gateway.go).
func (s *Server) newHTTPServer(reg *prometheus.Registry, mt *metrics, m Backend) (*http.Server, *gatewayPool, error) {
	rt, err := newRoutes()
	if err != nil {
		return nil, nil, err
	}
	// The gateway's calls carry a secret generated at start-up, which
	// makes the interceptor trust the client certificate the HTTP
	// listener forwards.
	pool, err := newGatewayPool(s.gwLis.dial, s.sec.auth.secret)
	if err != nil {
		return nil, nil, err
	}
	gw := newGateway(rt)
	rpc := pb.NewMetadataServiceClient(pool)
	if err := pb.RegisterMetadataServiceHandlerClient(context.Background(), gw, rpc); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("gateway: %w", err)
	}
	// Registered after the generated handlers, so that it takes the place
	// of the JSON stream the gateway would serve.
	if err := gw.HandlePath(http.MethodGet, "/v1/snapshot", snapshotDownload(gw, rpc)); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("gateway: %w", err)
	}
	mux := withPprof(&s.cfg, s.sec.auth, mt.refuse, httpHandler(&s.cfg, reg, mt, m, rt, gw))
	srv := &http.Server{Handler: mux, ConnContext: httpConnContext,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: streamsPerConnectionFactor * s.cfg.MaxConcurrentRequestsPerConnection}}
	if s.sec.clientTLS != nil {
		srv.TLSConfig = s.sec.clientTLS.serverConfig(s.cfg.clientAuthType(), "h2", "http/1.1")
	}
	s.guardHTTP(srv, mt)
	return srv, pool, nil
}

// newGateway returns the grpc-gateway mux, without its routes: the JSON
// codec, the metadata the gRPC side trusts, and the error answers (405 with
// Allow, 404 and 413 for the statement limit, in its JSON error form).
func newGateway(rt *routes) *runtime.ServeMux {
	return runtime.NewServeMux(append([]runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, newJSONMarshaler()),
		runtime.WithMetadata(gatewayMetadata), runtime.WithIncomingHeaderMatcher(gatewayHeaderMatcher),
		runtime.WithErrorHandler(gatewayError), runtime.WithRoutingErrorHandler(rt.routingError),
	}, routingOptions...)...)
}

// httpHandler is the HTTP listener's handler: the gateway gw under /v1/
// behind the limits (their refusals counted on mt) and the query check,
// /metrics from reg, /healthz, /readyz (m's readiness), and a JSON 404
// for the rest (withPprof adds the profiler).
func httpHandler(cfg *Config, reg *prometheus.Registry, mt *metrics, m Backend, rt *routes, gw http.Handler) http.Handler {
	lim := &limits{maxInFlight: cfg.MaxConcurrentRequestsPerConnection, refused: mt.refuse}
	mux := http.NewServeMux()
	mux.Handle("/v1/", lim.httpLimits(cfg.MaxRequestBytes, rt.queryChecked(gw)))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", healthz)
	mux.Handle("/readyz", readyz(m))
	mux.HandleFunc("/", notFound)
	return mux
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz answers 200 once the member has a leader and has applied the log
// committed when it learnt of it; 503 with the reason otherwise. A
// degraded member stays ready (a load balancer must not drop every member
// at once); the body and metalog_degraded say what an operator must fix.
func readyz(m Backend) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		r := m.Readiness()
		switch {
		case !r.Ready:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %s\n", r.Detail)
		case r.Degraded != "":
			w.Header().Set("X-Metalog-Degraded", "true")
			fmt.Fprintf(w, "degraded: %s\n", r.Degraded)
		default:
			fmt.Fprintf(w, "ok: %s\n", r.Detail)
		}
	})
}
