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
	"google.golang.org/grpc/reflection"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// clientWindow is the HTTP/2 flow-control window of client connections.
// A fixed window turns off gRPC's bandwidth-delay probing, which answers a
// stream of small requests and responses with a ping and a ping ack per
// message: two syscalls on each side for nothing on a connection that
// never fills a window. The client package dials with the same window.
const clientWindow = 1 << 20

// NewGRPCServer returns the client gRPC server: the metadata service and
// server reflection behind the interceptors (serviceOptions), with a
// bound on streams per connection; opts add the listener's own (its TLS,
// keepalive and timeouts).
func (h *Handlers) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	all := append(h.serviceOptions(),
		grpc.MaxConcurrentStreams(uint32(streamsPerConnectionFactor*h.opts.MaxConcurrentRequestsPerConnection)),
		// A connection gives its write buffer back to a pool once it has
		// flushed, instead of holding 32 KiB for its life: a fleet of
		// watchers, each on a connection of its own and silent most of
		// the time, costs the member that much less each.
		grpc.SharedWriteBuffer(true), grpc.ReadBufferSize(4<<10))
	all = append(all, opts...)
	srv := grpc.NewServer(all...)
	pb.RegisterMetadataServiceServer(srv, h.svc)
	reflection.Register(srv)
	return srv
}

// serviceOptions are the options of both gRPC servers, the client one and
// the gateway's (newGatewayServer), so that a request over HTTP goes
// through the same checks as one over gRPC.
func (h *Handlers) serviceOptions() []grpc.ServerOption {
	svc := h.svc
	lim := &limits{maxInFlight: h.opts.MaxConcurrentRequestsPerConnection, secret: h.auth.secret}
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(h.opts.MaxRequestBytes),
		// The change feeds' messages are marshalled once and their bytes
		// sent on every stream that wants them (watchcodec.go).
		grpc.ForceServerCodecV2(newSharingCodec()),
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
		// watch or a backup download starts.
		// Every response carries the member's cluster and history ids
		// (identity.go).
		grpc.ChainUnaryInterceptor(svc.metrics.unaryInterceptor, lim.inFlightUnary, h.auth.unary, svc.stamp.unary),
		grpc.ChainStreamInterceptor(svc.metrics.streamInterceptor, lim.inFlightStream, h.auth.stream, h.streams.stream, svc.stamp.stream),
	}
}

// NewGateway returns the HTTP side: the HTTP server of httpHandler, with
// the gateway over in-memory connections to the gateway's own gRPC server
// (gateway.go), which the caller serves (Gateway.Serve).
func (h *Handlers) NewGateway() (*Gateway, error) {
	rt, err := newRoutes()
	if err != nil {
		return nil, err
	}
	g := &Gateway{lis: newPipeListener(), srv: h.newGatewayServer()}
	// The gateway's calls carry a secret generated at start-up, which
	// makes the interceptor trust the client certificate the HTTP
	// listener forwards.
	if g.pool, err = newGatewayPool(g.lis.dial, h.auth.secret); err != nil {
		g.srv.Stop()
		return nil, err
	}
	gw := newGateway(rt)
	rpc := pb.NewMetadataServiceClient(g.pool)
	if err := pb.RegisterMetadataServiceHandlerClient(context.Background(), gw, rpc); err != nil {
		g.Close()
		g.Stop()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	// Registered after the generated handlers, so that they take the place
	// of the JSON stream the gateway would serve.
	for _, path := range []string{"/v1/backup", "/v1/snapshot"} {
		if err := gw.HandlePath(http.MethodGet, path, backupDownload(gw, rpc, path)); err != nil {
			g.Close()
			g.Stop()
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	mt := h.svc.metrics
	mux := withPprof(h.opts.Profiler, h.auth, mt.refuse, httpHandler(&h.opts, h.opts.Registry, mt, h.ready, rt, gw))
	g.HTTP = &http.Server{Handler: mux, ConnContext: httpConnContext,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: streamsPerConnectionFactor * h.opts.MaxConcurrentRequestsPerConnection}}
	guardHTTP(g.HTTP, &h.opts, h.auth, mt)
	return g, nil
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
// behind o's limits (their refusals counted on mt) and the query check,
// /metrics from reg, /healthz, /readyz (ready's readiness), and a JSON
// 404 for the rest (withPprof adds the profiler).
func httpHandler(o *Options, reg *prometheus.Registry, mt *metrics, ready Readier, rt *routes, gw http.Handler) http.Handler {
	lim := &limits{maxInFlight: o.MaxConcurrentRequestsPerConnection, refused: mt.refuse}
	mux := http.NewServeMux()
	mux.Handle("/v1/", lim.httpLimits(o.MaxRequestBytes, rt.queryChecked(gw)))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", healthz)
	mux.Handle("/readyz", readyz(ready))
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
func readyz(ready Readier) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		r := ready.Readiness()
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
