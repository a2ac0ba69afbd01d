package raftlog

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

const (
	// proposalBatch is how many queued proposals the loop takes before it
	// handles a Ready, so concurrent proposals share one fsync.
	proposalBatch = 256
	// recvBuffer decouples a transport's receive path from the loop.
	recvBuffer = 256
	// reportBuffer holds transport reports for the loop; unreachable
	// reports beyond it are dropped (the next failure reports again).
	reportBuffer = 256
)

// Status is a point-in-time view of a Node, published by its goroutine.
type Status struct {
	// ID is this node's raft id.
	ID uint64
	// Leader is the id of the leader this node knows of, 0 if none.
	Leader uint64
	// Term is the node's current raft term.
	Term uint64
	// Commit is the highest log index known to be committed.
	Commit uint64
	// Applied is the highest log index this node has applied (handed to
	// the Applier, or processed if it carried no payload).
	Applied uint64
	// Voters are the ids of the voting members, sorted.
	Voters []uint64
	// Learners are the ids of the non-voting members, sorted.
	Learners []uint64
	// Progress is, on the leader only, the highest log index known to be
	// replicated on each member (raft's Match), itself included. It is
	// refreshed at every tick; nil on other nodes.
	Progress map[uint64]uint64
}

// Node runs one member of a raft group: a single goroutine (loop) owns the
// raft state machine, persists to Storage, sends through the Transport and
// feeds committed entries to the Applier. Node is its public face: its
// methods are safe for concurrent use, hand work to the loop through
// channels, wait for it in a registry of waiters, and read what the loop
// published without taking a lock.
type Node struct {
	cfg     Config
	id      uint64
	boot    uint64
	log     *slog.Logger
	storage *Storage

	// The loop's inputs.
	propc     chan *proposal
	recvc     chan *raftpb.Message
	reportc   chan report
	readc     chan *readRequest
	repairc   chan *repairRequest
	transferc chan uint64        // the member TransferLeadership hands the leadership to
	releasec  chan struct{}      // ReleaseCommitUpdates's word
	removedc  chan removedReport // a peer's word that this member was removed (stream.go)
	foreignc  chan error         // why a leader of another cluster sending here stops the node (stream.go)
	stopc     chan struct{}      // closed by Stop
	donec     chan struct{}      // closed when the loop has exited
	stopOnce  sync.Once

	// lineage is the log's cluster id (0 if unknown, see
	// Config.ClusterID) and the forcings that made it: ClusterID and
	// ForcedFrom.
	*lineage

	seq   atomic.Uint64 // proposal and read sequence numbers of this boot
	pub   *published
	waits *waiters
	loop  *loop // touched by Stop only once the loop has exited
}

// published is what the node's goroutine makes visible to the others.
// Every pointer is replaced whole, by that goroutine only, and what it
// points to is immutable: readers load it without a lock.
type published struct {
	status  atomic.Pointer[Status]
	members atomic.Pointer[[]Peer]
	// removedPeers maps the other members whose removal this node applied
	// (and that were not added again) to the index of their removal.
	removedPeers atomic.Pointer[map[uint64]uint64]
	// watch is replaced, and the old one's channel closed, whenever the
	// known leader changes.
	watch  atomic.Pointer[leaderWatch]
	caught atomic.Bool
	readyc chan struct{} // closed the first time caught becomes true
}

// leaderWatch is replaced, and its channel closed, whenever the known
// leader changes; proposers waiting for a leader wait on it.
type leaderWatch struct {
	ch chan struct{}
}

// report is a transport's outcome of a send, for the loop to hand to raft.
type report struct {
	id       uint64
	snapshot bool // else unreachable
	status   raft.SnapshotStatus
}

// Start opens (or creates) the raft log in cfg.Dir and starts the node's
// goroutine. A new log is bootstrapped with cfg.Peers as voters; an existing
// one restarts from its stored state, replaying committed entries after
// cfg.Applied to the Applier before anything new. When the log no longer
// holds the entries right after cfg.Applied, a Snapshotter Applier is first
// restored from the stored snapshot and only the entries after it are
// replayed (an Applier without Snapshotter gets ErrAppliedCompacted). Call
// Stop to release it.
func Start(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st, err := openStorage(cfg.Dir, defaultLockTimeout, cfg.Metrics)
	if err != nil {
		return nil, err
	}
	n, err := start(cfg, st)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return n, nil
}

// start builds the node on its opened storage and starts the loop.
func start(cfg Config, st *Storage) (*Node, error) {
	boot, err := st.db.nextBoot()
	if err != nil {
		return nil, err
	}
	sn, _ := cfg.Applier.(Snapshotter)
	ss, err := loadStartState(cfg, st, sn)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger.With("raft_id", memberID(cfg.ID))
	st.log = logger
	rn, err := newRawNode(raftConfig(cfg, st, ss.applied, logger))
	if err != nil {
		return nil, err
	}
	memberCtx, err := st.db.members()
	if err != nil {
		return nil, err
	}
	removedPeers, err := st.db.removedMembers()
	if err != nil {
		return nil, err
	}
	cs := ss.cs
	if ss.isNew && !cfg.Join {
		if cs, err = bootstrap(rn, cfg); err != nil {
			return nil, err
		}
	}

	n := &Node{
		cfg: cfg, id: cfg.ID, boot: boot, log: logger, storage: st,
		propc:     make(chan *proposal, proposalBatch),
		recvc:     make(chan *raftpb.Message, recvBuffer),
		reportc:   make(chan report, reportBuffer),
		readc:     make(chan *readRequest, proposalBatch),
		repairc:   make(chan *repairRequest),
		transferc: make(chan uint64, 1),
		releasec:  make(chan struct{}, 1),
		removedc:  make(chan removedReport, 1),
		foreignc:  make(chan error, 1),
		lineage:   &lineage{id: ss.clusterID, forcings: ss.forcings, naming: ss.naming},
		stopc:     make(chan struct{}),
		donec:     make(chan struct{}),
		pub:       &published{readyc: make(chan struct{})},
		waits:     newWaiters(),
	}
	n.pub.removedPeers.Store(&removedPeers)
	n.pub.watch.Store(&leaderWatch{ch: make(chan struct{})})
	n.loop = newLoop(n, rn, ss, memberCtx, cs, sn)
	n.log.Info("raft node starting", "new_log", ss.isNew, "boot", boot,
		"term", n.loop.term, "commit", n.loop.commit, "applied", n.loop.applied, "last_index", ss.last,
		"voters", memberIDs(n.loop.members.voters), "learners", memberIDs(n.loop.members.learners), "join", ss.isNew && cfg.Join,
		"snapshot_index", ss.snapIndex, "first_index", ss.first, "cluster", FormatID(ss.clusterID))
	go n.loop.run()
	return n, nil
}

// startState is what Start learns from the stored log, once the Applier
// and the log agree, before the raft node exists.
type startState struct {
	hs          *raftpb.HardState
	cs          *raftpb.ConfState
	first, last uint64
	isNew       bool // nothing stored yet: bootstrap or join
	snapIndex   uint64
	// applied is where the Applier is: cfg.Applied, or the stored
	// snapshot's index once restored from it.
	applied uint64
	// clusterID is the id of the cluster the log belongs to (0: unknown).
	clusterID uint64
	// forcings are the forcings of the log (ForceNewCluster).
	forcings []Forcing
	// naming is what the log records about naming its history.
	naming HistoryNaming
}

// loadStartState reads the stored state, refuses a data directory that
// does not fit cfg, restores the Applier from the stored snapshot when the
// log no longer holds the entries after cfg.Applied, and makes the commit
// index cover what the Applier applied.
func loadStartState(cfg Config, st *Storage, sn Snapshotter) (startState, error) {
	hs, cs, _ := st.InitialState()
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	ss := startState{hs: hs, cs: cs, first: first, last: last, snapIndex: st.snapshotIndex(), applied: cfg.Applied,
		isNew: last == 0 && raft.IsEmptyHardState(hs) && len(cs.GetVoters()) == 0 && len(cs.GetLearners()) == 0}
	if removedAt := st.db.removedAt(); removedAt != 0 {
		return ss, fmt.Errorf("%w: member %d left the cluster at index %d (%s)", ErrRemoved, cfg.ID, removedAt, cfg.Dir)
	}
	if f, ok := st.db.forcedAway(); ok {
		return ss, &ForcedError{Forcing: f, Dir: cfg.Dir}
	}
	if err := checkMemberID(cfg, st); err != nil {
		return ss, err
	}
	var err error
	if ss.clusterID, err = checkIdentity(cfg, st, ss.isNew); err != nil {
		return ss, err
	}
	if err := recordMemberID(cfg, st); err != nil {
		return ss, err
	}
	ss.forcings = st.db.forcings()
	ss.naming = st.db.naming()
	if n := len(ss.forcings); n > 0 && ss.forcings[n-1].Index > last {
		return ss, fmt.Errorf("%w (%s): it recorded the new cluster %s but not all of its log entries; start the member again with --force-new-cluster to finish it",
			ErrForceIncomplete, cfg.Dir, FormatID(ss.forcings[n-1].To))
	}
	switch {
	case ss.isNew && len(cfg.Peers) == 0 && !cfg.Join:
		return ss, fmt.Errorf("raftlog: peers must be set to bootstrap the new raft log in %s", cfg.Dir)
	case cfg.Applied > last:
		return ss, fmt.Errorf("%w: applied %d: %w", ErrAppliedBeyondLog, cfg.Applied, st.logCutShort(fmt.Sprintf("the state machine applied up to index %d", cfg.Applied)))
	case hs.GetCommit() > last:
		return ss, fmt.Errorf("raftlog: %w", st.logCutShort(fmt.Sprintf("the hard state records index %d as committed", hs.GetCommit())))
	case cfg.Applied < first-1 && sn == nil:
		return ss, fmt.Errorf("%w: applied %d, log starts at %d in %s, and the Applier does not implement Snapshotter", ErrAppliedCompacted, cfg.Applied, first, cfg.Dir)
	case cfg.Applied < first-1 && ss.snapIndex < first-1:
		return ss, fmt.Errorf("%w: applied %d, log starts at %d in %s, and the newest stored snapshot (index %d) does not cover the gap", ErrAppliedCompacted, cfg.Applied, first, cfg.Dir, ss.snapIndex)
	}
	if ss.applied < first-1 || (cfg.FromSnapshot && sn != nil && ss.snapIndex > ss.applied) {
		// The entries right after Applied are gone: start from the stored
		// snapshot and replay only what follows it. When the log still
		// has them, replaying is cheaper than a whole restore, unless
		// the caller asks for the snapshot (FromSnapshot).
		if err := restoreAtStart(cfg, st, sn); err != nil {
			return ss, err
		}
		ss.applied = ss.snapIndex
		if ss.applied > last {
			return ss, fmt.Errorf("raftlog: %w", st.logCutShort(fmt.Sprintf("the newest snapshot is at index %d", ss.applied)))
		}
	}
	// The commit index is written lazily (raft does not require it to be
	// synced), so after a crash it may lag what the state machine durably
	// applied. Applied entries were committed: move the commit index up.
	if ss.applied > hs.GetCommit() {
		st.raiseCommit(ss.applied)
		ss.hs, _, _ = st.InitialState()
	}
	return ss, nil
}

// raftConfig is the raft node's configuration.
func raftConfig(cfg Config, st *Storage, applied uint64, logger *slog.Logger) *raft.Config {
	return &raft.Config{
		ID:              cfg.ID,
		ElectionTick:    cfg.ElectionTicks,
		HeartbeatTick:   cfg.HeartbeatTicks,
		Storage:         st,
		Applied:         applied,
		MaxSizePerMsg:   cfg.MaxSizePerMsg,
		MaxInflightMsgs: cfg.MaxInflightMsgs,
		// A leader cut off from a quorum steps down, so clients on its
		// side see "no leader" instead of waiting; pre-vote keeps a node
		// that rejoins from disrupting the leader with a higher term.
		CheckQuorum: true,
		PreVote:     true,
		// A leader that applies its own removal stops leading at once, so
		// the remaining voters elect a new one without waiting for it.
		StepDownOnRemoval: true,
		Logger:            raftLogger{logger},
	}
}

// bootstrap writes the first configuration, cfg.Peers as voters, into a
// new log and returns it.
func bootstrap(rn *raft.RawNode, cfg Config) (*raftpb.ConfState, error) {
	// The bootstrap conf changes carry a header like every conf change
	// raftlog writes, with proposer 0 (nobody waits for them).
	peers := make([]raft.Peer, len(cfg.Peers))
	cs := &raftpb.ConfState{}
	for i, p := range cfg.Peers {
		peers[i] = raft.Peer{ID: p.ID, Context: encodeProposal(proposalID{}, p.Context)}
		cs.Voters = append(cs.Voters, p.ID)
	}
	if err := rn.Bootstrap(peers); err != nil {
		return nil, fmt.Errorf("raftlog: bootstrap %s: %w", cfg.Dir, err)
	}
	return cs, nil
}

// newRawNode turns raft's panics on an inconsistent stored state into an
// error for Start.
func newRawNode(rc *raft.Config) (rn *raft.RawNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("raftlog: restore raft state: %v", r)
		}
	}()
	return raft.NewRawNode(rc)
}

// Step hands a message received from a peer to the node. It returns once the
// node's goroutine has queued it (not when raft has processed it), when ctx
// ends, or with ErrStopped. The node takes ownership of m.
func (n *Node) Step(ctx context.Context, m *raftpb.Message) error {
	if raft.IsLocalMsg(m.GetType()) {
		return fmt.Errorf("raftlog: step: local message type %v from peer %d", m.GetType(), m.GetFrom())
	}
	if m.GetTo() != n.id {
		return fmt.Errorf("raftlog: step: message from %d is addressed to %d, this node is %d", m.GetFrom(), m.GetTo(), n.id)
	}
	select {
	case <-n.donec:
		return n.waits.stopError()
	default:
	}
	select {
	case n.recvc <- m:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("raftlog: step: %w", ctx.Err())
	case <-n.donec:
		return n.waits.stopError()
	}
}

// ReportUnreachable tells raft that the last send to member id failed, so
// it stops pipelining appends to it and probes instead (LocalNode). It
// never blocks; a report the node's goroutine has no room for is dropped
// (the next failure reports again).
func (n *Node) ReportUnreachable(id uint64) {
	select {
	case n.reportc <- report{id: id}:
	default:
	}
}

// TransferLeadership asks this node, when it is the leader, to hand the
// leadership to member to: raft brings to up to date and has it campaign
// at once, or gives up after an election timeout. It never blocks; a
// request while another is queued is dropped, and one on a follower does
// nothing.
func (n *Node) TransferLeadership(to uint64) {
	select {
	case n.transferc <- to:
	default:
	}
}

// ReleaseCommitUpdates has this node, when it leads, send its followers
// now the commit index it holds back (commitUpdateDelay): a caller waits
// for them to apply what it committed. It never blocks; a release while
// another is queued is the same release. On a follower it does nothing.
func (n *Node) ReleaseCommitUpdates() {
	select {
	case n.releasec <- struct{}{}:
	default:
	}
}

// ReportSnapshot tells raft how sending a snapshot to member id ended
// (LocalNode); raft sends the peer nothing more until it knows. It blocks
// until the node's goroutine has room or has stopped, so it must not be
// called from that goroutine (Sender.Send).
func (n *Node) ReportSnapshot(id uint64, status raft.SnapshotStatus) {
	select {
	case n.reportc <- report{id: id, snapshot: true, status: status}:
	case <-n.donec:
	}
}

// PeerRemoved returns the index at which member id's removal was applied
// on this node (from its log or a snapshot), 0 when id is not a removed
// member, and whether this node leads (LocalNode). A message from a
// removed member is answered with "you were removed" and not stepped.
// Member ids are never reused, so any member, not only the leader, may
// answer: a member removed while it was down never applies its removal
// (the leader no longer sends to it) and would otherwise campaign forever.
// It takes no lock.
func (n *Node) PeerRemoved(id uint64) (at uint64, leader bool) {
	at = (*n.pub.removedPeers.Load())[id]
	if at == 0 {
		return 0, false
	}
	return at, n.pub.status.Load().Leader == n.id
}

// ReportRemoved stops the node as removed from the cluster, on the word of
// member by, which applied this node's removal at index at (0: unknown, a
// member of an earlier release) and leads if leader is set (LocalNode).
// It never blocks. A log of an earlier release may hold this node's id
// removed and added again, so a node that still runs after applying index
// at was added after that removal: it ignores the word of a member that
// does not lead (one that has not applied the addition yet). A leader's
// word is final.
func (n *Node) ReportRemoved(by, at uint64, leader bool) {
	select {
	case n.removedc <- removedReport{by: by, at: at, leader: leader}:
	default:
	}
}

// removedReport is a peer's word that this node was removed (ReportRemoved).
type removedReport struct {
	by, at uint64
	leader bool
}

// ReportForeign stops the node with err, which wraps ErrClusterMismatch:
// a leader of another cluster sends to this member, so that other cluster
// has it as a member while its log belongs elsewhere (LocalNode). It never
// blocks.
func (n *Node) ReportForeign(err error) {
	select {
	case n.foreignc <- err:
	default:
	}
}

// Status returns the latest status the node's goroutine published. It takes
// no lock on the raft node; Voters, Learners and Progress are copies the
// caller owns.
func (n *Node) Status() Status {
	s := *n.pub.status.Load()
	s.Voters = slices.Clone(s.Voters)
	s.Learners = slices.Clone(s.Learners)
	s.Progress = maps.Clone(s.Progress)
	return s
}

// Members returns the membership as of the last applied configuration
// change, sorted by id; it is read from raft.db at Start, so it is right
// after a restart without replaying the log. The result is the caller's.
func (n *Node) Members() []Peer {
	return clonePeers(*n.pub.members.Load())
}

// clonePeers returns a deep copy of ps.
func clonePeers(ps []Peer) []Peer {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Context = slices.Clone(out[i].Context)
	}
	return out
}

// Done returns a channel closed when the node's goroutine has exited: after
// Stop, a storage failure, or this member's removal (Err then says which).
func (n *Node) Done() <-chan struct{} {
	return n.donec
}

// Caught reports whether the node knows a leader, its commit index has
// reached an entry of the leader's term, and it has applied everything up to
// there: the readiness signal behind /readyz. A caught node has applied at
// least every entry acknowledged before the current term began. It turns
// false while there is no leader and is recomputed at every term.
func (n *Node) Caught() bool {
	return n.pub.caught.Load()
}

// Ready returns a channel closed the first time Caught becomes true.
func (n *Node) Ready() <-chan struct{} {
	return n.pub.readyc
}

// Err returns the error that stopped the node's goroutine on its own (a
// storage failure, or ErrRemoved once this member applied its own removal),
// or nil while it runs or after a plain Stop.
func (n *Node) Err() error {
	return n.waits.cause()
}

// Stop stops the node's goroutine, fails pending proposals with ErrStopped,
// waits for the goroutine to exit and closes the storage. It is idempotent
// and safe to call concurrently.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		close(n.stopc)
		<-n.donec
		n.loop.snaps.wait()
		if err := n.storage.Close(); err != nil {
			n.log.Error("close raft log", "err", err)
		}
	})
}
