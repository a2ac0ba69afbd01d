package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/reflection"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// Server is one running metalog member: the state machine, the raft node and
// the client listeners. Start it with Start and stop it with Close.
type Server struct {
	cfg    Config
	logger *slog.Logger

	sm      *metadata.StateMachine
	node    *raftlog.Node
	applier *applier

	grpcLis, httpLis, peerLis net.Listener
	grpcSrv, peerSrv          *grpc.Server
	httpSrv                   *http.Server
	gwConn                    *grpc.ClientConn
	transport                 *raftlog.Transport

	// Security material, nil when not configured; see tls.go and auth.go.
	clientTLS, peerTLS *certReloader
	tokens             *tokenStore
	auth               *authenticator

	snapMetrics *snapshotMetrics
	degraded    degradation

	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed when the server has stopped
	serveErr  chan error    // first fatal error of a listener or the apply path
}

// Start opens the data dir, replays the log, and starts serving.
func Start(cfg Config, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	s := &Server{cfg: cfg, logger: logger, done: make(chan struct{}), serveErr: make(chan error, 4)}
	if err := s.start(); err != nil {
		s.shutdown()
		return nil, err
	}
	return s, nil
}

// clientWindow is the HTTP/2 flow-control window of client connections.
const clientWindow = 1 << 20

// DialOptions returns the options clients of the metadata service should
// dial with, besides their credentials: a fixed flow-control window, which
// turns off gRPC's bandwidth-delay probing. Left on, it answers a stream of
// small requests and responses with a ping and a ping ack per message,
// two syscalls on each side for nothing on a connection that never fills
// a window.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(clientWindow), grpc.WithInitialConnWindowSize(clientWindow)}
}

func (s *Server) start() error {
	var err error
	reg := prometheus.NewRegistry()
	s.sm, err = metadata.Open(metadata.Config{
		Dir:         s.cfg.DataDir,
		Logger:      s.logger,
		FlushWindow: time.Duration(s.cfg.SchemaFlushCoalescingWindow),

		MaxSnapshotBytes: int(s.cfg.MaxMutationSize),
		Metrics:          metadata.NewMetrics(reg),
	})
	if err != nil {
		return err
	}
	s.snapMetrics = newSnapshotMetrics(reg)
	if err := s.loadSecurity(); err != nil {
		return err
	}
	// A fresh member joining a cluster asks for its members before it
	// listens for peers: the running members ask every member for its
	// status while answering, and a bound listener nobody serves yet would
	// hold that call until its timeout rather than refuse it at once.
	_, statErr := os.Stat(filepath.Join(s.cfg.DataDir, "raft.db"))
	fresh := errors.Is(statErr, os.ErrNotExist)
	var joinPeers []*pb.Member
	if fresh && s.cfg.Join != "" {
		if joinPeers, err = s.fetchMembers(s.cfg.Join); err != nil {
			return err
		}
	}
	if s.peerLis, err = net.Listen("tcp", s.cfg.PeerAddr); err != nil {
		return fmt.Errorf("peer listener: %w", err)
	}
	if err := s.startRaft(fresh, joinPeers); err != nil {
		return err
	}

	metrics := NewMetrics(reg, s.sm)
	s.registerNodeMetrics(reg)
	svc := &service{srv: s, sm: s.sm, node: s.node, timeout: time.Duration(s.cfg.RequestTimeout), logger: s.logger,
		metrics: metrics, maxMutationSize: s.cfg.MaxMutationSize}

	if s.grpcLis, err = net.Listen("tcp", s.cfg.GRPCAddr); err != nil {
		return fmt.Errorf("grpc listener: %w", err)
	}
	if s.httpLis, err = net.Listen("tcp", s.cfg.HTTPAddr); err != nil {
		return fmt.Errorf("http listener: %w", err)
	}
	lim := &limits{maxStatements: s.cfg.MaxStatementsPerRequest, maxInFlight: s.cfg.MaxConcurrentRequestsPerConnection, secret: s.auth.secret}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(s.cfg.MaxRequestBytes),
		grpc.MaxConcurrentStreams(uint32(streamsPerConnectionFactor * s.cfg.MaxConcurrentRequestsPerConnection)),
		grpc.StatsHandler(connStats{}),
		// A fixed window turns off gRPC's bandwidth-delay pings (see
		// DialOptions).
		grpc.InitialWindowSize(clientWindow), grpc.InitialConnWindowSize(clientWindow),
		// Metrics count every request, refused ones included; limits and
		// auth refuse before any handler runs.
		grpc.ChainUnaryInterceptor(metrics.unaryInterceptor, lim.inFlightUnary, s.auth.unary, lim.statementsUnary),
		grpc.ChainStreamInterceptor(lim.inFlightStream, s.auth.stream),
	}
	if s.clientTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.clientTLS.serverConfig(s.clientAuthType(), "h2"))))
	}
	s.grpcSrv = grpc.NewServer(opts...)
	pb.RegisterMetadataServiceServer(s.grpcSrv, svc)
	reflection.Register(s.grpcSrv)

	// The gateway calls the gRPC server over loopback, so HTTP requests go
	// through the same interceptors as gRPC ones. Its connection carries a
	// secret generated at start-up, which makes the interceptor trust the
	// client certificate the HTTP listener forwards.
	gwCreds := insecure.NewCredentials()
	if s.clientTLS != nil {
		gwCreds = credentials.NewTLS(s.clientTLS.pinnedConfig())
	}
	s.gwConn, err = grpc.NewClient(dialable(s.grpcLis.Addr()), append(DialOptions(), grpc.WithTransportCredentials(gwCreds),
		grpc.WithPerRPCCredentials(gatewayCredential{secret: s.auth.secret}))...)
	if err != nil {
		return fmt.Errorf("gateway connection: %w", err)
	}
	gw := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, newJSONMarshaler()),
		runtime.WithMetadata(gatewayMetadata), runtime.WithIncomingHeaderMatcher(gatewayHeaderMatcher))
	if err := pb.RegisterMetadataServiceHandler(context.Background(), gw, s.gwConn); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", lim.httpLimits(s.cfg.MaxRequestBytes, gw))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/readyz", s.readyz)
	if s.cfg.EnablePprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ConnContext: httpConnContext,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: streamsPerConnectionFactor * s.cfg.MaxConcurrentRequestsPerConnection}}
	if s.clientTLS != nil {
		s.httpSrv.TLSConfig = s.clientTLS.serverConfig(s.clientAuthType(), "h2", "http/1.1")
	}

	go func() {
		if err := s.peerSrv.Serve(s.transport.Listen(s.peerLis)); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.fatal(fmt.Errorf("peer server: %w", err))
		}
	}()
	go func() {
		<-s.node.Done()
		if err := s.node.Err(); err != nil {
			s.fatal(err)
		}
	}()
	go func() {
		if err := s.grpcSrv.Serve(s.grpcLis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.fatal(fmt.Errorf("grpc server: %w", err))
		}
	}()
	go func() {
		serve := func() error { return s.httpSrv.Serve(s.httpLis) }
		if s.clientTLS != nil {
			serve = func() error { return s.httpSrv.ServeTLS(s.httpLis, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.fatal(fmt.Errorf("http server: %w", err))
		}
	}()
	go s.applyConfigGuardrails(svc)
	cur := s.sm.Current()
	s.logger.Info("metalog serving", "name", s.cfg.Name, "id", formatID(MemberID(s.cfg.Name)),
		"grpc", s.grpcLis.Addr().String(), "http", s.httpLis.Addr().String(), "peer", s.peerLis.Addr().String(),
		"data_dir", s.cfg.DataDir, "epoch", cur.Epoch,
		"client_tls", s.clientTLS != nil, "peer_tls", s.peerTLS != nil, "auth", s.auth.enabled)
	s.logSecurity()
	return nil
}

// applyConfigGuardrails makes the config file's guardrails the cluster's
// initial ones: once this member is ready, if the cluster never had its
// guardrails set, it proposes them as OnlyIfUnset (the first member to
// commit wins). Once set, the cluster's settings rule and a file that
// differs only earns a warning.
func (s *Server) applyConfigGuardrails(svc *service) {
	select {
	case <-s.node.Ready():
	case <-s.done:
		return
	}
	want := s.cfg.Guardrails
	for attempt := 0; ; attempt++ {
		cur := s.sm.Current()
		if cur.GuardrailsSet {
			if cur.Guardrails != want && want != guardrails.Defaults() {
				s.logger.Warn("the guardrails in the config file differ from the cluster's; the cluster's apply (change them with `metalog guardrails set`)")
			}
			return
		}
		if want == guardrails.Defaults() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.cfg.RequestTimeout))
		_, err := svc.propose(ctx, metadata.Command{Kind: metadata.KindSetGuardrails, OnlyIfUnset: true,
			RequestID: "config-guardrails-" + s.cfg.Name, Guardrails: guardrails.AppendSettings(nil, want)})
		cancel()
		if err == nil {
			s.logger.Info("initial guardrails from the config file proposed")
			continue // re-check: another member's may have won
		}
		s.logger.Warn("could not propose the config file's guardrails; retrying", "err", err, "attempt", attempt)
		select {
		case <-s.done:
			return
		case <-time.After(time.Second):
		}
	}
}

// dialable turns a listener address into one a client can dial: an
// unspecified host (0.0.0.0, ::) becomes loopback.
func dialable(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
	}
	return tcp.String()
}

// PeerAddr is the address the peer listener is bound to.
func (s *Server) PeerAddr() string { return s.peerLis.Addr().String() }

// GRPCAddr is the address the gRPC listener is bound to.
func (s *Server) GRPCAddr() string { return s.grpcLis.Addr().String() }

// HTTPAddr is the address the HTTP listener is bound to.
func (s *Server) HTTPAddr() string { return s.httpLis.Addr().String() }

// Err reports the first fatal error of the running server (a listener that
// failed, or a schema store write that failed on the apply path). The
// caller should Close the server when it receives one.
func (s *Server) Err() <-chan error { return s.serveErr }

func (s *Server) fatal(err error) {
	s.logger.Error("fatal", "err", err)
	select {
	case s.serveErr <- err:
	default:
	}
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz answers 200 once this node has a leader and has applied the log
// committed when it learnt of it; 503 with the reason otherwise.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	st := s.node.Status()
	switch {
	case s.applier.failed() != nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: apply failed: %v\n", s.applier.failed())
	case s.node.Err() != nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: raft loop stopped: %v\n", s.node.Err())
	case st.Leader == 0:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready: no leader")
	case !s.node.Caught():
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: applying the log (applied %d, commit %d)\n", st.Applied, st.Commit)
	default:
		// Degraded nodes still serve, so they stay ready (a load balancer
		// must not drop every member at once); the body and the
		// metalog_degraded gauge say what an operator must fix.
		if reason := s.degraded.get(); reason != "" {
			w.Header().Set("X-Metalog-Degraded", "true")
			fmt.Fprintf(w, "degraded: %s\n", reason)
			return
		}
		fmt.Fprintf(w, "ok: leader %x term %d applied %d epoch %d\n", st.Leader, st.Term, st.Applied, s.sm.Current().Epoch)
	}
}

// Close stops accepting requests, lets in-flight ones finish (bounded by
// ctx), stops the raft node and closes the stores. It is safe to call more
// than once.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.httpSrv != nil {
			if err := s.httpSrv.Shutdown(ctx); err != nil {
				s.httpSrv.Close()
			}
		}
		if s.grpcSrv != nil {
			stopped := make(chan struct{})
			go func() { s.grpcSrv.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-ctx.Done():
				s.grpcSrv.Stop()
				<-stopped
			}
		}
		s.closeErr = s.shutdown()
	})
	return s.closeErr
}

// shutdown releases what start acquired, in reverse order.
func (s *Server) shutdown() error {
	var errs []error
	if s.gwConn != nil {
		s.gwConn.Close()
	}
	if s.grpcLis != nil && s.grpcSrv == nil {
		s.grpcLis.Close()
	}
	if s.httpLis != nil && s.httpSrv == nil {
		s.httpLis.Close()
	}
	if s.node != nil {
		s.node.Stop()
	}
	if s.transport != nil {
		s.transport.Stop()
	}
	if s.peerSrv != nil {
		s.peerSrv.Stop()
	} else if s.peerLis != nil {
		s.peerLis.Close()
	}
	if s.sm != nil {
		errs = append(errs, s.sm.Close())
	}
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	return errors.Join(errs...)
}

// applier adapts the state machine to raftlog.Applier. If the state machine
// fails to persist a batch it can no longer apply deterministically, so every
// later entry fails with the same error and the server is told to stop.
type applier struct {
	sm     *metadata.StateMachine
	logger *slog.Logger
	fatal  func(error)

	entries []metadata.Entry // reused across batches; only the raft goroutine touches it

	mu  sync.Mutex // guards err
	err error
}

func (a *applier) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Apply implements raftlog.Applier.
func (a *applier) Apply(entries []raftlog.Entry) []raftlog.Result {
	out := make([]raftlog.Result, len(entries))
	if err := a.failed(); err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	a.entries = a.entries[:0]
	for _, e := range entries {
		a.entries = append(a.entries, metadata.Entry{Index: e.Index, Data: e.Data})
	}
	results, err := a.sm.Apply(a.entries)
	if err != nil {
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
		a.fatal(err)
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	for i, r := range results {
		out[i] = raftlog.Result{Value: r.Outcome, Err: r.Err}
	}
	return out
}

// Capture implements raftlog.Snapshotter.
func (a *applier) Capture(index uint64) func() ([]byte, error) { return a.sm.Capture(index) }

// Restore implements raftlog.Snapshotter.
func (a *applier) Restore(index uint64, data []byte) error { return a.sm.Restore(index, data) }

// BeginRebuild and EndRebuild implement raftlog.Rebuilder: readers keep
// the metadata of before a repair until its replay is done.
func (a *applier) BeginRebuild() { a.sm.BeginRebuild() }

// EndRebuild implements raftlog.Rebuilder.
func (a *applier) EndRebuild() { a.sm.EndRebuild() }

// Reset implements raftlog.Resetter, for Node.Resync. After an apply
// failure nothing could be replayed onto the empty state, so it refuses.
func (a *applier) Reset() error {
	if err := a.failed(); err != nil {
		return fmt.Errorf("apply failed earlier: %w", err)
	}
	return a.sm.Reset()
}
