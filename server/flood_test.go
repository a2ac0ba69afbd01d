package server

import (
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestConnectionCaps: the defaults follow the open-file limit.
func TestConnectionCaps(t *testing.T) {
	for _, tc := range []struct {
		maxConns, perSource int
		nofile              uint64
		wantMax, wantSource int
	}{
		{0, 0, 0, 10000, 5000},
		{0, 0, 1024, 256, 128},
		{0, 0, 1 << 20, 10000, 5000},
		{0, 0, 2, 1, 1},
		{100, 0, 1024, 100, 50},
		{0, 7, 1024, 256, 7},
		{9, 3, 1024, 9, 3},
	} {
		c := DefaultConfig()
		c.MaxConnections, c.MaxConnectionsPerSource = tc.maxConns, tc.perSource
		if gotMax, gotSource := c.connectionCaps(tc.nofile); gotMax != tc.wantMax || gotSource != tc.wantSource {
			t.Errorf("%+v: %d, %d", tc, gotMax, gotSource)
		}
	}
}

// TestFloodLimitsConfig: the settings' bounds, names in the errors, and
// the config file keys.
func TestFloodLimitsConfig(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(*Config) {}, ""},
		{func(c *Config) { c.MaxWatchStreams = 0 }, "max_watch_streams must be at least 1"},
		{func(c *Config) { c.MaxWatchStreamsPerIdentity = 0 }, "max_watch_streams_per_identity must be at least 1"},
		{func(c *Config) { c.MaxConnections = -1 }, "max_connections must be at least 1, or 0"},
		{func(c *Config) { c.MaxConnectionsPerSource = -1 }, "max_connections_per_source must be at least 1, or 0"},
		{func(c *Config) { c.IdleTimeout = 0 }, "idle_timeout (--idle-timeout) must be positive"},
		{func(c *Config) { c.RequestReadTimeout = -1 }, "request_read_timeout (--request-read-timeout) must be positive"},
	} {
		c := DefaultConfig()
		tc.set(&c)
		err := c.validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "metalog.yaml")
	testkit.WriteFile(t, path, []byte("max_watch_streams: 50\nmax_watch_streams_per_identity: 5\nmax_connections: 300\nmax_connections_per_source: 30\nidle_timeout: 90s\nrequest_read_timeout: 3s\n"))
	c := DefaultConfig()
	if err := c.LoadConfigFile(path); err != nil {
		t.Fatal(err)
	}
	if c.MaxWatchStreams != 50 || c.MaxWatchStreamsPerIdentity != 5 || c.MaxConnections != 300 || c.MaxConnectionsPerSource != 30 ||
		c.IdleTimeout != Duration(90*time.Second) || c.RequestReadTimeout != Duration(3*time.Second) {
		t.Errorf("loaded %+v", c)
	}
}

// TestCapListener: past the per-source cap a connection is closed unread;
// closing one (twice) makes room once; the listener's close ends Accept.
func TestCapListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m := newConnMetrics(reg)
	l := newCapListener(inner, "http", 10, 2, slog.New(slog.DiscardHandler), m)
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		return c
	}
	dial()
	dial()
	first, second := <-accepted, <-accepted
	third := dial()
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ne net.Error
	if _, err := third.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("a third connection from one source: read %v, want it closed", err)
	}
	if got := testutil.ToFloat64(m.refused.WithLabelValues("http", connRefusedSource)); got != 1 {
		t.Errorf("refused = %v, want 1", got)
	}
	first.Close()
	first.Close()
	dial()
	<-accepted
	if got := testutil.ToFloat64(m.open.WithLabelValues("http")); got != 2 {
		t.Errorf("open = %v, want 2", got)
	}
	if _, ok := second.(interface{ CloseWrite() error }); !ok {
		t.Errorf("a capped connection has no CloseWrite")
	}
	second.Close()
	l.Close()
	for range accepted {
	}
	for _, c := range clients {
		c.Close()
	}
}
