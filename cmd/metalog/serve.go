package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/server"
)

func newServeCmd() *cobra.Command {
	cfg := server.DefaultConfig()
	var configFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a metalog member (a one-node cluster with no flags)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				if err := loadConfigUnderFlags(cmd, &cfg, configFile); err != nil {
					return err
				}
			}
			logger, err := cfg.NewLogger(os.Stderr)
			if err != nil {
				return err
			}
			return serve(cfg, logger)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for the raft log and the schema store")
	f.StringVar(&cfg.Name, "name", cfg.Name, "this member's name in --initial-cluster: up to 64 bytes, without ',', '=', whitespace, control or bidirectional characters")
	f.StringVar(&cfg.GRPCAddr, "grpc-addr", cfg.GRPCAddr, "client gRPC listen address")
	f.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "HTTP listen address (JSON API, /metrics, /healthz, /readyz)")
	f.StringVar(&cfg.CQLAddr, "cql-addr", cfg.CQLAddr, "CQL native protocol listen address, experimental: DDL and the system tables drivers read ('' turns it off); a client listener like --grpc-addr; with authentication on, refused when set and off by default")
	f.StringVar(&cfg.PeerAddr, "peer-addr", cfg.PeerAddr, "address peers reach this member on")
	f.StringVar(&cfg.InitialCluster, "initial-cluster", cfg.InitialCluster, "founding members as name=host:port,... (default: this member alone)")
	f.StringVar(&cfg.Join, "join", cfg.Join, "gRPC address of a running member to join, once metalog cluster add has added this member")
	f.BoolVar(&cfg.ForceNewCluster, "force-new-cluster", false, "make this member, from its data dir, the only voter of a new cluster (new cluster id): the recovery after losing the quorum for good; refused while the other members answer (see Disaster recovery in the README)")
	f.DurationVar((*time.Duration)(&cfg.RequestTimeout), "request-timeout", time.Duration(cfg.RequestTimeout), "deadline for requests that carry none")
	f.DurationVar((*time.Duration)(&cfg.DrainTimeout), "drain-timeout", time.Duration(cfg.DrainTimeout), "on SIGTERM/SIGINT, how long requests in flight may take to finish (watch feeds end at once; their clients resume on another member)")
	f.DurationVar((*time.Duration)(&cfg.SchemaFlushCoalescingWindow), "schema-flush-coalescing-window", time.Duration(cfg.SchemaFlushCoalescingWindow), "how long schema store writes may be coalesced (0 = write before each acknowledgement)")
	f.Int64Var(&cfg.MaxMutationSize, "max-mutation-size", cfg.MaxMutationSize, "largest metadata snapshot in bytes (and the metadata_size guardrail's limit)")
	f.Uint64Var(&cfg.SnapshotIntervalEntries, "snapshot-interval-entries", cfg.SnapshotIntervalEntries, "applied log entries between metadata snapshots")
	f.Uint64Var(&cfg.SnapshotCatchUpEntries, "snapshot-catch-up-entries", cfg.SnapshotCatchUpEntries, "log entries kept behind a snapshot for slightly lagging followers")
	f.IntVar(&cfg.SnapshotChunkSize, "snapshot-chunk-size", cfg.SnapshotChunkSize, "chunk size of snapshot transfers, in bytes")
	f.IntVar(&cfg.SnapshotMaxConcurrentSends, "snapshot-max-concurrent-sends", cfg.SnapshotMaxConcurrentSends, "snapshot sends to followers allowed at once")
	f.Uint64Var(&cfg.HistoryRetentionEpochs, "history-retention-epochs", cfg.HistoryRetentionEpochs, "epochs of history each member keeps for watch, history and --at-epoch")
	f.Uint64Var(&cfg.MinFreeSpaceBytes, "min-free-space-bytes", cfg.MinFreeSpaceBytes, "free space the data dir must keep; below it the NOSPACE alarm refuses DDL and guardrail changes")
	f.DurationVar((*time.Duration)(&cfg.StoreScrubInterval), "store-scrub-interval", time.Duration(cfg.StoreScrubInterval), "how often the schema store is re-read and checked in the background, and rewritten from the applied metadata when damaged (0 = never)")
	f.DurationVar((*time.Duration)(&cfg.WatchBatchWindow), "watch-batch-window", time.Duration(cfg.WatchBatchWindow), "least time between two messages of a watch stream: changes applied within it after one go out together (0: each epoch at once; at most 1s)")
	f.Int64Var(&cfg.WatchMaxLagEpochs, "watch-max-lag-epochs", cfg.WatchMaxLagEpochs, "epochs a watch stream that caught up may fall behind again before it is cut with WATCH_LAGGING, naming the epoch to resume from (-1: no bound)")
	f.DurationVar((*time.Duration)(&cfg.WatchProgressInterval), "watch-progress-interval", time.Duration(cfg.WatchProgressInterval), "silence after which a watch stream gets a progress message")
	f.BoolVar(&cfg.EnablePprof, "enable-pprof", cfg.EnablePprof, "serve Go's /debug/pprof/ on the HTTP listener: to the operator role with authentication on; without it, on a loopback --http-addr only")
	f.BoolVar(&cfg.MetricsIdentityLabels, "metrics-identity-labels", cfg.MetricsIdentityLabels, "label metrics about identities (metalog_ddl_rate_limited_total) by token or certificate name; /metrics is open, so off by default")
	registerSecurityFlags(cmd, &cfg)
	registerFloodFlags(cmd, &cfg)
	f.StringVar(&configFile, "config", "", "YAML config file (flags given explicitly override it)")
	f.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	f.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log format: text or json")
	return cmd
}

// loadConfigUnderFlags reads the config file into cfg (which the flags are
// bound to) and then sets the flags given on the command line again, so
// that explicit flags win over the file and the file over the defaults,
// for every flag alike.
func loadConfigUnderFlags(cmd *cobra.Command, cfg *server.Config, path string) error {
	explicit := map[string]string{}
	cmd.Flags().Visit(func(f *pflag.Flag) { explicit[f.Name] = f.Value.String() })
	if err := cfg.LoadConfigFile(path); err != nil {
		return err
	}
	for name, value := range explicit {
		if err := cmd.Flags().Set(name, value); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return nil
}

// serve runs the server until SIGINT/SIGTERM (drain: a clean close) or a
// fatal error.
func serve(cfg server.Config, logger *slog.Logger) error {
	srv, err := server.Start(cfg, logger)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var runErr error
wait:
	for {
		select {
		case <-hup:
			if err := srv.ReloadCertificates(); err != nil {
				logger.Error("SIGHUP: reloading certificates and tokens failed; the previous ones stay in use", "err", err)
			} else {
				logger.Info("SIGHUP: certificates and tokens reloaded")
			}
		case s := <-sig:
			logger.Info("draining", "signal", s.String())
			break wait
		case runErr = <-srv.Err():
			if errors.Is(runErr, member.ErrRemoved) {
				logger.Info("this member was removed from the cluster; stopping")
				runErr = nil
			} else {
				logger.Error("stopping after a fatal error", "err", runErr)
			}
			break wait
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.DrainTimeout))
	defer cancel()
	if err := srv.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	logger.Info("stopped")
	return runErr
}

// registerSecurityFlags adds the TLS, auth and limit flags (same names as
// the config keys, with dashes).
func registerSecurityFlags(cmd *cobra.Command, cfg *server.Config) {
	f := cmd.Flags()
	f.StringVar(&cfg.ClientCertFile, "client-cert-file", cfg.ClientCertFile, "PEM certificate of the client listeners (gRPC and HTTP); turns on TLS")
	f.StringVar(&cfg.ClientKeyFile, "client-key-file", cfg.ClientKeyFile, "PEM key of --client-cert-file")
	f.StringVar(&cfg.ClientCAFile, "client-ca-file", cfg.ClientCAFile, "PEM CAs that sign client certificates (asks clients for one)")
	f.StringVar(&cfg.PeerCertFile, "peer-cert-file", cfg.PeerCertFile, "PEM certificate for mutual TLS between members: names this member (CN or DNS SAN = --name) and its peer address (IP or DNS SAN), for server and client use")
	f.StringVar(&cfg.PeerKeyFile, "peer-key-file", cfg.PeerKeyFile, "PEM key of --peer-cert-file")
	f.StringVar(&cfg.PeerCAFile, "peer-ca-file", cfg.PeerCAFile, "PEM CA that signs every member's peer certificate")
	f.StringVar(&cfg.AuthTokenFile, "auth-token-file", cfg.AuthTokenFile, "bearer tokens, lines of \"name sha256hex role,role\" (metalog token new makes them)")
	f.StringVar((*string)(&cfg.AuthCertRoles), "auth-cert-roles", string(cfg.AuthCertRoles), "roles of client certificates by subject CN: \"CN=role,role;CN2=role\"")
	f.BoolVar(&cfg.Insecure, "insecure", cfg.Insecure, "allow non-loopback addresses without TLS and authentication (logs a warning)")
	f.BoolVar(&cfg.InsecurePeer, "insecure-peer", cfg.InsecurePeer, "allow a peer port without mutual TLS while authentication is on (logs a warning; /readyz says it): anyone who can connect to it can act as a member")
	f.IntVar(&cfg.MaxRequestBytes, "max-request-bytes", cfg.MaxRequestBytes, "largest request in bytes (gRPC message, HTTP body)")
	f.IntVar(&cfg.MaxStatementsPerRequest, "max-statements-per-request", cfg.MaxStatementsPerRequest, "most statements in one execute request")
	f.IntVar(&cfg.MaxConcurrentRequestsPerConnection, "max-concurrent-requests-per-connection", cfg.MaxConcurrentRequestsPerConnection, "most requests in flight on one client connection")
	f.Float64Var(&cfg.DDLRatePerIdentity, "ddl-rate-per-identity", cfg.DDLRatePerIdentity, "schema changes (statements) per second each identity may make through this member; 0 is no limit")
	f.IntVar(&cfg.DDLBurstPerIdentity, "ddl-burst-per-identity", cfg.DDLBurstPerIdentity, "changes an identity may make at once before --ddl-rate-per-identity applies (default: the rate rounded up, at least 1)")
}
