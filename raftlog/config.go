package raftlog

import (
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Config configures a Node. The zero value of every optional field means its
// default.
type Config struct {
	// ID is this node's raft id. Required, non-zero, never reused for
	// another node.
	ID uint64

	// Peers are the initial voters, including ID. They are used only when
	// the log in Dir is new (bootstrap) and ignored on restart, when the
	// membership comes from the log. Required for a new log.
	Peers []uint64

	// Dir is the directory holding raft.db. Required; created if missing.
	Dir string

	// Applier is the state machine. Required.
	Applier Applier

	// Applied is the log index the state machine has durably applied.
	// Committed entries after it are replayed to Applier on start; zero
	// replays the whole log.
	Applied uint64

	// Transport sends messages to the other peers. Nil means a single node:
	// messages to others are dropped.
	Transport Transport

	// TickInterval is the duration of one raft tick. Default 100ms.
	TickInterval time.Duration

	// ElectionTicks is the number of ticks a follower waits without hearing
	// from a leader before it campaigns. Default 10; must be greater than
	// HeartbeatTicks.
	ElectionTicks int

	// HeartbeatTicks is the number of ticks between a leader's heartbeats.
	// Default 1.
	HeartbeatTicks int

	// MaxSizePerMsg bounds, in bytes, the entries of one append message and
	// of one apply batch (raft still sends at least one entry).
	// Default 1 MiB.
	MaxSizePerMsg uint64

	// MaxInflightMsgs bounds the append messages in flight to one follower.
	// Default 256.
	MaxInflightMsgs int

	// Logger receives the node's and raft's logs. Default discards.
	Logger *slog.Logger

	// Metrics are added by a later issue as a *Metrics field built by
	// NewMetrics(prometheus.Registerer); nil will mean no metrics.
}

const (
	defaultTickInterval    = 100 * time.Millisecond
	defaultElectionTicks   = 10
	defaultHeartbeatTicks  = 1
	defaultMaxSizePerMsg   = 1 << 20
	defaultMaxInflightMsgs = 256
)

// validate fills in defaults and reports the first invalid field.
func (c *Config) validate() error {
	if c.ID == 0 {
		return fmt.Errorf("raftlog: id must be non-zero")
	}
	if c.Dir == "" {
		return fmt.Errorf("raftlog: dir must be set")
	}
	if c.Applier == nil {
		return fmt.Errorf("raftlog: applier must be set")
	}
	seen := make(map[uint64]bool, len(c.Peers))
	for _, p := range c.Peers {
		if p == 0 {
			return fmt.Errorf("raftlog: peers (%v) must not contain id 0", c.Peers)
		}
		if seen[p] {
			return fmt.Errorf("raftlog: peers (%v) contain %d twice", c.Peers, p)
		}
		seen[p] = true
	}
	if len(c.Peers) > 0 && !seen[c.ID] {
		return fmt.Errorf("raftlog: peers (%v) must include id (%d)", c.Peers, c.ID)
	}
	if c.TickInterval < 0 {
		return fmt.Errorf("raftlog: tick interval (%v) must be positive", c.TickInterval)
	}
	if c.TickInterval == 0 {
		c.TickInterval = defaultTickInterval
	}
	if c.HeartbeatTicks < 0 {
		return fmt.Errorf("raftlog: heartbeat ticks (%d) must be positive", c.HeartbeatTicks)
	}
	if c.HeartbeatTicks == 0 {
		c.HeartbeatTicks = defaultHeartbeatTicks
	}
	if c.ElectionTicks < 0 {
		return fmt.Errorf("raftlog: election ticks (%d) must be positive", c.ElectionTicks)
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = defaultElectionTicks
	}
	if c.ElectionTicks <= c.HeartbeatTicks {
		return fmt.Errorf("raftlog: election ticks (%d) must be greater than heartbeat ticks (%d)", c.ElectionTicks, c.HeartbeatTicks)
	}
	if c.MaxSizePerMsg == 0 {
		c.MaxSizePerMsg = defaultMaxSizePerMsg
	}
	if c.MaxInflightMsgs < 0 {
		return fmt.Errorf("raftlog: max inflight msgs (%d) must be positive", c.MaxInflightMsgs)
	}
	if c.MaxInflightMsgs == 0 {
		c.MaxInflightMsgs = defaultMaxInflightMsgs
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Transport sends raft messages to peers. Send is called only from the
// node's goroutine, right after the messages' preconditions were persisted;
// it must not block for long (queue, then send elsewhere) and must not modify
// the messages. It may keep them: the node does not reuse them. Delivery may
// fail silently; raft retries.
type Transport interface {
	Send(msgs []*raftpb.Message)
}

// Entry is a committed normal entry as the Applier sees it.
type Entry struct {
	// Index and Term are the entry's position in the raft log.
	Index, Term uint64
	// Data is the payload the proposer passed to Propose (without the
	// node's header). It may be retained but must not be modified.
	Data []byte
}

// Applier is the state machine fed by the log.
type Applier interface {
	// Apply is called only from the node's goroutine, with committed
	// entries in log order, in batches (one call per Ready, split around
	// configuration changes), and returns exactly one Result per entry, in
	// the same order. The entries slice is reused after Apply returns; the
	// Applier may reuse the returned slice after the next call begins.
	// Apply must be deterministic: every node applies the same entries.
	Apply(entries []Entry) []Result
}

// Result is the outcome of applying one entry; the proposer's Propose
// returns it (Value, or Err as the error).
type Result struct {
	// Value is what Propose returns on success.
	Value any
	// Err, if not nil, is returned by Propose as its error.
	Err error
}
