package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "metalog.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfigFile(t *testing.T) {
	c := DefaultConfig()
	if err := c.LoadConfigFile(writeFile(t, "data_dir: /tmp/x\nrequest_timeout: 250ms\n")); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/tmp/x" || time.Duration(c.RequestTimeout) != 250*time.Millisecond || c.GRPCAddr != "127.0.0.1:7070" {
		t.Fatalf("config = %+v", c)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}

	empty := DefaultConfig()
	if err := empty.LoadConfigFile(writeFile(t, "")); err != nil || empty != DefaultConfig() {
		t.Fatalf("empty file: %v, %+v", err, empty)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"dta_dir: x\n", "line 1: unknown key dta_dir; did you mean data_dir?"},
		{"request_timeout: soon\n", `"soon" is not a duration`},
		{"request_timeout: 0s\n", "request_timeout must be positive"},
		{"grpc_addr: nope\n", "grpc_addr"},
		{"initial_cluster: n2=127.0.0.1:1\n", `name "n1" is not in`},
		{"initial_cluster: n1\n", "not name=host:port"},
	} {
		c := DefaultConfig()
		err := c.LoadConfigFile(writeFile(t, tc.yaml))
		if err == nil {
			err = c.validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to contain %q", tc.yaml, err, tc.want)
		}
	}
}
