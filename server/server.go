package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/metalog/metalog/api"
	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/member"
)

// Server is one running metalog member with its client listeners: gRPC,
// and HTTP (the gateway, /metrics, /healthz, /readyz), served by package
// api's handlers, and unless cql_addr is empty the CQL native protocol,
// served by package cqlserver. Start it with Start and stop it with Close.
type Server struct {
	cfg    Config
	logger *slog.Logger

	member  *member.Member
	sec     *security
	grpcLis net.Listener
	httpLis net.Listener
	cqlLis  net.Listener // nil when cql_addr is empty
	grpcSrv *grpc.Server
	cqlSrv  *cqlserver.Server // nil when cql_addr is empty
	// gateway is the HTTP side: the HTTP server, and the gateway's own
	// gRPC server behind it (api.Gateway).
	gateway *api.Gateway
	serving bool // the servers own the listeners

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}  // closed when the server stops
	wg        sync.WaitGroup // the serving goroutines
	serveErr  chan error     // first fatal error of a listener or the member
}

// Start loads the security material, binds the client listeners, starts
// the member (the data dir, the raft log, the peer listener) and serves.
func Start(cfg Config, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger, done: make(chan struct{}), serveErr: make(chan error, 4)}
	if err := s.start(); err != nil {
		s.shutdown()
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	var err error
	if s.sec, err = loadSecurity(&s.cfg, s.logger); err != nil {
		return err
	}
	if s.grpcLis, err = net.Listen("tcp", s.cfg.GRPCAddr); err != nil {
		return fmt.Errorf("grpc listener: %w", err)
	}
	if s.httpLis, err = net.Listen("tcp", s.cfg.HTTPAddr); err != nil {
		return fmt.Errorf("http listener: %w", err)
	}
	if s.cfg.CQLAddr != "" {
		if s.cqlLis, err = net.Listen("tcp", s.cfg.CQLAddr); err != nil {
			return fmt.Errorf("cql listener (cql_addr, --cql-addr): %w", err)
		}
	}
	reg := prometheus.NewRegistry()
	s.capListeners(reg)
	mc := s.cfg.memberConfig(s.GRPCAddr(), s.HTTPAddr(), s.sec)
	mc.Logger, mc.Registerer = s.logger, reg
	mc.CQLAddr = s.CQLAddr() // the other members' CQL listeners name it in their events
	if s.member, err = member.Start(mc); err != nil {
		return err
	}
	h, err := api.New(api.MemberBackend(s.member), s.handlerOptions(reg))
	if err != nil {
		return err
	}
	s.grpcSrv = h.NewGRPCServer(s.grpcOptions()...)
	if s.gateway, err = h.NewGateway(); err != nil {
		return err
	}
	if s.sec.clientTLS != nil {
		s.gateway.HTTP.TLSConfig = s.sec.clientTLS.serverConfig(s.cfg.clientAuthType(), "h2", "http/1.1")
	}
	s.newCQLServer()
	// How the listeners are protected is said before they serve, so that
	// a warning is in the log before anyone can reach them.
	s.sec.log(&s.cfg, s.logger)
	s.serve()
	state, _ := s.member.Reads().Read(context.Background(), 0, member.Local, nil)
	s.logger.Info("metalog serving", "name", s.cfg.Name, "id", member.FormatID(s.member.ID()),
		"cluster", member.FormatID(s.member.ClusterID()), "history", member.FormatHistoryID(s.member.Identity().HistoryID),
		"grpc", s.GRPCAddr(), "http", s.HTTPAddr(), "cql", s.CQLAddr(), "peer", s.member.PeerAddr(),
		"data_dir", s.cfg.DataDir, "epoch", state.Epoch,
		"client_tls", s.sec.clientTLS != nil, "peer_tls", s.sec.peerTLS != nil, "auth", s.cfg.authEnabled())
	return nil
}

// newCQLServer builds the CQL server over the member, when cql_addr is
// set, and puts client TLS on its listener when client TLS is on: the
// same certificate and client-certificate request as the gRPC listener's.
func (s *Server) newCQLServer() {
	if s.cqlLis == nil {
		return
	}
	if s.sec.clientTLS != nil {
		s.cqlLis = tls.NewListener(s.cqlLis, s.sec.clientTLS.serverConfig(s.cfg.clientAuthType()))
	}
	cfg := cqlserver.Config{
		Writer:        s.member.Writes(),
		Reader:        s.member.Reads(),
		Membership:    s.member.Cluster(),
		Logger:        s.logger.With("listener", "cql"),
		HostID:        cqlserver.HostID(s.member.ID()),
		MaxFrameBytes: s.cfg.MaxRequestBytes,
		MaxInFlight:   s.cfg.MaxConcurrentRequestsPerConnection,
		IdleTimeout:   time.Duration(s.cfg.IdleTimeout),
	}
	if s.cfg.authEnabled() {
		cfg.Authenticator = api.NewCredentials(s.sec.authOptions(&s.cfg, s.member))
	}
	s.cqlSrv = cqlserver.New(cfg)
}

// serve runs the listeners and watches the member for fatal errors.
func (s *Server) serve() {
	s.serving = true
	if s.cqlSrv != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.cqlSrv.Serve(s.cqlLis); err != nil && !errors.Is(err, cqlserver.ErrServerClosed) {
				s.fatal(fmt.Errorf("cql server: %w", err))
			}
		}()
	}
	s.wg.Add(4)
	go func() {
		defer s.wg.Done()
		if err := s.grpcSrv.Serve(s.grpcLis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.fatal(fmt.Errorf("grpc server: %w", err))
		}
	}()
	go func() {
		defer s.wg.Done()
		if err := s.gateway.Serve(); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.fatal(fmt.Errorf("gateway's grpc server: %w", err))
		}
	}()
	go func() {
		defer s.wg.Done()
		serve := func() error { return s.gateway.HTTP.Serve(s.httpLis) }
		if s.sec.clientTLS != nil {
			serve = func() error { return s.gateway.HTTP.ServeTLS(s.httpLis, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.fatal(fmt.Errorf("http server: %w", err))
		}
	}()
	go func() {
		defer s.wg.Done()
		select {
		case err := <-s.member.Err():
			s.report(err) // the member logged it
		case <-s.done:
		}
	}()
}

// PeerAddr is the address the peer listener is bound to.
func (s *Server) PeerAddr() string { return s.member.PeerAddr() }

// GRPCAddr is the address the gRPC listener is bound to.
func (s *Server) GRPCAddr() string { return s.grpcLis.Addr().String() }

// HTTPAddr is the address the HTTP listener is bound to.
func (s *Server) HTTPAddr() string { return s.httpLis.Addr().String() }

// CQLAddr is the address the CQL listener is bound to, or "" when
// cql_addr is empty (no CQL listener).
func (s *Server) CQLAddr() string {
	if s.cqlLis == nil {
		return ""
	}
	return s.cqlLis.Addr().String()
}

// Err reports the first fatal errors of the running server: a listener
// that failed, or the member's (member.Member.Err; member.ErrRemoved once
// this member was removed from the cluster). The caller should Close the
// server when it receives one.
func (s *Server) Err() <-chan error { return s.serveErr }

func (s *Server) fatal(err error) {
	s.logger.Error("fatal", "err", err)
	s.report(err)
}

func (s *Server) report(err error) {
	select {
	case s.serveErr <- err:
	default:
	}
}

// ReloadCertificates reads the certificate, key, CA and token files again
// (serve calls it on SIGHUP; changed files are also picked up by
// themselves). Material that fails to load is kept as it was.
func (s *Server) ReloadCertificates() error { return s.sec.reload() }

// Close ends the change feeds at once (Unavailable: their clients resume
// on another member, which a drain cannot wait for: a feed never ends by
// itself), stops accepting requests on every listener, lets in-flight
// ones finish and answers them (bounded by ctx: then the rest are cut,
// and their clients learn their outcome as after any cut connection),
// then closes the member (raft node, peer listener, a synchronous flush
// of the schema store). The CQL listener drains alongside the others
// (cqlserver.Server.Shutdown), its connections closed once answered. It
// is safe to call more than once.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.member != nil {
			s.member.Reads().EndFeeds()
		}
		cqlDrained := s.drainCQL(ctx)
		if s.gateway != nil {
			if err := s.gateway.HTTP.Shutdown(ctx); err != nil {
				s.logger.Warn("drain: HTTP requests still in flight when the drain timed out; closed under them", "err", err)
				s.gateway.HTTP.Close()
			}
			// The HTTP requests are answered or cut: nothing more comes
			// through the gateway.
			s.gateway.Stop()
		}
		if s.grpcSrv != nil {
			stopped := make(chan struct{})
			go func() { s.grpcSrv.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-ctx.Done():
				s.logger.Warn("drain: gRPC requests still in flight when the drain timed out; closed under them", "err", ctx.Err())
				s.grpcSrv.Stop()
				<-stopped
			}
		}
		<-cqlDrained
		s.closeErr = s.shutdown()
	})
	return s.closeErr
}

// drainCQL starts the CQL listener's drain, bounded by ctx, and returns
// a channel closed once it is over (at once without the listener).
func (s *Server) drainCQL(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if s.cqlSrv == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := s.cqlSrv.Shutdown(ctx); err != nil {
			s.logger.Warn("drain: CQL requests still in flight when the drain timed out; closed under them", "err", err)
		}
	}()
	return done
}

// shutdown releases what start acquired, in reverse order.
func (s *Server) shutdown() error {
	if s.cqlSrv != nil {
		s.cqlSrv.Close()
	}
	if s.gateway != nil {
		s.gateway.Close()
	}
	if !s.serving {
		for _, l := range []net.Listener{s.grpcLis, s.httpLis, s.cqlLis} {
			if l != nil {
				l.Close()
			}
		}
		// Their stream workers.
		if s.grpcSrv != nil {
			s.grpcSrv.Stop()
		}
		if s.gateway != nil {
			s.gateway.Stop()
		}
	}
	var err error
	if s.member != nil {
		err = s.member.Close()
	}
	close(s.done)
	s.wg.Wait()
	return err
}

// handlerOptions are the handlers' part of the config, with the loaded
// security material, the running member and the registry of the metrics.
func (s *Server) handlerOptions(reg *prometheus.Registry) api.Options {
	return api.Options{
		Logger:                             s.logger,
		Registry:                           reg,
		Auth:                               s.sec.authOptions(&s.cfg, s.member),
		MaxRequestBytes:                    s.cfg.MaxRequestBytes,
		MaxConcurrentRequestsPerConnection: s.cfg.MaxConcurrentRequestsPerConnection,
		MaxWatchStreams:                    s.cfg.MaxWatchStreams,
		MaxWatchStreamsPerIdentity:         s.cfg.MaxWatchStreamsPerIdentity,
		RequestReadTimeout:                 time.Duration(s.cfg.RequestReadTimeout),
		IdleTimeout:                        time.Duration(s.cfg.IdleTimeout),
		Profiler:                           profiler(&s.cfg),
	}
}

// grpcOptions are the client gRPC listener's own options, beside the
// handlers' (api.Handlers.NewGRPCServer): its bounds on connections
// (connectionOptions) and its TLS.
func (s *Server) grpcOptions() []grpc.ServerOption {
	opts := s.cfg.connectionOptions()
	if s.sec.clientTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.sec.clientTLS.serverConfig(s.cfg.clientAuthType(), "h2"))))
	}
	return opts
}
