package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
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

// TestEveryConfigKeyHasItsRowAndFlag: every key of the config file is in
// the README's configuration table (a row of its own, or listed in a row
// that points to the section about it), every row names a key, and the
// flag a row names is one of serve's.
func TestEveryConfigKeyHasItsRowAndFlag(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### Configuration\n")
	if !ok {
		t.Fatal("README.md has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n### ")
	rows := map[string]string{} // key -> flag ("" when the key has none)
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\| (?:`(--[a-z0-9-]+)`)? *\\|").FindAllStringSubmatch(section, -1) {
		if _, dup := rows[m[1]]; !dup {
			rows[m[1]] = m[2]
		}
	}
	listed := map[string]bool{} // every key named in a row
	for line := range strings.Lines(section) {
		if strings.HasPrefix(line, "| ") {
			for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(line, -1) {
				listed[m[1]] = true
			}
		}
	}
	keys := map[string]bool{}
	ct := reflect.TypeOf(server.Config{})
	for i := range ct.NumField() {
		key, _, _ := strings.Cut(ct.Field(i).Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		keys[key] = true
		if !listed[key] {
			t.Errorf("config key %s (server.Config.%s) is not in README.md's configuration table", key, ct.Field(i).Name)
		}
	}
	serve := newServeCmd()
	for key, flag := range rows {
		if !keys[key] {
			t.Errorf("README.md's configuration table has a row for %s, which is no config key", key)
		}
		if flag != "" && serve.Flags().Lookup(strings.TrimPrefix(flag, "--")) == nil {
			t.Errorf("README.md gives config key %s the flag %s, which serve does not have", key, flag)
		}
	}
}
