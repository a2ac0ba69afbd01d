package main

import (
	"os"
	"path/filepath"
	"strings"
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

// TestCQLAddrFlagIsTheOperatorsChoice: --cql-addr given with
// authentication on is refused, even with the default's value, since
// the CQL listener has no authentication yet; --cql-addr '' is not.
// (Without the flag the default is left off: server's tests.)
func TestCQLAddrFlagIsTheOperatorsChoice(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("app "+strings.Repeat("ab", 32)+" ddl\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A public --grpc-addr without client TLS makes the run stop at the
	// check after the CQL one, before anything is bound.
	base := []string{"serve", "--data-dir", filepath.Join(dir, "data"), "--auth-token-file", tokens, "--insecure-peer", "--grpc-addr", "10.1.2.3:7070"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--cql-addr", server.DefaultCQLAddr}, "cql_addr (--cql-addr) is set while authentication is on"},
		{[]string{"--cql-addr", "127.0.0.1:9043"}, "cql_addr (--cql-addr) is set while authentication is on"},
		{[]string{"--cql-addr", ""}, "grpc_addr 10.1.2.3:7070 is not a loopback address"},
		{nil, "grpc_addr 10.1.2.3:7070 is not a loopback address"},
	} {
		root := newRootCmd()
		root.SetArgs(append(append([]string(nil), base...), tc.extra...))
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.extra, err, tc.want)
		}
	}
}
