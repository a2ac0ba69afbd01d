package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
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

	if time.Duration(c.StoreScrubInterval) != time.Hour {
		t.Errorf("store_scrub_interval defaults to %v, want 1h", time.Duration(c.StoreScrubInterval))
	}
	off := DefaultConfig()
	if err := off.LoadConfigFile(writeFile(t, "store_scrub_interval: 0s\n")); err != nil || off.validate() != nil || off.StoreScrubInterval != 0 {
		t.Fatalf("store_scrub_interval: 0s: %v, %v", err, time.Duration(off.StoreScrubInterval))
	}
	if mc := off.memberConfig("", "", &security{}); mc.StoreScrubInterval != 0 {
		t.Errorf("member scrub interval %v, want 0 (off)", mc.StoreScrubInterval)
	}

	lag := DefaultConfig()
	if err := lag.LoadConfigFile(writeFile(t, "watch_max_lag_epochs: -1\n")); err != nil || lag.validate() != nil {
		t.Fatalf("watch_max_lag_epochs: -1: %v", err)
	}
	if mc := lag.memberConfig("", "", &security{}); mc.WatchMaxLag != -1 {
		t.Errorf("member watch max lag %d, want -1 (no bound)", mc.WatchMaxLag)
	}

	batch := DefaultConfig()
	if err := batch.LoadConfigFile(writeFile(t, "watch_batch_window: 50ms\n")); err != nil || batch.validate() != nil {
		t.Fatalf("watch_batch_window: 50ms: %v", err)
	}
	if mc := batch.memberConfig("", "", &security{}); mc.WatchBatchWindow != 50*time.Millisecond {
		t.Errorf("member watch batch window %v, want 50ms", mc.WatchBatchWindow)
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
		{"name: a,b\n", `name (--name): bad name: "a,b" has ',' at byte 2`},
		{"name: bad=name\n", `name (--name): bad name: "bad=name" has '=' at byte 4`},
		{"name: ''\n", "name (--name): bad name: empty"},
		{"initial_cluster: n1=127.0.0.1:7999\n", "lists this member, n1, at 127.0.0.1:7999, but its peer_addr (--peer-addr) is 127.0.0.1:7071"},
		{"initial_cluster: n1=127.0.0.1:7071,n 2=127.0.0.1:7072\n", `entry "n 2=127.0.0.1:7072": bad name: "n 2" has ' ' at byte 2`},
		{"initial_cluster: n1=127.0.0.1:7071,n2=127.0.0.1:7071\n", "members n1 and n2 both listed at 127.0.0.1:7071"},
		{"initial_cluster: n1=127.0.0.1:7071,n1=127.0.0.1:7072\n", "member n1 listed twice"},
		{"initial_cluster: n2=127.0.0.1:7072,n3=127.0.0.1:7073\n", `this member's name "n1" is not in "n2=127.0.0.1:7072,n3=127.0.0.1:7073" (--name)`},
		{"store_scrub_interval: -1m\n", "store_scrub_interval must not be negative"},
		{"watch_max_lag_epochs: 0\n", "watch_max_lag_epochs must be at least 1, or -1 for no bound, got 0"},
		{"watch_batch_window: 2s\n", "watch_batch_window must be between 0 and 1s, got 2s"},
		{"watch_batch_window: -1ms\n", "watch_batch_window must be between 0 and 1s, got -1ms"},
		{"watch_max_lag_epochs: -2\n", "watch_max_lag_epochs must be at least 1, or -1 for no bound, got -2"},
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

// TestLogSettingsFromTheFile: log_level and log_format are config keys
// too, and a bad value names the key and its flag.
func TestLogSettingsFromTheFile(t *testing.T) {
	c := DefaultConfig()
	if err := c.LoadConfigFile(writeFile(t, "log_level: debug\nlog_format: json\n")); err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	logger, err := c.NewLogger(&buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.Debug("hello")
	if !strings.Contains(buf.String(), `"level":"DEBUG"`) {
		t.Fatalf("debug line in json: %q", buf.String())
	}
	for _, tc := range []struct{ yaml, want string }{
		{"log_level: loud\n", `log_level (--log-level) "loud"`},
		{"log_format: xml\n", `log_format (--log-format) "xml"`},
	} {
		c := DefaultConfig()
		if err := c.LoadConfigFile(writeFile(t, tc.yaml)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewLogger(&buf); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %s", tc.yaml, err, tc.want)
		}
	}
}

// TestConfigTakesUserDefinedFunctions: the config file's guardrails: map
// takes user_defined_functions_enabled, which defaults to false.
func TestConfigTakesUserDefinedFunctions(t *testing.T) {
	if DefaultConfig().Guardrails.UserDefinedFunctionsEnabled {
		t.Fatal("user_defined_functions_enabled defaults to true")
	}
	c := DefaultConfig()
	if err := c.LoadConfigFile(writeFile(t, "guardrails:\n  user_defined_functions_enabled: true\n")); err != nil {
		t.Fatal(err)
	}
	if !c.Guardrails.UserDefinedFunctionsEnabled {
		t.Fatal("the config file did not set user_defined_functions_enabled")
	}
	c = DefaultConfig()
	want := `line 2: guardrail user_defined_functions_enabled="yes": not true or false`
	if err := c.LoadConfigFile(writeFile(t, "guardrails:\n  user_defined_functions_enabled: yes\n")); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestRateLimitConfig: the settings' bounds, names in the errors, the
// config file keys, and what the member is given.
func TestRateLimitConfig(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		burst int
		err   string
	}{
		{0, 0, ""},
		{0.01, 2, ""},
		{5, 0, ""},
		{-1, 0, "ddl_rate_per_identity must be 0 (no limit) or between 0.001 and 1e+06"},
		{0.0001, 0, "ddl_rate_per_identity"},
		{1e7, 0, "ddl_rate_per_identity"},
		{1, -1, "ddl_burst_per_identity must be between 1 and 1000000"},
		{1, 2_000_000, "ddl_burst_per_identity"},
		{0, 5, "ddl_burst_per_identity needs ddl_rate_per_identity"},
	} {
		c := DefaultConfig()
		c.DDLRatePerIdentity, c.DDLBurstPerIdentity = tc.rate, tc.burst
		err := c.validate()
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("rate %v burst %d: %v, want %q", tc.rate, tc.burst, err, tc.err)
		}
	}
	path := filepath.Join(t.TempDir(), "metalog.yaml")
	testkit.WriteFile(t, path, []byte("ddl_rate_per_identity: 0.5\nddl_burst_per_identity: 20\n"))
	c := DefaultConfig()
	if err := c.LoadConfigFile(path); err != nil {
		t.Fatal(err)
	}
	mc := c.memberConfig("", "", &security{})
	if mc.DDLRatePerIdentity != 0.5 || mc.DDLBurstPerIdentity != 20 {
		t.Errorf("member config rate %v burst %d", mc.DDLRatePerIdentity, mc.DDLBurstPerIdentity)
	}
}
