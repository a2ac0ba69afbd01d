package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/raftlog"
)

// Config configures one metalog server. The zero value is not usable; start
// from DefaultConfig, then apply the config file and the flags.
type Config struct {
	// DataDir holds the raft log (raft.db) and the schema store (schema.db).
	// Default "./metalog-data".
	DataDir string `yaml:"data_dir"`
	// Name is this member's name in InitialCluster. Default "n1".
	Name string `yaml:"name"`
	// GRPCAddr is the client gRPC listen address. Default 127.0.0.1:7070.
	GRPCAddr string `yaml:"grpc_addr"`
	// HTTPAddr is the HTTP (grpc-gateway, /metrics, /healthz, /readyz)
	// listen address. Default 127.0.0.1:7080.
	HTTPAddr string `yaml:"http_addr"`
	// PeerAddr is the address peers reach this member on. Default
	// 127.0.0.1:7071.
	PeerAddr string `yaml:"peer_addr"`
	// InitialCluster lists the founding members as name=host:port,...
	// Default: this member alone (Name=PeerAddr). Used only when the data
	// dir is new; a restarted member knows its cluster from its log.
	InitialCluster string `yaml:"initial_cluster"`
	// Join is the gRPC address of a member of a running cluster that this
	// new member joins (after `metalog cluster add` named it). Used only
	// when the data dir is new; excludes InitialCluster.
	Join string `yaml:"join"`
	// RequestTimeout bounds a request that carries no deadline of its own.
	// Default 10s.
	RequestTimeout Duration `yaml:"request_timeout"`
	// PeerFaults injects message faults into the peer transport (tests
	// only; not settable from the file).
	PeerFaults *raftlog.Faults `yaml:"-"`
	// SchemaFlushCoalescingWindow is how long applied schema changes may
	// wait to be merged into one schema store transaction. 0 writes them
	// before each DDL is acknowledged. Default 1s. Safe because the raft
	// log, fsynced before every acknowledgement, covers what is not flushed.
	SchemaFlushCoalescingWindow Duration `yaml:"schema_flush_coalescing_window"`
	// MaxMutationSize is the largest metadata snapshot in bytes: a larger
	// one is not stored (ERROR, metric, /readyz degraded), and the
	// metadata_size guardrail refuses DDL that would pass it. Default 16 MiB.
	MaxMutationSize int64 `yaml:"max_mutation_size"`
	// SnapshotIntervalEntries is how many applied log entries pass between
	// metadata snapshots (after which the log is compacted). Default 10000.
	SnapshotIntervalEntries uint64 `yaml:"snapshot_interval_entries"`
	// SnapshotCatchUpEntries is how many log entries are kept behind a
	// snapshot for followers that are only a little behind. Default 5000.
	SnapshotCatchUpEntries uint64 `yaml:"snapshot_catch_up_entries"`
	// SnapshotChunkSize is the chunk size of snapshot transfers to
	// followers, in bytes. Default 2 MiB.
	SnapshotChunkSize int `yaml:"snapshot_chunk_size"`
	// SnapshotMaxConcurrentSends limits snapshot sends to followers
	// running at once; more wait their turn. Default 2.
	SnapshotMaxConcurrentSends int `yaml:"snapshot_max_concurrent_sends"`
	// Guardrails are the initial guardrail settings of a new cluster; once
	// the cluster has settings (set through the log), the file no longer
	// applies and `metalog guardrails set` changes them.
	Guardrails guardrails.Settings `yaml:"guardrails"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		DataDir:        "metalog-data",
		Name:           "n1",
		GRPCAddr:       "127.0.0.1:7070",
		HTTPAddr:       "127.0.0.1:7080",
		PeerAddr:       "127.0.0.1:7071",
		RequestTimeout: Duration(10 * time.Second),

		SchemaFlushCoalescingWindow: Duration(time.Second),
		MaxMutationSize:             16 << 20,
		SnapshotIntervalEntries:     10000,
		SnapshotCatchUpEntries:      5000,
		SnapshotChunkSize:           2 << 20,
		SnapshotMaxConcurrentSends:  2,
		Guardrails:                  guardrails.Defaults(),
	}
}

// Duration is a time.Duration written in YAML as a Go duration ("250ms").
type Duration time.Duration

// UnmarshalYAML reads a duration string such as "1s" or "250ms".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: want a duration such as \"1s\"", n.Line)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (use e.g. \"1s\", \"250ms\")", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// LoadConfigFile reads a YAML config file over c. Unknown keys are errors,
// so a misspelt setting is never silently ignored.
func (c *Config) LoadConfigFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// Member is one entry of the initial cluster.
type Member struct {
	// Name is the member's name.
	Name string
	// PeerAddr is where peers reach it.
	PeerAddr string
}

// Members parses InitialCluster (or returns this member alone when empty).
func (c *Config) Members() ([]Member, error) {
	if strings.TrimSpace(c.InitialCluster) == "" {
		return []Member{{Name: c.Name, PeerAddr: c.PeerAddr}}, nil
	}
	var out []Member
	seen := map[string]bool{}
	for _, part := range strings.Split(c.InitialCluster, ",") {
		part = strings.TrimSpace(part)
		name, addr, ok := strings.Cut(part, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("initial cluster: %q is not name=host:port", part)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("initial cluster: member %s: %v", name, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("initial cluster: member %s listed twice", name)
		}
		seen[name] = true
		out = append(out, Member{Name: name, PeerAddr: addr})
	}
	if !seen[c.Name] {
		return nil, fmt.Errorf("initial cluster: this member's name %q is not in %q", c.Name, c.InitialCluster)
	}
	return out, nil
}

// validate checks every field and names the one that is wrong.
func (c *Config) validate() error {
	if c.DataDir == "" {
		return errors.New("config: data_dir must not be empty")
	}
	if c.Name == "" {
		return errors.New("config: name must not be empty")
	}
	for _, a := range []struct{ field, v string }{{"grpc_addr", c.GRPCAddr}, {"http_addr", c.HTTPAddr}, {"peer_addr", c.PeerAddr}} {
		if _, _, err := net.SplitHostPort(a.v); err != nil {
			return fmt.Errorf("config: %s %q: %v", a.field, a.v, err)
		}
	}
	if c.RequestTimeout <= 0 {
		return fmt.Errorf("config: request_timeout must be positive, got %v", time.Duration(c.RequestTimeout))
	}
	if c.MaxMutationSize <= 0 {
		return fmt.Errorf("config: max_mutation_size must be positive, got %d", c.MaxMutationSize)
	}
	if c.SnapshotIntervalEntries == 0 {
		return errors.New("config: snapshot_interval_entries must be positive")
	}
	if c.SnapshotChunkSize < 4096 || c.SnapshotChunkSize > 64<<20 {
		return fmt.Errorf("config: snapshot_chunk_size must be between 4096 and 67108864 bytes, got %d", c.SnapshotChunkSize)
	}
	if c.SnapshotMaxConcurrentSends < 1 {
		return fmt.Errorf("config: snapshot_max_concurrent_sends must be at least 1, got %d", c.SnapshotMaxConcurrentSends)
	}
	if err := c.Guardrails.Validate(); err != nil {
		return fmt.Errorf("config: guardrails: %w", err)
	}
	if c.SchemaFlushCoalescingWindow < 0 {
		return fmt.Errorf("config: schema_flush_coalescing_window must not be negative, got %v", time.Duration(c.SchemaFlushCoalescingWindow))
	}
	if _, err := c.Members(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if c.Join != "" {
		if c.InitialCluster != "" {
			return errors.New("config: join and initial_cluster exclude each other: a joining member learns the cluster from the member it joins")
		}
		if _, _, err := net.SplitHostPort(c.Join); err != nil {
			return fmt.Errorf("config: join %q: %v", c.Join, err)
		}
	}
	return nil
}
