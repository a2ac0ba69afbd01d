package server

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/loopback"
	"github.com/metalog/metalog/member"
)

// Config configures one metalog server. The zero value is not usable; start
// from DefaultConfig, then apply the config file and the flags.
type Config struct {
	// DataDir holds the raft log (raft.db) and the schema store (schema.db).
	// Default "./metalog-data".
	DataDir string `yaml:"data_dir"`
	// Name is this member's name in InitialCluster, by the name rule
	// (access.CheckName). Default "n1".
	Name string `yaml:"name"`
	// GRPCAddr is the client gRPC listen address. Default 127.0.0.1:7070.
	GRPCAddr string `yaml:"grpc_addr"`
	// HTTPAddr is the HTTP (grpc-gateway, /metrics, /healthz, /readyz)
	// listen address. Default 127.0.0.1:7080.
	HTTPAddr string `yaml:"http_addr"`
	// PeerAddr is the address peers reach this member on. Default
	// 127.0.0.1:7071.
	PeerAddr string `yaml:"peer_addr"`
	// CQLAddr is the listen address of the CQL native protocol listener
	// (package cqlserver; experimental: DDL, and the system tables drivers
	// read); "" turns it off. It is a client listener: client TLS, the
	// loopback rule and the connection caps apply to it as to GRPCAddr.
	// With authentication on, its clients authenticate with the same
	// tokens and client certificates. Default DefaultCQLAddr,
	// 127.0.0.1:9042.
	CQLAddr string `yaml:"cql_addr"`
	// InitialCluster lists the founding members as name=host:port,...
	// Default: this member alone (Name=PeerAddr). It must list Name at
	// PeerAddr, each name and address once. Used only when the data dir is
	// new; a restarted member knows its cluster from its log.
	InitialCluster string `yaml:"initial_cluster"`
	// Join is the gRPC address of a member of a running cluster that this
	// new member joins (after `metalog cluster add` named it). Used only
	// when the data dir is new; excludes InitialCluster.
	Join string `yaml:"join"`
	// ForceNewCluster (--force-new-cluster, a flag only: it must not stay
	// on in a config file) makes this member the only voter of a new
	// cluster, with a new cluster id, before it starts, after the others
	// are lost for good; it is refused while they answer
	// (member.Config.ForceNewCluster).
	ForceNewCluster bool `yaml:"-"`
	// RequestTimeout bounds a request that carries no deadline of its own.
	// Default 10s.
	RequestTimeout Duration `yaml:"request_timeout"`
	// DrainTimeout bounds a drain (SIGTERM, SIGINT): how long requests in
	// flight may take to finish before the listeners close under them.
	// Change feeds (watch) do not wait for it: they end at once with
	// Unavailable, and their clients resume on another member. Default
	// 10s.
	DrainTimeout Duration `yaml:"drain_timeout"`
	// EnablePprof serves Go's /debug/pprof/ on the HTTP listener: with
	// authentication on, to callers holding the operator role for every
	// keyspace; with it off, only when HTTPAddr is a loopback address
	// (validatePprof refuses the rest). Default false.
	EnablePprof bool `yaml:"enable_pprof"`
	// MetricsIdentityLabels labels the metrics about identities (today
	// metalog_ddl_rate_limited_total) by the identity (token:NAME,
	// cert:CN, anonymous). /metrics is open to anyone who reaches the
	// HTTP listener, so by default (false) they carry no identity label
	// and name no token or certificate.
	MetricsIdentityLabels bool `yaml:"metrics_identity_labels"`
	// LogLevel is the least level logged: debug, info, warn or error.
	// Default info.
	LogLevel string `yaml:"log_level"`
	// LogFormat is how log lines are written to standard error: text
	// (key=value) or json. Default text.
	LogFormat string `yaml:"log_format"`
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
	// HistoryRetentionEpochs is how many epochs of history (watch,
	// history, at-epoch reads) each member keeps; older ones are pruned.
	// Default 1000000.
	HistoryRetentionEpochs uint64 `yaml:"history_retention_epochs"`
	// StoreScrubInterval is how often each member re-reads its schema
	// store in the background at a bounded pace, checks every checksum
	// and the schema digest, and rewrites a damaged store from the
	// applied metadata (ERROR, metalog_store_corruptions_total, /readyz
	// degraded). 0 disables it. Default 1h.
	StoreScrubInterval Duration `yaml:"store_scrub_interval"`
	// MinFreeSpaceBytes is the free space the data dir's filesystem must
	// keep: below it the member raises its NOSPACE alarm and refuses DDL
	// and guardrail changes until space is back. Default 64 MiB.
	MinFreeSpaceBytes uint64 `yaml:"min_free_space_bytes"`
	// WatchProgressInterval is how long a watch stream may stay silent
	// before the member sends a progress message with its epoch. Default
	// 5s.
	WatchProgressInterval Duration `yaml:"watch_progress_interval"`
	// WatchMaxLagEpochs is how many epochs a watch stream that has caught
	// up may fall behind again before the member cuts it with
	// WATCH_LAGGING, naming the epoch to resume from. -1: no bound.
	// Default 65536 (member.DefaultWatchMaxLag).
	WatchMaxLagEpochs int64 `yaml:"watch_max_lag_epochs"`
	// WatchBatchWindow is the least time between two messages of a watch
	// stream: a change after a quiet spell is sent at once, and those
	// applied within the window after it go out together at its end. 0
	// sends every epoch as it applies. At most 1s.
	WatchBatchWindow Duration `yaml:"watch_batch_window"`
	// Guardrails are the initial guardrail settings of a new cluster; once
	// the cluster has settings (set through the log), the file no longer
	// applies and `metalog guardrails set` changes them.
	Guardrails guardrails.Settings `yaml:"guardrails"`
	// KeyspaceGuardrails are the initial per-keyspace guardrail overrides
	// of a new cluster (scope -> settings), applied with the initial
	// guardrails; afterwards `metalog guardrails set --keyspace` changes
	// them.
	KeyspaceGuardrails guardrails.KeyspaceOverrides `yaml:"keyspace_guardrails"`

	// Security (see README "Security"). With none of the TLS and auth
	// settings, every listener must be on loopback unless Insecure is set.

	// ClientCertFile and ClientKeyFile are the PEM certificate and key the
	// client listeners (gRPC and HTTP) present. Both or neither; with
	// neither the client listeners speak plaintext. Reloaded on SIGHUP and
	// when the files change.
	ClientCertFile string `yaml:"client_cert_file"`
	ClientKeyFile  string `yaml:"client_key_file"`
	// ClientCAFile is the PEM bundle of CAs that sign client certificates.
	// When set, the client listeners ask for a certificate and a verified
	// one authenticates its subject's common name (roles from
	// AuthCertRoles). Needs ClientCertFile.
	ClientCAFile string `yaml:"client_ca_file"`
	// PeerCertFile, PeerKeyFile and PeerCAFile turn on mutual TLS between
	// members: the peer listener requires a certificate signed by a CA of
	// PeerCAFile, and this member presents PeerCertFile when it dials a
	// peer. All three or none.
	PeerCertFile string `yaml:"peer_cert_file"`
	PeerKeyFile  string `yaml:"peer_key_file"`
	PeerCAFile   string `yaml:"peer_ca_file"`
	// AuthTokenFile lists the bearer tokens, one per line as
	// "name sha256hex role,role" (`metalog token hash` prints the hash).
	// Reloaded on SIGHUP and when the file changes.
	AuthTokenFile string `yaml:"auth_token_file"`
	// AuthCertRoles maps a client certificate's subject common name to its
	// roles (reader, ddl, operator): in YAML a map of CN to a list of roles,
	// as a flag "CN=role,role;CN2=role".
	AuthCertRoles CertRoles `yaml:"auth_cert_roles"`
	// Insecure allows non-loopback listeners without TLS and
	// authentication (a WARN at start-up). Default false.
	Insecure bool `yaml:"insecure"`
	// InsecurePeer allows a peer port without mutual TLS while
	// authentication is on (a WARN at start-up and in /readyz): without
	// it such a start is refused, since anyone who can connect to the
	// peer port can act as a member. Default false.
	InsecurePeer bool `yaml:"insecure_peer"`
	// MaxRequestBytes is the largest request a client may send, in bytes
	// (gRPC message, HTTP body, CQL frame body). Default 1.5 MiB (1572864), as etcd.
	MaxRequestBytes int `yaml:"max_request_bytes"`
	// MaxStatementsPerRequest is the most statements one Execute may
	// carry. Default 10000.
	MaxStatementsPerRequest int `yaml:"max_statements_per_request"`
	// MaxConcurrentRequestsPerConnection is the most requests one client
	// connection (gRPC, HTTP/2 or CQL) may have in flight. Default 64.
	MaxConcurrentRequestsPerConnection int `yaml:"max_concurrent_requests_per_connection"`
	// MaxWatchStreams is the most long-lived streams open on this member
	// at once, every identity together: watches (gRPC Watch, GET
	// /v1/watch) and backup downloads (Backup, GET /v1/backup).
	// One more is refused at once with Unavailable (HTTP 503, ErrorInfo
	// TOO_MANY_STREAMS): its client watches through another member.
	// Default 10000.
	MaxWatchStreams int `yaml:"max_watch_streams"`
	// MaxWatchStreamsPerIdentity is the most such streams one identity
	// (token, certificate CN, or "anonymous" for everyone when auth is
	// off) may have open on this member; one more is refused at once with
	// ResourceExhausted (HTTP 429, ErrorInfo TOO_MANY_STREAMS), so that
	// one identity cannot take every stream. Default 2500.
	MaxWatchStreamsPerIdentity int `yaml:"max_watch_streams_per_identity"`
	// MaxConnections is the most connections each client listener (gRPC,
	// HTTP, CQL) holds open; a connection past it is closed as soon as it is
	// accepted. Default 0: a quarter of the process's open-file limit
	// (ulimit -n) at start, at most 10000, so that connections cannot use
	// up the descriptors the member needs for its own files.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerSource is the most connections each client listener
	// holds open from one IP address; past it, as past MaxConnections.
	// Default 0: half of MaxConnections.
	MaxConnectionsPerSource int `yaml:"max_connections_per_source"`
	// IdleTimeout closes a client connection that has had no request in
	// flight for this long: HTTP keep-alive and HTTP/2 connections, and
	// gRPC connections (with a GOAWAY: a client reconnects at its next
	// call), and CQL connections not registered for events. Default 1m.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// RequestReadTimeout bounds how long a client may take to send a
	// request: an HTTP request's headers (the TLS handshake included),
	// then, counted anew, its body; and a new gRPC connection's handshake
	// (TLS and HTTP/2). Default 10s.
	RequestReadTimeout Duration `yaml:"request_read_timeout"`
	// DDLRatePerIdentity is how many schema changes (statements) per
	// second each identity (token, certificate CN, or "anonymous" for
	// everyone when auth is off) may make through this member, as a token
	// bucket of DDLBurstPerIdentity changes. Default 0: no limit.
	DDLRatePerIdentity float64 `yaml:"ddl_rate_per_identity"`
	// DDLBurstPerIdentity is how many changes an identity's full bucket
	// holds. Default: DDLRatePerIdentity rounded up, at least 1.
	DDLBurstPerIdentity int `yaml:"ddl_burst_per_identity"`
}

// DefaultCQLAddr is CQLAddr's default: the port Cassandra drivers dial
// when given none, on loopback.
const DefaultCQLAddr = "127.0.0.1:9042"

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		DataDir:        "metalog-data",
		Name:           "n1",
		GRPCAddr:       "127.0.0.1:7070",
		HTTPAddr:       "127.0.0.1:7080",
		PeerAddr:       "127.0.0.1:7071",
		CQLAddr:        DefaultCQLAddr,
		RequestTimeout: Duration(10 * time.Second),
		DrainTimeout:   Duration(10 * time.Second),
		LogLevel:       "info",
		LogFormat:      "text",

		SchemaFlushCoalescingWindow: Duration(time.Second),
		MaxMutationSize:             16 << 20,
		SnapshotIntervalEntries:     10000,
		SnapshotCatchUpEntries:      5000,
		SnapshotChunkSize:           2 << 20,
		SnapshotMaxConcurrentSends:  2,
		HistoryRetentionEpochs:      1_000_000,
		MinFreeSpaceBytes:           64 << 20,
		StoreScrubInterval:          Duration(time.Hour),
		WatchProgressInterval:       Duration(5 * time.Second),
		WatchMaxLagEpochs:           member.DefaultWatchMaxLag,
		Guardrails:                  guardrails.Defaults(),

		MaxRequestBytes:                    1572864,
		MaxStatementsPerRequest:            10000,
		MaxConcurrentRequestsPerConnection: 64,
		MaxWatchStreams:                    10000,
		MaxWatchStreamsPerIdentity:         2500,
		IdleTimeout:                        Duration(time.Minute),
		RequestReadTimeout:                 Duration(10 * time.Second),
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
// so a misspelt setting is never silently ignored; errors name the file,
// the line and the key.
func (c *Config) LoadConfigFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := checkConfigDocument(&doc); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// InitialMembers parses InitialCluster (or returns this member alone when
// empty). It refuses a name that breaks the name rule (access.CheckName),
// a name or a peer address listed twice, and a list without this member's
// name. (validate also refuses an entry for this member whose address is
// not PeerAddr.)
func (c *Config) InitialMembers() ([]member.InitialMember, error) {
	if strings.TrimSpace(c.InitialCluster) == "" {
		return []member.InitialMember{{Name: c.Name, PeerAddr: c.PeerAddr}}, nil
	}
	var out []member.InitialMember
	names, addrs := map[string]bool{}, map[string]string{}
	for _, part := range strings.Split(c.InitialCluster, ",") {
		part = strings.TrimSpace(part)
		name, addr, ok := strings.Cut(part, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("initial_cluster (--initial-cluster): %q is not name=host:port", part)
		}
		if err := access.CheckName(name); err != nil {
			return nil, fmt.Errorf("initial_cluster (--initial-cluster): entry %q: %w", part, err)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("initial_cluster (--initial-cluster): member %s: %v", name, err)
		}
		if names[name] {
			return nil, fmt.Errorf("initial_cluster (--initial-cluster): member %s listed twice", name)
		}
		if other, dup := addrs[addr]; dup {
			return nil, fmt.Errorf("initial_cluster (--initial-cluster): members %s and %s both listed at %s: every member needs its own peer address", other, name, addr)
		}
		names[name], addrs[addr] = true, name
		out = append(out, member.InitialMember{Name: name, PeerAddr: addr})
	}
	if !names[c.Name] {
		return nil, fmt.Errorf("initial_cluster (--initial-cluster): this member's name %q is not in %q (--name): list every founding member, this one included, with the same --initial-cluster on each", c.Name, c.InitialCluster)
	}
	return out, nil
}

// checkOwnEntry refuses an InitialCluster whose entry for this member is
// not at PeerAddr: the other members would send to an address it does not
// listen on, and it would wait for them for ever. The addresses are
// compared as written, as a join compares the address `cluster add` gave
// with --peer-addr: PeerAddr is both where this member listens and where
// the others reach it.
func (c *Config) checkOwnEntry(members []member.InitialMember) error {
	for _, im := range members {
		if im.Name == c.Name && im.PeerAddr != c.PeerAddr {
			return fmt.Errorf("config: initial_cluster (--initial-cluster) lists this member, %s, at %s, but its peer_addr (--peer-addr) is %s: "+
				"the other members would reach it where it does not listen; give the same address in both", c.Name, im.PeerAddr, c.PeerAddr)
		}
	}
	return nil
}

// validate checks every field and names the one that is wrong.
func (c *Config) validate() error {
	if c.DataDir == "" {
		return errors.New("config: data_dir must not be empty")
	}
	if err := access.CheckName(c.Name); err != nil {
		return fmt.Errorf("config: name (--name): %w", err)
	}
	for _, a := range append(c.clientAddrs(), addrSetting{"peer_addr", c.PeerAddr}) {
		if _, _, err := net.SplitHostPort(a.v); err != nil {
			return fmt.Errorf("config: %s %q: %v", a.field, a.v, err)
		}
	}
	if c.RequestTimeout <= 0 {
		return fmt.Errorf("config: request_timeout must be positive, got %v", time.Duration(c.RequestTimeout))
	}
	if c.DrainTimeout <= 0 {
		return fmt.Errorf("config: drain_timeout (--drain-timeout) must be positive, got %v", time.Duration(c.DrainTimeout))
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
	if c.HistoryRetentionEpochs == 0 {
		return errors.New("config: history_retention_epochs must be at least 1")
	}
	if c.MinFreeSpaceBytes == 0 {
		return errors.New("config: min_free_space_bytes must be at least 1 (1 raises the NOSPACE alarm only when a write finds no space)")
	}
	if c.WatchMaxLagEpochs == 0 || c.WatchMaxLagEpochs < -1 {
		return fmt.Errorf("config: watch_max_lag_epochs must be at least 1, or -1 for no bound, got %d", c.WatchMaxLagEpochs)
	}
	if c.WatchBatchWindow < 0 || c.WatchBatchWindow > Duration(time.Second) {
		return fmt.Errorf("config: watch_batch_window must be between 0 and 1s, got %v", time.Duration(c.WatchBatchWindow))
	}
	if c.WatchProgressInterval < Duration(100*time.Millisecond) {
		return fmt.Errorf("config: watch_progress_interval must be at least 100ms, got %v", time.Duration(c.WatchProgressInterval))
	}
	if err := c.Guardrails.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if c.StoreScrubInterval < 0 {
		return fmt.Errorf("config: store_scrub_interval must not be negative (0 disables scrubs), got %v", time.Duration(c.StoreScrubInterval))
	}
	if c.SchemaFlushCoalescingWindow < 0 {
		return fmt.Errorf("config: schema_flush_coalescing_window must not be negative, got %v", time.Duration(c.SchemaFlushCoalescingWindow))
	}
	initial, err := c.InitialMembers()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := c.checkOwnEntry(initial); err != nil {
		return err
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	if err := c.validatePprof(); err != nil {
		return err
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

// memberConfig is the member's part of c, with the addresses the client
// listeners were bound to and the peer and join TLS of the loaded security
// material.
func (c *Config) memberConfig(grpcAddr, httpAddr string, sec *security) member.Config {
	initial, _ := c.InitialMembers() // validated
	if strings.TrimSpace(c.InitialCluster) == "" {
		initial = nil // this member alone
	}
	mc := member.Config{
		DataDir: c.DataDir, Name: c.Name, PeerAddr: c.PeerAddr, GRPCAddr: grpcAddr, HTTPAddr: httpAddr,
		InitialCluster: initial, Join: c.Join, JoinTLS: sec.joinTLS, ForceNewCluster: c.ForceNewCluster,
		RequestTimeout:             time.Duration(c.RequestTimeout),
		FlushWindow:                time.Duration(c.SchemaFlushCoalescingWindow),
		MaxMutationSize:            c.MaxMutationSize,
		SnapshotEntries:            c.SnapshotIntervalEntries,
		SnapshotCatchUpEntries:     c.SnapshotCatchUpEntries,
		SnapshotChunkSize:          c.SnapshotChunkSize,
		SnapshotMaxConcurrentSends: c.SnapshotMaxConcurrentSends,
		Guardrails:                 c.Guardrails,
		KeyspaceGuardrails:         c.KeyspaceGuardrails,
		MaxStatementsPerRequest:    c.MaxStatementsPerRequest,
		DDLRatePerIdentity:         c.DDLRatePerIdentity,
		DDLBurstPerIdentity:        c.DDLBurstPerIdentity,
		HistoryRetention:           c.HistoryRetentionEpochs,
		WatchProgressInterval:      time.Duration(c.WatchProgressInterval),
		WatchBatchWindow:           time.Duration(c.WatchBatchWindow),
		WatchMaxLag:                c.WatchMaxLagEpochs,
		MinFreeSpaceBytes:          c.MinFreeSpaceBytes,
		StoreScrubInterval:         time.Duration(c.StoreScrubInterval),
		MetricsIdentityLabels:      c.MetricsIdentityLabels,
		InsecurePeer:               c.insecurePeer(),
	}
	if sec.peerTLS != nil {
		mc.PeerServerTLS = sec.peerTLS.serverConfig(tls.RequireAndVerifyClientCert, "h2")
		mc.PeerClientTLS = sec.peerTLS.clientConfig()
	}
	return mc
}

// NewLogger returns the logger LogLevel and LogFormat ask for, writing to
// w, or an error naming the setting that is wrong.
func (c *Config) NewLogger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("config: log_level (--log-level) %q: want debug, info, warn or error", c.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("config: log_format (--log-format) %q: want text or json", c.LogFormat)
}

// clientTLS reports whether the client listeners use TLS.
func (c *Config) clientTLS() bool { return c.ClientCertFile != "" }

// peerTLS reports whether members use mutual TLS between them.
func (c *Config) peerTLS() bool { return c.PeerCertFile != "" }

// authEnabled reports whether clients must authenticate.
func (c *Config) authEnabled() bool { return c.AuthTokenFile != "" || c.ClientCAFile != "" }

// validateSecurity checks the TLS, auth and limit settings, and the safe
// default: without TLS and authentication, only loopback addresses unless
// insecure is set.
func (c *Config) validateSecurity() error {
	if (c.ClientCertFile == "") != (c.ClientKeyFile == "") {
		return errors.New("config: client_cert_file and client_key_file go together: set both or neither")
	}
	if c.ClientCAFile != "" && c.ClientCertFile == "" {
		return errors.New("config: client_ca_file needs client_cert_file and client_key_file: client certificates are only asked for over TLS")
	}
	if n := nonEmpty(c.PeerCertFile, c.PeerKeyFile, c.PeerCAFile); n != 0 && n != 3 {
		return errors.New("config: peer_cert_file, peer_key_file and peer_ca_file go together: set all three (mutual TLS between members) or none")
	}
	if _, err := c.AuthCertRoles.Map(); err != nil {
		return fmt.Errorf("config: auth_cert_roles: %w", err)
	}
	if c.AuthCertRoles != "" && c.ClientCAFile == "" {
		return errors.New("config: auth_cert_roles needs client_ca_file: without it no client certificate is verified")
	}
	if c.MaxRequestBytes < 4096 {
		return fmt.Errorf("config: max_request_bytes must be at least 4096, got %d", c.MaxRequestBytes)
	}
	if c.MaxStatementsPerRequest < 1 {
		return fmt.Errorf("config: max_statements_per_request must be at least 1, got %d", c.MaxStatementsPerRequest)
	}
	if c.MaxConcurrentRequestsPerConnection < 1 {
		return fmt.Errorf("config: max_concurrent_requests_per_connection must be at least 1, got %d", c.MaxConcurrentRequestsPerConnection)
	}
	if err := c.validateRateLimit(); err != nil {
		return err
	}
	if err := c.validateFloodLimits(); err != nil {
		return err
	}
	if err := c.validatePeerTrust(); err != nil {
		return err
	}
	if c.Insecure {
		return nil
	}
	for _, a := range c.clientAddrs() {
		if !loopback.Is(a.v) && !(c.clientTLS() && c.authEnabled()) {
			return fmt.Errorf("config: %s %s is not a loopback address, and the client listeners have no TLS and authentication: "+
				"set client_cert_file, client_key_file and auth_token_file or client_ca_file, or pass --insecure (insecure: true) to let anyone who reaches it change the schema", a.field, a.v)
		}
	}
	if !loopback.Is(c.PeerAddr) && !c.peerTLS() {
		return fmt.Errorf("config: peer_addr %s is not a loopback address, and members have no mutual TLS: "+
			"set peer_cert_file, peer_key_file and peer_ca_file, or pass --insecure (insecure: true) to let anyone who reaches it join the cluster", c.PeerAddr)
	}
	return nil
}

// addrSetting is an address setting: its key and its value.
type addrSetting struct{ field, v string }

// clientAddrs are the addresses of the client listeners that are on:
// grpc_addr, http_addr, and cql_addr when set.
func (c *Config) clientAddrs() []addrSetting {
	out := []addrSetting{{"grpc_addr", c.GRPCAddr}, {"http_addr", c.HTTPAddr}}
	if c.CQLAddr != "" {
		out = append(out, addrSetting{"cql_addr", c.CQLAddr})
	}
	return out
}

// insecureExposure lists the listeners that are reachable from other hosts
// without the protection they need, for the start-up WARN under insecure.
func (c *Config) insecureExposure() []string {
	var out []string
	if !(c.clientTLS() && c.authEnabled()) {
		for _, a := range c.clientAddrs() {
			if !loopback.Is(a.v) {
				out = append(out, a.v)
			}
		}
	}
	if !c.peerTLS() && !loopback.Is(c.PeerAddr) {
		out = append(out, c.PeerAddr)
	}
	return out
}

func nonEmpty(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

// CertRoles maps client certificate common names to roles. It is kept in
// its canonical text form, "CN=role,role;CN2=role" (sorted by CN), so that
// Config stays comparable.
type CertRoles string

// UnmarshalYAML reads a map of CN to a list of roles (or the text form).
func (r *CertRoles) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*r = CertRoles(s)
		return nil
	}
	var m map[string][]string
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("line %d: auth_cert_roles: want a map of certificate common name to a list of roles", n.Line)
	}
	cns := make([]string, 0, len(m))
	for cn := range m {
		if strings.ContainsAny(cn, ";") {
			return fmt.Errorf("line %d: auth_cert_roles: common name %q must not contain ';'", n.Line, cn)
		}
		cns = append(cns, cn)
	}
	slices.Sort(cns)
	parts := make([]string, len(cns))
	for i, cn := range cns {
		parts[i] = cn + "=" + strings.Join(m[cn], ",")
	}
	*r = CertRoles(strings.Join(parts, ";"))
	return nil
}

// Map parses the roles by common name.
func (r CertRoles) Map() (map[string]access.Grants, error) {
	out := map[string]access.Grants{}
	for _, part := range strings.Split(string(r), ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		i := strings.LastIndexByte(part, '=')
		if i <= 0 {
			return nil, fmt.Errorf("%q is not CN=role,role", part)
		}
		cn := strings.TrimSpace(part[:i])
		roles, err := access.ParseGrants(strings.Split(part[i+1:], ","))
		if err != nil {
			return nil, fmt.Errorf("common name %q: %w", cn, err)
		}
		out[cn] = append(out[cn], roles...)
	}
	return out, nil
}

// Bounds of the rate limit's settings: the interval of one change (1/rate)
// times the most statements of a request must fit in a time.Duration.
const (
	minDDLRate  = 0.001
	maxDDLRate  = 1e6
	maxDDLBurst = 1_000_000
)

// validateRateLimit checks ddl_rate_per_identity and
// ddl_burst_per_identity.
func (c *Config) validateRateLimit() error {
	if r := c.DDLRatePerIdentity; r != 0 && !(r >= minDDLRate && r <= maxDDLRate) {
		return fmt.Errorf("config: ddl_rate_per_identity must be 0 (no limit) or between %g and %g changes per second, got %v", minDDLRate, maxDDLRate, r)
	}
	if b := c.DDLBurstPerIdentity; b < 0 || b > maxDDLBurst {
		return fmt.Errorf("config: ddl_burst_per_identity must be between 1 and %d, or 0 for the rate rounded up, got %d", maxDDLBurst, b)
	}
	if c.DDLBurstPerIdentity != 0 && c.DDLRatePerIdentity == 0 {
		return errors.New("config: ddl_burst_per_identity needs ddl_rate_per_identity: without a rate there is no limit")
	}
	return nil
}
