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
	// membership comes from the log. Required for a new log unless Join is
	// set.
	Peers []Peer

	// Join starts a new log empty, without bootstrapping: the node waits
	// for the cluster's leader to replicate the log to it after it was
	// added (Node.AddLearner on a member). It must not be set together
	// with Peers; it is ignored on restart.
	Join bool

	// OnConfChange, if not nil, is called from the node's goroutine after
	// each configuration change is applied and persisted, including the
	// bootstrap ones and those replayed after Applied on restart (changes
	// at or before Applied are not replayed: read Members at start). The
	// caller uses it to add and remove transport peers and to notice its
	// own removal. It must not block or call back into the Node's waiting
	// methods; ConfChangeApplied is owned by the callee.
	OnConfChange func(ConfChangeApplied)

	// Dir is the directory holding raft.db. Required; created if missing.
	Dir string

	// Applier is the state machine. Required.
	Applier Applier

	// Applied is the log index the state machine has durably applied.
	// Committed entries after it are replayed to Applier on start; zero
	// replays the whole log.
	Applied uint64

	// Transport sends messages to the other peers, usually a *Transport.
	// Nil means a single node: messages to others are dropped.
	Transport Sender

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
	ids := make([]uint64, len(c.Peers))
	for i, p := range c.Peers {
		ids[i] = p.ID
	}
	for _, p := range ids {
		if p == 0 {
			return fmt.Errorf("raftlog: peers (%v) must not contain id 0", ids)
		}
		if seen[p] {
			return fmt.Errorf("raftlog: peers (%v) contain %d twice", ids, p)
		}
		seen[p] = true
	}
	if len(c.Peers) > 0 && !seen[c.ID] {
		return fmt.Errorf("raftlog: peers (%v) must include id (%d)", ids, c.ID)
	}
	if c.Join && len(c.Peers) > 0 {
		return fmt.Errorf("raftlog: join must not be set together with peers (%v)", ids)
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

// Sender sends raft messages to peers; *Transport is the gRPC one. Send is
// called only from the node's goroutine, right after the messages' preconditions were persisted;
// it must not block for long (queue, then send elsewhere) and must not modify
// the messages. It may keep them: the node does not reuse them. Delivery may
// fail silently; raft retries.
//
// A Sender must report a MsgSnap's outcome to the node (Transport does, with
// raft.SnapshotFinish or raft.SnapshotFailure); until then raft sends the
// peer nothing else.
type Sender interface {
	Send(msgs []*raftpb.Message)
}

// Peer is an initial member of a new cluster.
type Peer struct {
	// ID is the member's raft id, non-zero.
	ID uint64
	// Context is opaque to raftlog (the caller's name and address of the
	// member, say). It is stored with the membership and returned by
	// Node.Members.
	Context []byte
}

// Member is a member of the cluster as of the last applied configuration
// change.
type Member struct {
	// ID is the member's raft id.
	ID uint64
	// Context is what Peer.Context or AddLearner gave for it.
	Context []byte
	// Learner is set for a member that receives the log but does not vote
	// (yet: the leader promotes a learner once it has caught up).
	Learner bool
}

// ConfChangeApplied describes one applied configuration change, for
// Config.OnConfChange.
type ConfChangeApplied struct {
	// Index is the log index of the change.
	Index uint64
	// Type is what changed: ConfChangeAddNode (a voter added or a learner
	// promoted), ConfChangeAddLearnerNode or ConfChangeRemoveNode.
	Type raftpb.ConfChangeType
	// ID is the member concerned.
	ID uint64
	// Context is the member's context (empty for a removal).
	Context []byte
	// Members is the membership after the change, sorted by id.
	Members []Member
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
