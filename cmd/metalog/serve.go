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

	"github.com/metalog/metalog/api"
	"github.com/metalog/metalog/raftlog"
)

func newServeCmd() *cobra.Command {
	cfg := api.DefaultConfig()
	var configFile, logLevel, logFormat string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a metalog member (a one-node cluster with no flags)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				// Flags given on the command line win over the file.
				fileCfg := api.DefaultConfig()
				if err := fileCfg.LoadConfigFile(configFile); err != nil {
					return err
				}
				applyChangedFlags(cmd, &fileCfg, &cfg)
				cfg = fileCfg
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
			}
			opts := &slog.HandlerOptions{Level: level}
			var logger *slog.Logger
			switch logFormat {
			case "text":
				logger = slog.New(slog.NewTextHandler(os.Stderr, opts))
			case "json":
				logger = slog.New(slog.NewJSONHandler(os.Stderr, opts))
			default:
				return fmt.Errorf("--log-format %q: want text or json", logFormat)
			}
			return serve(cfg, logger)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for the raft log and the schema store")
	f.StringVar(&cfg.Name, "name", cfg.Name, "this member's name in --initial-cluster")
	f.StringVar(&cfg.GRPCAddr, "grpc-addr", cfg.GRPCAddr, "client gRPC listen address")
	f.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "HTTP listen address (JSON API, /metrics, /healthz, /readyz)")
	f.StringVar(&cfg.PeerAddr, "peer-addr", cfg.PeerAddr, "address peers reach this member on")
	f.StringVar(&cfg.InitialCluster, "initial-cluster", cfg.InitialCluster, "founding members as name=host:port,... (default: this member alone)")
	f.StringVar(&cfg.Join, "join", cfg.Join, "gRPC address of a running member to join (after `metalog cluster add`)")
	f.DurationVar((*time.Duration)(&cfg.RequestTimeout), "request-timeout", time.Duration(cfg.RequestTimeout), "deadline for requests that carry none")
	f.DurationVar((*time.Duration)(&cfg.SchemaFlushCoalescingWindow), "schema-flush-coalescing-window", time.Duration(cfg.SchemaFlushCoalescingWindow), "how long schema store writes may be coalesced (0 = write before each acknowledgement)")
	f.Int64Var(&cfg.MaxMutationSize, "max-mutation-size", cfg.MaxMutationSize, "largest metadata snapshot in bytes (and the metadata_size guardrail's limit)")
	f.Uint64Var(&cfg.SnapshotIntervalEntries, "snapshot-interval-entries", cfg.SnapshotIntervalEntries, "applied log entries between metadata snapshots")
	f.Uint64Var(&cfg.SnapshotCatchUpEntries, "snapshot-catch-up-entries", cfg.SnapshotCatchUpEntries, "log entries kept behind a snapshot for slightly lagging followers")
	f.IntVar(&cfg.SnapshotChunkSize, "snapshot-chunk-size", cfg.SnapshotChunkSize, "chunk size of snapshot transfers, in bytes")
	f.IntVar(&cfg.SnapshotMaxConcurrentSends, "snapshot-max-concurrent-sends", cfg.SnapshotMaxConcurrentSends, "snapshot sends to followers allowed at once")
	f.StringVar(&configFile, "config", "", "YAML config file (flags given explicitly override it)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	return cmd
}

// applyChangedFlags copies the flags the user set explicitly from flagCfg
// into fileCfg, so that explicit flags override the config file.
func applyChangedFlags(cmd *cobra.Command, fileCfg, flagCfg *api.Config) {
	set := map[string]func(){
		"data-dir":                      func() { fileCfg.DataDir = flagCfg.DataDir },
		"name":                          func() { fileCfg.Name = flagCfg.Name },
		"grpc-addr":                     func() { fileCfg.GRPCAddr = flagCfg.GRPCAddr },
		"http-addr":                     func() { fileCfg.HTTPAddr = flagCfg.HTTPAddr },
		"peer-addr":                     func() { fileCfg.PeerAddr = flagCfg.PeerAddr },
		"initial-cluster":               func() { fileCfg.InitialCluster = flagCfg.InitialCluster },
		"join":                          func() { fileCfg.Join = flagCfg.Join },
		"request-timeout":               func() { fileCfg.RequestTimeout = flagCfg.RequestTimeout },
		"max-mutation-size":             func() { fileCfg.MaxMutationSize = flagCfg.MaxMutationSize },
		"snapshot-interval-entries":     func() { fileCfg.SnapshotIntervalEntries = flagCfg.SnapshotIntervalEntries },
		"snapshot-chunk-size":           func() { fileCfg.SnapshotChunkSize = flagCfg.SnapshotChunkSize },
		"snapshot-catch-up-entries":     func() { fileCfg.SnapshotCatchUpEntries = flagCfg.SnapshotCatchUpEntries },
		"snapshot-max-concurrent-sends": func() { fileCfg.SnapshotMaxConcurrentSends = flagCfg.SnapshotMaxConcurrentSends },
		"schema-flush-coalescing-window": func() {
			fileCfg.SchemaFlushCoalescingWindow = flagCfg.SchemaFlushCoalescingWindow
		},
	}
	for name, apply := range set {
		if cmd.Flags().Changed(name) {
			apply()
		}
	}
}

// serve runs the server until SIGINT/SIGTERM (drain: a clean close) or a
// fatal error.
func serve(cfg api.Config, logger *slog.Logger) error {
	srv, err := api.Start(cfg, logger)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var runErr error
	select {
	case s := <-sig:
		logger.Info("draining", "signal", s.String())
	case runErr = <-srv.Err():
		if errors.Is(runErr, raftlog.ErrRemoved) {
			logger.Info("this member was removed from the cluster; stopping")
			runErr = nil
		} else {
			logger.Error("stopping after a fatal error", "err", runErr)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	logger.Info("stopped")
	return runErr
}
