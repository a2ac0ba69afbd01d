package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/server"
)

// TestExplicitFlagsWinOverTheConfigFile: defaults < file < flags, for any
// flag, with no per-flag list to keep in step.
func TestExplicitFlagsWinOverTheConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metalog.yaml")
	if err := os.WriteFile(path, []byte("grpc_addr: 127.0.0.1:1111\nhttp_addr: 127.0.0.1:2222\nrequest_timeout: 3s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	cmd.Flags().StringVar(&cfg.GRPCAddr, "grpc-addr", cfg.GRPCAddr, "")
	cmd.Flags().StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "")
	cmd.Flags().StringVar(&cfg.PeerAddr, "peer-addr", cfg.PeerAddr, "")
	cmd.Flags().DurationVar((*time.Duration)(&cfg.RequestTimeout), "request-timeout", time.Duration(cfg.RequestTimeout), "")
	if err := cmd.Flags().Parse([]string{"--grpc-addr", "127.0.0.1:9999", "--request-timeout", "7s"}); err != nil {
		t.Fatal(err)
	}
	if err := loadConfigUnderFlags(cmd, &cfg, path); err != nil {
		t.Fatal(err)
	}
	if cfg.GRPCAddr != "127.0.0.1:9999" || time.Duration(cfg.RequestTimeout) != 7*time.Second {
		t.Errorf("explicit flags lost: grpc %s timeout %v", cfg.GRPCAddr, time.Duration(cfg.RequestTimeout))
	}
	if cfg.HTTPAddr != "127.0.0.1:2222" {
		t.Errorf("file value lost: http %s", cfg.HTTPAddr)
	}
	if cfg.PeerAddr != server.DefaultConfig().PeerAddr {
		t.Errorf("default lost: peer %s", cfg.PeerAddr)
	}
}
