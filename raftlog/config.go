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

	// Peers are the initial voters, including ID (none a Learner). They
	// are used only when the log in Dir is new (bootstrap) and ignored on
	// restart, when the membership comes from the log. Required for a new
	// log unless Join is set.
	Peers []Peer

	// Join starts a new log empty, without bootstrapping: the node waits
	// for the cluster's leader to replicate the log to it after it was
	// added (Node.AddLearner on a member). It must not be set together
	// with Peers; it is ignored on restart. A log begun with Join that
	// never received its membership is a join that did not complete:
	// Start refuses it without Join (ErrJoinIncomplete).
	Join bool

	// ClusterID is the id of the cluster, recorded in a new log (with how
	// it was begun) and sent with every stream and snapshot to peers,
	// which refuse another cluster's. On restart 0 means the recorded id,
	// and another one makes Start fail with ErrClusterMismatch; a log
	// written before ids were recorded keeps running unchecked (0).
	ClusterID uint64

	// Naming is what a new log records about naming its cluster's
	// history (HistoryNaming), with its cluster id: NamingBegun for a log
	// that begins a new history here (a bootstrap), NamingExpected or
	// NamingNone for a join, as the cluster joined names its history or
	// not. Ignored on restart, where Node.HistoryNaming reads what the log
	// recorded.
	Naming HistoryNaming

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
	// replays the whole log. If the log was compacted past it, the stored
	// snapshot is restored first (Snapshotter).
	Applied uint64

	// FromSnapshot makes Start restore the Applier from the newest stored
	// snapshot when it is past Applied, even if the log still holds the
	// entries after Applied: for a state machine rebuilt from nothing whose
	// log may not begin with its whole state (a cluster restored from a
	// backup begins its log after the backup's state). Without a stored
	// snapshot it has no effect.
	FromSnapshot bool

	// Transport sends messages to the other peers, usually a *Transport.
	// Nil means a single node: messages to others are dropped.
	Transport Sender

	// TickInterval is the duration of one raft tick. Default 100ms.
	TickInterval time.Duration

	// ElectionTicks is the number of ticks a follower waits without hearing
	// from a leader before it campaigns. Default 10; must be greater than
	// HeartbeatTicks.
	ElectionTicks int

	// commitUpdateDelay overrides commitUpdateDelay (tests); zero means
	// the default.
	commitUpdateDelay time.Duration

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

	// SnapshotEntries is how many applied entries, since the last
	// snapshot was taken (or tried), make the node take the next one. It
	// matters only for an Applier that implements Snapshotter. Default
	// 10000.
	SnapshotEntries uint64

	// SnapshotCatchUpEntries is how many entries before a stored snapshot
	// stay in the log when it is compacted, so a follower that is a little
	// behind catches up from the log instead of by a snapshot. Default
	// 5000.
	SnapshotCatchUpEntries uint64

	// OnSnapshot, if not nil, is called from the node's goroutine after
	// every attempt to take a snapshot, successful or not. The node logs a
	// stored snapshot at Info; a failure it leaves to the callee to log
	// (without OnSnapshot it logs it at Error). The caller does metrics,
	// readiness and its logs with it. An attempt overtaken by a newer snapshot received
	// from the leader meanwhile is dropped without an event. It must not
	// block or call back into the Node's waiting methods.
	OnSnapshot func(SnapshotEvent)

	// OnMembersRestored, if not nil, is called from the node's goroutine
	// after it installed a snapshot received from the leader, with the
	// membership the snapshot carried (sorted by id; the callee's). The
	// configuration changes the snapshot covers are not replayed to
	// OnConfChange, so the caller adds the transport peers of these
	// members here (and removes those no longer listed). The same
	// restrictions as for OnConfChange apply.
	OnMembersRestored func([]Peer)

	// Promotable, if not nil, says whether a learner with this context
	// may become a voter: the leader never promotes one it refuses (an
	// observer, which receives the log and never votes). Nil: every
	// learner is promoted once caught up. It is called on the node's
	// goroutine and must return at once.
	Promotable func(context []byte) bool

	// AppendGate, if not nil, is asked on the node's goroutine before the
	// node takes new entries into its log: a data proposal of its own, a
	// proposal forwarded to it as leader, an append carrying entries, a
	// snapshot. When it returns an error, the proposal fails with it and
	// the message is dropped (the leader sends again later), so a member
	// that must not grow its log (out of disk space) stops writing while
	// the others keep the quorum. Conf changes pass: they are small, and
	// removing or adding a member is how an operator gets out. It must be
	// fast and must not block.
	AppendGate func() error

	// Metrics receives the node's metrics (NewMetrics). Nil means
	// unregistered ones: none are exported.
	Metrics *Metrics
}

const (
	defaultTickInterval    = 100 * time.Millisecond
	defaultElectionTicks   = 10
	defaultHeartbeatTicks  = 1
	defaultMaxSizePerMsg   = 1 << 20
	defaultMaxInflightMsgs = 256

	defaultSnapshotEntries        = 10000
	defaultSnapshotCatchUpEntries = 5000
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
	if err := c.validatePeers(); err != nil {
		return err
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
	if c.SnapshotEntries == 0 {
		c.SnapshotEntries = defaultSnapshotEntries
	}
	if c.SnapshotCatchUpEntries == 0 {
		c.SnapshotCatchUpEntries = defaultSnapshotCatchUpEntries
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	return nil
}

// validatePeers checks Peers: distinct non-zero voters including ID, and
// none when joining.
func (c *Config) validatePeers() error {
	seen := make(map[uint64]bool, len(c.Peers))
	ids := make([]uint64, len(c.Peers))
	for i, p := range c.Peers {
		ids[i] = p.ID
	}
	for _, p := range c.Peers {
		if p.Learner {
			return fmt.Errorf("raftlog: peers (%v) must not contain learners: %d is one (add it with AddLearner)", ids, p.ID)
		}
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
	return nil
}

// Sender sends raft messages to peers; *Transport is the network one. Send
// is called only from the node's goroutine, once what the messages depend
// on is persisted (but for a leader's appends, which go out while it
// writes the same entries itself); it must not block for long (queue, then
// send elsewhere) and must not modify the messages. It may keep them: the
// node does not reuse them. Delivery may fail silently; raft retries.
//
// A Sender must report a MsgSnap's outcome to the node (Node.ReportSnapshot,
// from a goroutine of its own: Transport does, with raft.SnapshotFinish or
// raft.SnapshotFailure); until then raft sends the peer nothing else.
type Sender interface {
	Send(msgs []*raftpb.Message)
}

// Peer is a member of the raft group: one of Config.Peers, which bootstrap
// a new cluster, or of Node.Members, the membership as of the last applied
// configuration change.
type Peer struct {
	// ID is the member's raft id, non-zero.
	ID uint64
	// Context is opaque to raftlog (the caller's name and address of the
	// member, say): what Config.Peers or AddLearner gave for it. It is
	// stored with the membership and returned by Node.Members.
	Context []byte
	// Learner is set for a member that receives the log but does not vote
	// (yet: the leader promotes a learner once it has caught up). Config.Peers
	// are voters: it must not be set there.
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
	Members []Peer
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

// Snapshotter is implemented by Appliers that can snapshot their state. With
// it, the node takes a snapshot every Config.SnapshotEntries applied
// entries, compacts the log behind it, sends it to members too far behind
// for the log, and installs the ones it receives.
type Snapshotter interface {
	// Capture runs on the node goroutine right after the entries up to
	// index were applied. It must be quick (take an immutable view) and
	// returns a function that encodes that view; raftlog calls it on a
	// goroutine of its own, and owns the returned bytes. An encode error
	// (e.g. the state is too large to snapshot) means: do not store, do
	// not compact.
	Capture(index uint64) func() ([]byte, error)

	// Restore replaces the whole state with data that was captured at
	// index; data is the Applier's and may be retained, but not modified.
	// It is called on the node goroutine for a snapshot received from the
	// leader, and by Start when the log begins after Config.Applied
	// (compacted) but a stored snapshot covers it. An error stops the
	// node (Err returns it): its state no longer matches the log.
	Restore(index uint64, data []byte) error
}

// SnapshotSizer is implemented by Snapshotters whose snapshot data is
// not in proportion to what taking a snapshot costs (it is compressed):
// once snapshots are large, the schedule waits for as many bytes of log
// as SnapshotWork says, instead of the data's length.
type SnapshotSizer interface {
	// SnapshotWork returns the size in bytes that data, a snapshot
	// Capture took (or one received), stands for: about what encoding it
	// again costs, measured like log bytes. It runs on the node goroutine
	// and must be cheap (it reads a header, say); a len(data) is a safe
	// answer for data it does not know.
	SnapshotWork(data []byte) int
}

// SnapshotEvent describes one attempt to take a snapshot, for
// Config.OnSnapshot.
type SnapshotEvent struct {
	// Index is the applied index the snapshot was captured at.
	Index uint64
	// Size is the length in bytes of the stored snapshot data (the
	// Applier's bytes in raftlog's envelope with the member table); 0 if
	// encoding failed.
	Size int
	// Duration runs from Capture to the end of storing and compacting.
	Duration time.Duration
	// Err is why the attempt failed (encoding, storing or compacting), nil
	// on success. Nothing is compacted when encoding or storing failed.
	Err error
}

// Result is the outcome of applying one entry; the proposer's Propose
// returns it (Value, or Err as the error).
type Result struct {
	// Value is what Propose returns on success.
	Value any
	// Err, if not nil, is returned by Propose as its error.
	Err error
}
