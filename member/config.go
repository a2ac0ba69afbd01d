package member

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/metalog/metalog/access"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/raftlog"
)

// Config configures one member. Its user-facing form is the operator's config
// file (server.Config), which checks every value and names the setting that
// is wrong; validate here only fills defaults and refuses what Start could
// not work with.
type Config struct {
	// DataDir holds the member's state: the raft log (wal/, raft.db,
	// snap/) and the schema store (schema.db). Required; created if
	// missing.
	DataDir string
	// Name is this member's name. Required; it follows the name rule
	// (access.CheckName), as do InitialCluster's. A founding member's raft
	// id is ID(Name); a member added later gets its id from the cluster
	// (AddMember) and learns it when it joins; the data dir records it.
	Name string
	// PeerAddr is the address the peer listener binds (raft log streams,
	// snapshots and the peer RPCs) and other members reach this member on.
	// Required; port 0 picks a free port (PeerAddr reports it).
	PeerAddr string
	// GRPCAddr and HTTPAddr are the addresses of this member's client
	// listeners, which the API owns; the member reports them in its status
	// (`cluster status`). Optional.
	GRPCAddr, HTTPAddr string
	// CQLAddr is the address of this member's CQL native protocol
	// listener, which the server owns; the member reports it in its
	// status, where the other members' CQL listeners learn it (their
	// system.peers and topology events). Optional.
	CQLAddr string

	// InitialCluster lists the founding members of a new cluster, this
	// member among them. It is used only when the data dir is new; empty
	// means this member alone. A restarted member knows its cluster from
	// its log.
	InitialCluster []InitialMember
	// ForceNewCluster makes this member, from its data dir, the only voter
	// of a new cluster, with a new cluster id, before it starts
	// (raftlog.ForceNewCluster): the recovery after losing the quorum for
	// good. It needs the data dir of a member, and no Join. Start first
	// asks the other members the data dir knows for their status and
	// refuses (ErrForceRefused) when those that answer make a quorum with
	// this one; a member alone (forced before, say) is not forced again.
	ForceNewCluster bool
	// Join is the client (gRPC) address of a member of a running cluster
	// that this new member joins, after `metalog cluster add` named it.
	// Used only when the data dir is new; excludes InitialCluster.
	Join string
	// JoinTLS, if not nil, secures the connection to Join's client
	// listener; nil is plaintext.
	JoinTLS *tls.Config

	// PeerServerTLS and PeerClientTLS, if not nil, turn on mutual TLS
	// between members: the peer listener (gRPC and the log streams)
	// presents PeerServerTLS, which must require and verify client
	// certificates, and this member dials peers with PeerClientTLS. Both
	// or neither. They may pick their certificates at each handshake, so
	// that reloaded files take effect.
	PeerServerTLS, PeerClientTLS *tls.Config
	// InsecurePeer says that the peer port has no TLS while clients must
	// authenticate (--insecure-peer): anyone who can reach it can act as a
	// member. Readiness says so in its detail (the member stays ready).
	InsecurePeer bool

	// RequestTimeout bounds a request whose context has no deadline.
	// Default 10s.
	RequestTimeout time.Duration
	// FlushWindow is how long applied schema changes may wait to be merged
	// into one schema store transaction (schema_flush_coalescing_window);
	// 0 writes them before each change is acknowledged.
	FlushWindow time.Duration
	// MaxMutationSize is the largest metadata snapshot in bytes, and the
	// limit of the metadata_size guardrail. Default 16 MiB.
	MaxMutationSize int64
	// SnapshotEntries is how many applied log entries pass between
	// snapshots. Default 10000.
	SnapshotEntries uint64
	// SnapshotCatchUpEntries is how many log entries are kept behind a
	// snapshot for followers a little behind. Default 5000.
	SnapshotCatchUpEntries uint64
	// SnapshotChunkSize is the size in bytes of the pieces a snapshot is
	// sent to a follower in. Default 2 MiB.
	SnapshotChunkSize int
	// SnapshotMaxConcurrentSends bounds the snapshot sends to followers
	// running at once. Default 2.
	SnapshotMaxConcurrentSends int
	// Guardrails are the initial guardrail settings of a new cluster: once
	// ready, the member proposes them unless the cluster's guardrails were
	// set already. The zero value means none (the defaults rule); the
	// API passes guardrails.Defaults() when the file sets none.
	Guardrails guardrails.Settings
	// KeyspaceGuardrails are the initial per-keyspace guardrail overrides
	// of a new cluster, proposed with Guardrails (each only if its scope
	// has no override) while the cluster's guardrails were never set.
	KeyspaceGuardrails guardrails.KeyspaceOverrides
	// MaxStatementsPerRequest is the most statements one Execute may
	// carry. Default 10000.
	MaxStatementsPerRequest int
	// DDLRatePerIdentity is how many schema changes (statements) per
	// second each identity (Request.Principal) may make through this
	// member, as a token bucket of DDLBurstPerIdentity changes; see
	// rateLimiter. 0 (the default) is no limit.
	DDLRatePerIdentity float64
	// DDLBurstPerIdentity is how many changes a full bucket holds.
	// Default: DefaultDDLBurst(DDLRatePerIdentity).
	DDLBurstPerIdentity int
	// HistoryRetention is how many epochs of history the member keeps
	// (history_retention_epochs). Default 1,000,000.
	HistoryRetention uint64
	// WatchProgressInterval is how long a watch stream may stay silent
	// before the member sends a progress message with its epoch
	// (watch_progress_interval). Default 5s.
	WatchProgressInterval time.Duration
	// WatchMaxLag is how many epochs a change feed that has reached the
	// member's epoch may fall behind it again before the member cuts it
	// with Unavailable, reason WATCH_LAGGING, naming the epoch to resume
	// from (WatchLaggingError; client.Watch resumes). A feed that far
	// behind reads and encodes its own messages instead of sharing those
	// of the feeds that keep up. A feed still catching up from the epoch
	// it asked for is never cut. Default DefaultWatchMaxLag; negative:
	// no bound.
	WatchMaxLag int64
	// WatchBatchWindow is the least time between two wakings of the
	// change feeds (watch_batch_window): a change after a quiet spell is
	// sent at once, and those applied within the window after it wait
	// for the window's end and go out together, one message per feed.
	// A fleet of feeds then costs a message per feed per window, not per
	// epoch, during a burst of DDL. 0: every epoch is sent as it applies.
	WatchBatchWindow time.Duration

	// StoreScrubInterval is how often the member scrubs its schema store
	// in the background (store_scrub_interval; see storeScrub): re-reads
	// it at a bounded pace, checks every checksum and the digest, and
	// rewrites it from the applied metadata when damaged. 0, the zero
	// value, scrubs never; the config file's default is 1h.
	StoreScrubInterval time.Duration
	// storeScrubBytesPerSecond is a scrub's read budget; 0:
	// metadata.DefaultScrubBytesPerSecond (package only: tests).
	storeScrubBytesPerSecond int64

	// MinFreeSpaceBytes is the free space the data dir's filesystem must
	// keep (min_free_space_bytes): below it the member raises its NOSPACE
	// alarm and refuses DDL and guardrail changes until space is back.
	// Default 64 MiB.
	MinFreeSpaceBytes uint64

	// Logger receives the member's logs. Default discards.
	Logger *slog.Logger
	// Registerer receives the member's metrics (raft, transport,
	// snapshots, the schema store, proposals, epoch). Nil registers none.
	Registerer prometheus.Registerer
	// MetricsIdentityLabels labels the metrics about identities
	// (metalog_ddl_rate_limited_total) by Request.Principal. Default
	// false: no identity label, since whoever reads the metrics would
	// learn the names of tokens and certificates.
	MetricsIdentityLabels bool

	// peerListener, if set, is the peer listener, already bound to
	// PeerAddr (tests bind every member's before starting any, so that no
	// other process can take a port between choosing and binding it).
	peerListener net.Listener
	// peerFaults, if set, injects network faults into the peer transport
	// (tests in this package only).
	peerFaults raftlog.Faults
	// freeSpace, if set, measures the data dir's free space instead of
	// statfs (tests in this package only).
	freeSpace func(dir string) (uint64, error)
	// now, if set, is the clock of the rate limit per identity (tests in
	// this package only).
	now func() time.Time
	// watchAfter, if set, ends the feeds' batch windows instead of
	// time.After (tests in this package only).
	watchAfter func(time.Duration) <-chan time.Time
	// holdHistoryName, if set, keeps the member from naming its
	// cluster's history until it is closed (tests in this package only,
	// to see a member before its history is named).
	holdHistoryName chan struct{}
	// legacyHistory, if set, makes a bootstrap record no history naming
	// in the new log, as versions before history names did (tests in this
	// package only: a cluster to upgrade).
	legacyHistory bool
}

// InitialMember is one founding member of a new cluster.
type InitialMember struct {
	// Name is the member's name (a founding member's raft id is
	// ID(Name)).
	Name string
	// PeerAddr is where the other members reach it.
	PeerAddr string
}

const (
	defaultRequestTimeout          = 10 * time.Second
	defaultMaxMutationSize         = 16 << 20
	defaultMaxStatementsPerRequest = 10000
	defaultWatchProgressInterval   = 5 * time.Second
	// DefaultWatchMaxLag is Config.WatchMaxLag's default: 1024 full
	// batches of a feed's messages, 64 seconds of DDL at a thousand a
	// second.
	DefaultWatchMaxLag       = 1024 * watchBatch
	defaultMinFreeSpaceBytes = 64 << 20
)

// watchMaxLag is WatchMaxLag as Reads takes it: 0 for no bound.
func (c *Config) watchMaxLag() uint64 {
	switch {
	case c.WatchMaxLag < 0:
		return 0
	case c.WatchMaxLag == 0:
		return DefaultWatchMaxLag
	}
	return uint64(c.WatchMaxLag)
}

// validate fills in defaults and refuses a config Start cannot work with.
func (c *Config) validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("member: data dir is required")
	case c.PeerAddr == "":
		return errors.New("member: peer address is required")
	case c.Join != "" && len(c.InitialCluster) > 0:
		return errors.New("member: join and an initial cluster exclude each other")
	case (c.PeerServerTLS == nil) != (c.PeerClientTLS == nil):
		return errors.New("member: peer server and client TLS go together")
	case c.RequestTimeout < 0 || c.FlushWindow < 0 || c.MaxMutationSize < 0 || c.MaxStatementsPerRequest < 0 || c.WatchProgressInterval < 0 || c.WatchBatchWindow < 0 || c.StoreScrubInterval < 0 ||
		c.DDLRatePerIdentity < 0 || c.DDLBurstPerIdentity < 0:
		return fmt.Errorf("member: negative setting in %+v", *c)
	}
	if err := access.CheckName(c.Name); err != nil {
		return fmt.Errorf("member: name: %w", err)
	}
	for _, im := range c.InitialCluster {
		if err := access.CheckName(im.Name); err != nil {
			return fmt.Errorf("member: initial cluster: %w", err)
		}
	}
	if c.DDLBurstPerIdentity == 0 {
		c.DDLBurstPerIdentity = DefaultDDLBurst(c.DDLRatePerIdentity)
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = defaultRequestTimeout
	}
	if c.MaxMutationSize == 0 {
		c.MaxMutationSize = defaultMaxMutationSize
	}
	if c.MaxStatementsPerRequest == 0 {
		c.MaxStatementsPerRequest = defaultMaxStatementsPerRequest
	}
	if c.WatchProgressInterval == 0 {
		c.WatchProgressInterval = defaultWatchProgressInterval
	}
	if c.MinFreeSpaceBytes == 0 {
		c.MinFreeSpaceBytes = defaultMinFreeSpaceBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Guardrails == (guardrails.Settings{}) {
		c.Guardrails = guardrails.Defaults()
	}
	return nil
}

// initialCluster returns the founding members: InitialCluster, or this
// member alone.
func (c *Config) initialCluster() []InitialMember {
	if len(c.InitialCluster) == 0 {
		return []InitialMember{{Name: c.Name, PeerAddr: c.PeerAddr}}
	}
	return c.InitialCluster
}
