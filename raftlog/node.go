package raftlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
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

// Node runs one member of a raft group: a single goroutine owns the raft
// state machine, persists to Storage, sends through the Transport and feeds
// committed entries to the Applier. Its methods are safe for concurrent use.
type Node struct {
	cfg     Config
	id      uint64
	boot    uint64
	log     *slog.Logger
	storage *Storage

	propc   chan *proposal
	recvc   chan *raftpb.Message
	reportc chan report
	readc   chan *readRequest
	resyncc chan *resyncRequest
	stopc   chan struct{} // closed by Stop
	// removedc carries the id of a peer that reports this member removed
	// from the cluster (stream.go).
	removedc chan uint64
	// removedPeers maps the other members whose removal this node applied
	// (and that were not added again) to the index of their removal;
	// immutable once published, replaced by the loop.
	removedPeers atomic.Pointer[map[uint64]uint64]
	donec        chan struct{} // closed when the loop has exited
	stopOnce     sync.Once

	seq     atomic.Uint64
	status  atomic.Pointer[Status]
	members atomic.Pointer[[]Peer] // immutable once published
	watch   atomic.Pointer[leaderWatch]
	caught  atomic.Bool
	readyc  chan struct{} // closed the first time caught becomes true

	mu      sync.Mutex // guards waiters, reads, stopped and err
	waiters map[uint64]*proposal
	reads   map[string]*readRequest // by request context
	stopped bool
	err     error // why the loop exited on its own, nil after Stop

	// Owned by the loop goroutine.
	rn     *raft.RawNode
	leader uint64
	// savedTerm and savedVote are the term and vote on disk: while a
	// Ready does not change them, a leader may send before it persists.
	savedTerm, savedVote uint64
	term                 uint64
	commit               uint64
	applied              uint64
	voters               []uint64 // immutable once published
	learners             []uint64 // immutable once published
	progress             map[uint64]uint64
	progressNew          bool              // progress changed since the last publish
	memberCtx            map[uint64][]byte // contexts of the current members
	pendingConf          uint64            // index of the last conf change appended
	removed              bool              // this node applied its own removal
	pendingReads         []*readRequest    // confirmed, waiting for applied >= index
	caughtLeader         uint64            // leader (and term) the caught flag was computed for
	caughtTerm           uint64
	caughtDone           bool // caught up with caughtLeader in caughtTerm
	readyClosed          bool
	campaign             bool         // campaign once everything committed is applied
	batch                []Entry      // reused apply batch
	batchIDs             []proposalID // proposal ids of batch, same order
	commitUpdates        *commitUpdates

	// Snapshots. snapc and snapWG are shared with the encoding goroutine;
	// the other fields are the loop's.
	snapshotter Snapshotter     // cfg.Applier's, nil if it has none
	snapc       chan snapResult // capacity 1: at most one snapshot in flight
	snapWG      sync.WaitGroup  // the encoding goroutine; Stop waits for it
	snapBusy    bool            // a snapshot is being encoded
	snapTried   uint64          // applied index of the last snapshot taken or tried
	snapWanted  bool            // take one at the next chance, whatever SnapshotEntries says
}

// leaderWatch is replaced, and its channel closed, whenever the known
// leader changes; proposers waiting for a leader wait on it.
type leaderWatch struct {
	ch chan struct{}
}

type proposal struct {
	seq  uint64
	data []byte
	cc   *raftpb.ConfChange  // proposed instead of data when set
	done chan proposalResult // capacity 1; receives exactly one value
}

// report is a transport's outcome of a send, for the loop to hand to raft.
type report struct {
	id       uint64
	snapshot bool // else unreachable
	status   raft.SnapshotStatus
}

// readRequest is one ReadIndex call. The loop sends on done at most once,
// after removing the request from Node.reads (or from pendingReads).
type readRequest struct {
	key       []byte
	done      chan readResult // capacity 1
	index     uint64          // set by the loop when confirmed
	confirmed atomic.Bool     // a quorum confirmed index; waiting to apply
}

type readResult struct {
	index uint64
	err   error
}

type proposalResult struct {
	Result
	// proposeErr is set when the proposal never reached the log's result:
	// raft refused it, or the node stopped.
	proposeErr error
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
	st, err := openStorage(cfg.Dir, defaultLockTimeout)
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

func start(cfg Config, st *Storage) (*Node, error) {
	boot, err := st.db.nextBoot()
	if err != nil {
		return nil, err
	}
	hs, cs, _ := st.InitialState()
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	isNew := last == 0 && raft.IsEmptyHardState(hs) && len(cs.GetVoters()) == 0 && len(cs.GetLearners()) == 0
	snapshotter, _ := cfg.Applier.(Snapshotter)
	snapIndex := st.snapshotIndex()

	switch {
	case st.db.removedAt() != 0:
		return nil, fmt.Errorf("%w: member %d left the cluster at index %d (%s)", ErrRemoved, cfg.ID, st.db.removedAt(), cfg.Dir)
	case isNew && len(cfg.Peers) == 0 && !cfg.Join:
		return nil, fmt.Errorf("raftlog: peers must be set to bootstrap the new raft log in %s", cfg.Dir)
	case cfg.Applied > last:
		return nil, fmt.Errorf("%w: applied %d, last log index %d in %s", ErrAppliedBeyondLog, cfg.Applied, last, cfg.Dir)
	case cfg.Applied < first-1 && snapshotter == nil:
		return nil, fmt.Errorf("%w: applied %d, log starts at %d in %s, and the Applier does not implement Snapshotter", ErrAppliedCompacted, cfg.Applied, first, cfg.Dir)
	case cfg.Applied < first-1 && snapIndex < first-1:
		return nil, fmt.Errorf("%w: applied %d, log starts at %d in %s, and the newest stored snapshot (index %d) does not cover the gap", ErrAppliedCompacted, cfg.Applied, first, cfg.Dir, snapIndex)
	}
	applied := cfg.Applied
	if applied < first-1 {
		// The entries right after Applied are gone: start from the stored
		// snapshot and replay only what follows it. When the log still
		// has them, replaying is cheaper than a whole restore.
		if err := restoreAtStart(cfg, st, snapshotter); err != nil {
			return nil, err
		}
		applied = snapIndex
	}
	// The commit index is written lazily (raft does not require it to be
	// synced), so after a crash it may lag what the state machine durably
	// applied. Applied entries were committed: move the commit index up.
	if applied > hs.GetCommit() {
		st.raiseCommit(applied)
		hs, _, _ = st.InitialState()
	}

	logger := cfg.Logger.With("raft_id", cfg.ID)
	rc := &raft.Config{
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
	rn, err := newRawNode(rc)
	if err != nil {
		return nil, err
	}
	voters := slices.Clone(cs.GetVoters())
	learners := slices.Clone(cs.GetLearners())
	memberCtx, err := st.db.members()
	if err != nil {
		return nil, err
	}
	removedPeers, err := st.db.removedMembers()
	if err != nil {
		return nil, err
	}
	if isNew && !cfg.Join {
		// The bootstrap conf changes carry a header like every conf change
		// raftlog writes, with proposer 0 (nobody waits for them).
		peers := make([]raft.Peer, len(cfg.Peers))
		voters = voters[:0]
		for i, p := range cfg.Peers {
			peers[i] = raft.Peer{ID: p.ID, Context: encodeProposal(proposalID{}, p.Context)}
			voters = append(voters, p.ID)
		}
		if err := rn.Bootstrap(peers); err != nil {
			return nil, fmt.Errorf("raftlog: bootstrap %s: %w", cfg.Dir, err)
		}
	}
	slices.Sort(voters)
	slices.Sort(learners)

	n := &Node{
		cfg:       cfg,
		id:        cfg.ID,
		boot:      boot,
		log:       logger,
		storage:   st,
		propc:     make(chan *proposal, proposalBatch),
		recvc:     make(chan *raftpb.Message, recvBuffer),
		reportc:   make(chan report, reportBuffer),
		readc:     make(chan *readRequest, proposalBatch),
		resyncc:   make(chan *resyncRequest),
		stopc:     make(chan struct{}),
		donec:     make(chan struct{}),
		readyc:    make(chan struct{}),
		waiters:   make(map[uint64]*proposal),
		reads:     make(map[string]*readRequest),
		rn:        rn,
		term:      hs.GetTerm(),
		savedTerm: hs.GetTerm(),
		savedVote: hs.GetVote(),
		commit:    hs.GetCommit(),
		applied:   max(applied, first-1),
		voters:    voters,
		learners:  learners,
		memberCtx: memberCtx,
		// The only voter need not wait an election timeout; raft refuses
		// to campaign before the committed conf changes are applied, so
		// the loop campaigns once they are.
		campaign:    len(voters) == 1 && voters[0] == cfg.ID,
		snapshotter: snapshotter,
		snapc:       make(chan snapResult, 1),

		commitUpdates: newCommitUpdates(cfg.commitUpdateDelay),
		snapTried:     snapIndex,
		removedc:      make(chan uint64, 1),
	}
	n.removedPeers.Store(&removedPeers)
	n.watch.Store(&leaderWatch{ch: make(chan struct{})})
	n.publishMembers()
	n.publish()
	n.log.Info("raft node starting", "new_log", isNew, "boot", boot,
		"term", n.term, "commit", n.commit, "applied", n.applied, "last_index", last, "voters", voters,
		"learners", learners, "join", isNew && cfg.Join, "snapshot_index", snapIndex, "first_index", first)
	go n.run()
	return n, nil
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

// Propose appends data to the log and waits until this entry is applied,
// returning the Applier's Result for it: Value, or Err as the error.
//
// Without a leader it waits for one until ctx ends and then returns an error
// wrapping both ErrNoLeader and ctx.Err(). When ctx ends otherwise the error
// wraps ctx.Err(); the entry may still be committed and applied later. After
// Stop it returns ErrStopped. When the leader changes before the entry
// applies it returns ErrLeaderChanged: the entry may be lost or may still
// commit, so only a proposal that is safe to apply twice may be retried.
//
// Propose allocates the proposal, its channel and one copy of data with a
// small header.
func (n *Node) Propose(ctx context.Context, data []byte) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("raftlog: propose: %w", err)
	}
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		// Load the watch before the status so a leader change between the
		// two cannot be missed.
		watch := n.watch.Load()
		if n.status.Load().Leader == 0 {
			select {
			case <-watch.ch:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
			case <-n.donec:
				return nil, n.stopError()
			}
		}
		p := &proposal{seq: n.seq.Add(1), done: make(chan proposalResult, 1)}
		p.data = encodeProposal(proposalID{node: n.id, boot: n.boot, seq: p.seq}, data)
		if err := n.register(p); err != nil {
			return nil, err
		}
		select {
		case n.propc <- p:
		case <-ctx.Done():
			n.unregister(p.seq)
			return nil, fmt.Errorf("raftlog: propose: %w", ctx.Err())
		case <-n.donec:
			n.unregister(p.seq)
			return nil, n.stopError()
		}
		var r proposalResult
		select {
		case r = <-p.done:
		case <-watch.ch:
			// A new leader: a proposal forwarded to the old one may be lost.
			select {
			case r = <-p.done:
			default:
				n.unregister(p.seq)
				return nil, ErrLeaderChanged
			}
		case <-ctx.Done():
			n.unregister(p.seq)
			return nil, fmt.Errorf("raftlog: propose: %w", ctx.Err())
		}
		if r.proposeErr == nil {
			return r.Value, r.Err
		}
		if !errors.Is(r.proposeErr, raft.ErrProposalDropped) {
			return nil, r.proposeErr
		}
		// Raft dropped it (no leader inside raft yet, or a leadership
		// transfer): it is not in the log, so trying again is safe. Wait
		// for a leader change, or a tick for causes that end without one.
		if retry == nil {
			retry = time.NewTimer(n.cfg.TickInterval)
		} else {
			retry.Reset(n.cfg.TickInterval)
		}
		select {
		case <-watch.ch:
		case <-retry.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
		case <-n.donec:
			return nil, n.stopError()
		}
	}
}

func (n *Node) register(p *proposal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return n.stopErrorLocked()
	}
	n.waiters[p.seq] = p
	return nil
}

func (n *Node) unregister(seq uint64) {
	n.mu.Lock()
	delete(n.waiters, seq)
	n.mu.Unlock()
}

func (n *Node) stopError() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stopErrorLocked()
}

func (n *Node) stopErrorLocked() error {
	if n.err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, n.err)
	}
	return ErrStopped
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
		return n.stopError()
	default:
	}
	select {
	case n.recvc <- m:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("raftlog: step: %w", ctx.Err())
	case <-n.donec:
		return n.stopError()
	}
}

// Status returns the latest status the node's goroutine published. It takes
// no lock on the raft node; Voters, Learners and Progress are copies the
// caller owns.
func (n *Node) Status() Status {
	s := *n.status.Load()
	s.Voters = slices.Clone(s.Voters)
	s.Learners = slices.Clone(s.Learners)
	s.Progress = maps.Clone(s.Progress)
	return s
}

// Members returns the membership as of the last applied configuration
// change, sorted by id; it is read from raft.db at Start, so it is right
// after a restart without replaying the log. The result is the caller's.
func (n *Node) Members() []Peer {
	ms := slices.Clone(*n.members.Load())
	for i := range ms {
		ms[i].Context = slices.Clone(ms[i].Context)
	}
	return ms
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
	return n.caught.Load()
}

// Ready returns a channel closed the first time Caught becomes true.
func (n *Node) Ready() <-chan struct{} {
	return n.readyc
}

// Err returns the error that stopped the node's goroutine on its own (a
// storage failure, or ErrRemoved once this member applied its own removal),
// or nil while it runs or after a plain Stop.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Stop stops the node's goroutine, fails pending proposals with ErrStopped,
// waits for the goroutine to exit and closes the storage. It is idempotent
// and safe to call concurrently.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		close(n.stopc)
		<-n.donec
		n.snapWG.Wait()
		if err := n.storage.Close(); err != nil {
			n.log.Error("close raft log", "err", err)
		}
	})
}

// run is the node's goroutine: the only one touching n.rn.
func (n *Node) run() {
	var exitErr error
	defer func() { n.exit(exitErr) }()
	ticker := time.NewTicker(n.cfg.TickInterval)
	defer ticker.Stop()
	defer n.commitUpdates.stop()
	for {
		// Advance can make more work ready (our own append and apply
		// acknowledgements), so loop until raft has nothing left.
		for n.rn.HasReady() {
			if err := n.handleReady(); err != nil {
				n.log.Error("raft loop stopped", "err", err)
				exitErr = err
				return
			}
			if n.removed {
				n.log.Info("this member was removed from the cluster; raft loop stopped")
				exitErr = ErrRemoved
				return
			}
		}
		if n.campaign && n.applied >= n.commit {
			n.campaign = false
			if n.leader == 0 {
				if err := n.rn.Campaign(); err != nil {
					n.log.Warn("campaign", "err", err)
				}
				continue
			}
		}
		select {
		case <-ticker.C:
			n.rn.Tick()
			n.refreshProgress()
			n.maybePromote()
		case r := <-n.reportc:
			if r.snapshot {
				n.rn.ReportSnapshot(r.id, r.status)
			} else {
				n.rn.ReportUnreachable(r.id)
			}
		case req := <-n.readc:
			n.rn.ReadIndex(req.key)
		case p := <-n.propc:
			n.propose(p)
			n.drainQueued()
		case m := <-n.recvc:
			n.step(m)
			n.drainQueued()
		case r := <-n.snapc:
			n.finishSnapshot(r)
		case <-n.commitUpdates.timer.C:
			n.sendCommitUpdates()
		case by := <-n.removedc:
			// Recorded like an applied removal, so Start refuses this
			// data directory from now on.
			if err := n.storage.markRemoved(n.applied); err != nil {
				n.log.Error("recording this member's removal", "err", err)
			}
			n.log.Error("the leader reports this member was removed from the cluster (while it was away); raft loop stopped", "leader", by)
			exitErr = ErrRemoved
			return
		case req := <-n.resyncc:
			if err := n.resync(req); err != nil {
				n.log.Error("raft loop stopped", "err", err)
				exitErr = err
				return
			}
		case <-n.stopc:
			return
		}
	}
}

// sendCommitUpdates sends the held entry-less appends (commitUpdates) of
// this leader's current term; older ones are dropped.
func (n *Node) sendCommitUpdates() {
	msgs := n.commitUpdates.take()
	live := msgs[:0]
	for _, m := range msgs {
		if n.leader == n.id && m.GetTerm() == n.term {
			live = append(live, m)
		}
	}
	if len(live) > 0 && n.cfg.Transport != nil {
		n.cfg.Transport.Send(live)
	}
}

// drainQueued takes the proposals and peer messages already queued, up to
// a batch, so that they share the next Ready and its fsync: under load
// (many clients, or a leader receiving forwarded proposals and append
// responses from followers) one fsync covers many entries.
func (n *Node) drainQueued() {
	for range proposalBatch {
		select {
		case p := <-n.propc:
			n.propose(p)
		case m := <-n.recvc:
			n.step(m)
		default:
			return
		}
	}
}

// step hands a peer message to raft.
func (n *Node) step(m *raftpb.Message) {
	if m.GetType() == raftpb.MsgProp && n.leader == n.id {
		n.commitUpdates.forwarded(m.GetFrom())
	}
	if err := n.rn.Step(m); err != nil {
		n.log.Debug("raft step", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
	}
}

func (n *Node) propose(p *proposal) {
	var err error
	if p.cc != nil {
		// A leader ignores a conf change while another is not yet applied
		// (it appends an empty entry instead, and nobody would wake the
		// waiter): refuse it here so the caller retries.
		if n.leader == n.id && n.pendingConf > n.applied {
			err = errConfChangePending
		} else {
			err = n.rn.ProposeConfChange(p.cc)
		}
	} else {
		err = n.rn.Propose(p.data)
	}
	if err != nil {
		n.finish(p.seq, proposalResult{proposeErr: err})
	}
}

// finish hands r to the waiter for seq, if it is still waiting.
func (n *Node) finish(seq uint64, r proposalResult) {
	n.mu.Lock()
	p, ok := n.waiters[seq]
	delete(n.waiters, seq)
	n.mu.Unlock()
	if ok {
		p.done <- r
	}
}

// exit runs when the loop returns: it fails every waiter and marks the node
// stopped, so no new waiter can register.
func (n *Node) exit(cause error) {
	n.mu.Lock()
	n.stopped = true
	n.err = cause
	errStop := n.stopErrorLocked()
	waiters := n.waiters
	n.waiters = nil
	reads := n.reads
	n.reads = nil
	n.mu.Unlock()
	for _, p := range waiters {
		p.done <- proposalResult{proposeErr: errStop}
	}
	for _, r := range reads {
		r.done <- readResult{err: errStop}
	}
	for _, r := range n.pendingReads {
		r.done <- readResult{err: errStop}
	}
	n.pendingReads = nil
	n.caught.Store(false)
	close(n.donec)
}

// handleReady processes one Ready in the order raft's doc.go requires:
// persist, then send, then apply (the snapshot, then the committed
// entries), then Advance.
func (n *Node) handleReady() error {
	rd := n.rn.Ready()
	// A snapshot from the leader is checked before anything is persisted:
	// one this node could not install must not replace its log.
	var (
		hasSnap     = !raft.IsEmptySnap(rd.Snapshot)
		snapMembers map[uint64][]byte
		snapData    []byte
	)
	if hasSnap {
		index := rd.Snapshot.GetMetadata().GetIndex()
		if n.snapshotter == nil {
			return fmt.Errorf("raftlog: received a snapshot at index %d, but the Applier does not implement Snapshotter", index)
		}
		var err error
		if snapMembers, snapData, err = decodeEnvelope(rd.Snapshot.GetData()); err != nil {
			return fmt.Errorf("raftlog: received snapshot at index %d: %w", index, err)
		}
	}
	if rd.SoftState != nil {
		n.leader = rd.SoftState.Lead
	}
	if rd.HardState != nil {
		n.term = rd.HardState.GetTerm()
		n.commit = rd.HardState.GetCommit()
	}
	for _, e := range rd.Entries {
		if t := e.GetType(); t == raftpb.EntryConfChange || t == raftpb.EntryConfChangeV2 {
			n.pendingConf = e.GetIndex()
		}
	}

	// 1. Persist. Entries, term and vote must be synced before any message
	// goes out; a hard state where only the commit index moved need not
	// be (raft's MustSync), so it rides along with the next write instead
	// of costing an fsync of its own.
	// metrics: time this call (metalog_raftlog_save_seconds) here.
	// A snapshot goes to its file, its metadata and the member contexts it
	// carries to raft.db, with the log replaced by what follows it.
	//
	// A leader whose term and vote this Ready leaves as they are on disk
	// sends first and persists while its followers do (raft thesis
	// 10.2.1): its MsgApps carry entries it is itself writing, and it
	// counts its own vote for them only once they are durable (Advance).
	if len(rd.Entries) > 0 && n.leader == n.id {
		n.commitUpdates.appended(rd.Entries[len(rd.Entries)-1].GetIndex())
	}
	msgs := n.commitUpdates.filter(rd.Messages)
	sendFirst := n.leader == n.id && !hasSnap &&
		(rd.HardState == nil || (rd.HardState.GetTerm() == n.savedTerm && rd.HardState.GetVote() == n.savedVote))
	if sendFirst && len(msgs) > 0 && n.cfg.Transport != nil {
		n.cfg.Transport.Send(msgs)
		// Send made the peers' senders runnable on this goroutine's P;
		// the fsync below would hold that P in a syscall for as long as
		// the disk takes, and the appends would leave only when the
		// scheduler takes the P back or another steals them. Yield once:
		// the senders write and flush their streams themselves
		// (stream.go), so the appends are on the wire before the write.
		runtime.Gosched()
	}
	if rd.MustSync || len(rd.Entries) > 0 || hasSnap {
		if err := n.storage.save(rd.HardState, rd.Entries, rd.Snapshot, snapMembers); err != nil {
			return err
		}
		if rd.HardState != nil {
			n.savedTerm, n.savedVote = rd.HardState.GetTerm(), rd.HardState.GetVote()
		}
	} else if rd.HardState != nil {
		n.storage.setHardStateLazy(rd.HardState)
	}

	// 2. Send (unless sent above). The Sender reports a MsgSnap's outcome
	// (Node.ReportSnapshot).
	if !sendFirst && len(msgs) > 0 && n.cfg.Transport != nil {
		n.cfg.Transport.Send(msgs)
	}

	// 3. Apply.
	if hasSnap {
		if err := n.installSnapshot(rd.Snapshot, snapMembers, snapData); err != nil {
			return err
		}
	}
	if err := n.applyCommitted(rd.CommittedEntries); err != nil {
		return err
	}
	n.confirmReads(rd.ReadStates)
	n.maybeSnapshot()

	// 4. Advance.
	n.rn.Advance(rd)
	n.publish()
	return nil
}

// applyCommitted feeds committed entries to the Applier in batches, split
// around configuration changes so the state machine never durably records
// an applied index past a configuration change that is not yet persisted.
func (n *Node) applyCommitted(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	// metrics: count applied entries and time Apply here.
	for _, e := range ents {
		switch e.GetType() {
		case raftpb.EntryNormal:
			if len(e.GetData()) == 0 {
				continue // a new leader's empty entry
			}
			id, payload, err := decodeProposal(e.GetData())
			if err != nil {
				panic(fmt.Sprintf("raftlog: committed entry %d (term %d) was not written by raftlog: %v", e.GetIndex(), e.GetTerm(), err))
			}
			n.batch = append(n.batch, Entry{Index: e.GetIndex(), Term: e.GetTerm(), Data: payload})
			n.batchIDs = append(n.batchIDs, id)
		case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
			n.flushApply()
			if err := n.applyConfChange(e); err != nil {
				return err
			}
		}
	}
	n.flushApply()
	n.applied = ents[len(ents)-1].GetIndex()
	return nil
}

// flushApply hands the pending batch to the Applier and its results to the
// waiting proposers of this node.
func (n *Node) flushApply() {
	if len(n.batch) == 0 {
		return
	}
	results := n.cfg.Applier.Apply(n.batch)
	if len(results) != len(n.batch) {
		panic(fmt.Sprintf("raftlog: Applier returned %d results for %d entries (indexes %d..%d)",
			len(results), len(n.batch), n.batch[0].Index, n.batch[len(n.batch)-1].Index))
	}
	// Publish first, so a proposer that returns sees its entry in Status.
	n.applied = n.batch[len(n.batch)-1].Index
	n.publish()
	n.mu.Lock()
	for i, id := range n.batchIDs {
		if id.node != n.id || id.boot != n.boot {
			continue
		}
		if p, ok := n.waiters[id.seq]; ok {
			delete(n.waiters, id.seq)
			p.done <- proposalResult{Result: results[i]}
		}
	}
	n.mu.Unlock()
	// Drop references to payloads so the reused arrays do not pin them.
	clear(n.batch)
	n.batch = n.batch[:0]
	n.batchIDs = n.batchIDs[:0]
}

func (n *Node) applyConfChange(e *raftpb.Entry) error {
	var (
		cc      raftpb.ConfChangeI
		changes []*raftpb.ConfChangeSingle
		rawCtx  []byte
	)
	if e.GetType() == raftpb.EntryConfChange {
		c := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			return fmt.Errorf("raftlog: decode conf change at %d: %w", e.GetIndex(), err)
		}
		cc, rawCtx = c, c.GetContext()
		changes = []*raftpb.ConfChangeSingle{{Type: c.Type, NodeId: c.NodeId}}
	} else {
		c := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			return fmt.Errorf("raftlog: decode conf change at %d: %w", e.GetIndex(), err)
		}
		cc, rawCtx, changes = c, c.GetContext(), c.GetChanges()
	}
	// raftlog writes a proposal header into the context; a context
	// without one (another writer) is taken as the member's context.
	pid, userCtx, err := decodeProposal(rawCtx)
	if err != nil {
		pid, userCtx = proposalID{}, rawCtx
	}

	// Refuse, deterministically, a change raft would panic on: removing
	// the last voter. Every node decides on the same conf state.
	var refused error
	if len(changes) == 1 && changes[0].GetType() == raftpb.ConfChangeRemoveNode &&
		len(n.voters) == 1 && n.voters[0] == changes[0].GetNodeId() {
		refused = fmt.Errorf("%w: removing member %d would leave no voter", ErrConfChangeRefused, changes[0].GetNodeId())
		n.log.Warn("refused configuration change", "index", e.GetIndex(), "err", refused)
		cc, changes = &raftpb.ConfChange{}, nil
	}

	cs := n.rn.ApplyConfChange(cc)
	var mc memberChange
	for _, ch := range changes {
		id := ch.GetNodeId()
		if id == 0 {
			continue
		}
		switch ch.GetType() {
		case raftpb.ConfChangeRemoveNode:
			delete(n.memberCtx, id)
			mc = memberChange{id: id, remove: true, self: id == n.id, index: e.GetIndex()}
		case raftpb.ConfChangeAddNode, raftpb.ConfChangeAddLearnerNode:
			old, ok := n.memberCtx[id]
			if !ok && n.snapshotter != nil {
				// A new member of a compacted log catches up by a
				// snapshot, and raft on it ignores one whose ConfState
				// does not list it: take a snapshot that does.
				if first, _ := n.storage.FirstIndex(); first > 1 {
					n.snapWanted = true
					// Sending it the stored one would be a transfer
					// for nothing.
					n.storage.awaitSnapshot(e.GetIndex())
				}
			}
			// A promotion carries the learner's context again; an empty
			// one keeps what is stored.
			if ok && len(userCtx) == 0 {
				mc = memberChange{id: id, context: old}
			} else {
				n.memberCtx[id] = slices.Clone(userCtx)
				mc = memberChange{id: id, context: userCtx}
			}
		}
	}
	if len(changes) > 1 {
		// Only raftlog's own single changes are written today; keep the
		// conf state right and the contexts as they are.
		mc = memberChange{}
	}
	if err := n.storage.saveConfChange(cs, mc); err != nil {
		return err
	}
	if mc.id != 0 && !mc.self {
		n.noteRemovedPeer(mc.id, mc.remove, mc.index)
	}
	voters := slices.Clone(cs.GetVoters())
	slices.Sort(voters)
	learners := slices.Clone(cs.GetLearners())
	slices.Sort(learners)
	n.voters, n.learners = voters, learners
	n.applied = e.GetIndex()
	members := n.publishMembers()
	n.publish()
	n.log.Info("applied configuration change", "index", e.GetIndex(), "voters", voters, "learners", learners)

	if mc.remove && !mc.self && n.leader == n.id {
		n.tellRemoved(mc.id, e)
	}
	if pid.node == n.id && pid.boot == n.boot && pid.seq != 0 {
		n.finish(pid.seq, proposalResult{Result: Result{Err: refused}})
	}
	if n.cfg.OnConfChange != nil && len(changes) == 1 {
		ch := changes[0]
		applied := ConfChangeApplied{
			Index:   e.GetIndex(),
			Type:    ch.GetType(),
			ID:      ch.GetNodeId(),
			Members: slices.Clone(members),
		}
		if ch.GetType() != raftpb.ConfChangeRemoveNode {
			applied.Context = slices.Clone(n.memberCtx[ch.GetNodeId()])
		}
		n.cfg.OnConfChange(applied)
	}
	if mc.self {
		n.removed = true
	}
	return nil
}

// noteRemovedPeer records that member id was removed at index, or, when
// added, that it no longer is.
func (n *Node) noteRemovedPeer(id uint64, removed bool, index uint64) {
	cur := *n.removedPeers.Load()
	if _, was := cur[id]; was == removed {
		return
	}
	next := maps.Clone(cur)
	if removed {
		next[id] = index
	} else {
		delete(next, id)
	}
	n.removedPeers.Store(&next)
}

// IsPeerRemoved reports whether a message from member id should be
// answered with "you were removed" (LocalNode): this node leads, and it
// applied id's removal. A member removed while it was down never applies
// its removal (the leader no longer sends to it) and would otherwise
// campaign forever. Only the leader says so: a follower may not yet have
// applied the addition of a member that was removed and added again. It
// takes no lock.
func (n *Node) IsPeerRemoved(id uint64) bool {
	if _, ok := (*n.removedPeers.Load())[id]; !ok {
		return false
	}
	return n.status.Load().Leader == n.id
}

// ReportRemoved stops the node as removed from the cluster, on the word of
// member by, the leader (LocalNode). It never blocks.
func (n *Node) ReportRemoved(by uint64) {
	select {
	case n.removedc <- by:
	default:
	}
}

// tellRemoved sends member id, which the leader has just removed, the entry
// of its removal with the commit index covering it. Raft no longer sends
// anything to a member it removed, and the append that carried the commit
// index may not have reached it (say it was being probed), so without this
// the removed member might never apply its removal and stop. It is a valid
// append from the current leader: the entry is committed and persisted. A
// member whose log does not match at the previous index rejects it.
func (n *Node) tellRemoved(id uint64, e *raftpb.Entry) {
	if n.cfg.Transport == nil {
		return
	}
	prevTerm, err := n.storage.Term(e.GetIndex() - 1)
	if err != nil {
		return
	}
	n.cfg.Transport.Send([]*raftpb.Message{{
		Type:    raftpb.MsgApp.Enum(),
		From:    new(n.id),
		To:      new(id),
		Term:    new(n.term),
		Index:   new(e.GetIndex() - 1),
		LogTerm: new(prevTerm),
		Entries: []*raftpb.Entry{e},
		Commit:  new(e.GetIndex()),
	}})
}

// publishMembers builds and publishes the member list from the loop's conf
// state and contexts, and returns it (immutable).
func (n *Node) publishMembers() []Peer {
	ms := make([]Peer, 0, len(n.voters)+len(n.learners))
	for _, id := range n.voters {
		ms = append(ms, Peer{ID: id, Context: n.memberCtx[id]})
	}
	for _, id := range n.learners {
		ms = append(ms, Peer{ID: id, Context: n.memberCtx[id], Learner: true})
	}
	slices.SortFunc(ms, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	n.members.Store(&ms)
	return ms
}

// refreshProgress copies the leader's view of every member's match index
// for Status; on other nodes it clears it. It allocates only when a value
// changed.
func (n *Node) refreshProgress() {
	if n.leader != n.id {
		if n.progress != nil {
			n.progress, n.progressNew = nil, true
			n.publish()
		}
		return
	}
	changed := n.progress == nil
	count := 0
	n.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		count++
		if m, ok := n.progress[id]; !ok || m != pr.Match {
			changed = true
		}
	})
	if !changed && count == len(n.progress) {
		return
	}
	p := make(map[uint64]uint64, count)
	n.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		p[id] = pr.Match
	})
	n.progress, n.progressNew = p, true
	n.publish()
}

// maybePromote, on the leader, proposes to make a voter of the learner with
// the lowest id whose log has reached the commit index. One change at a
// time: nothing is proposed while a conf change is not yet applied.
func (n *Node) maybePromote() {
	if n.leader != n.id || len(n.learners) == 0 || n.pendingConf > n.applied {
		return
	}
	var cand uint64
	n.rn.WithProgress(func(id uint64, typ raft.ProgressType, pr tracker.Progress) {
		if typ == raft.ProgressTypeLearner && pr.Match >= n.commit && (cand == 0 || id < cand) {
			cand = id
		}
	})
	if cand == 0 {
		return
	}
	cc := &raftpb.ConfChange{
		Type:    raftpb.ConfChangeAddNode.Enum(),
		NodeId:  new(cand),
		Context: encodeProposal(proposalID{}, n.memberCtx[cand]),
	}
	if err := n.rn.ProposeConfChange(cc); err != nil {
		n.log.Debug("propose learner promotion", "learner", cand, "err", err)
		return
	}
	// Until the entry shows up in a Ready, no second promotion: the
	// loop handles that Ready before the next tick.
	n.log.Info("promoting caught-up learner to voter", "learner", cand, "commit", n.commit)
}

// confirmReads takes the read states raft produced and completes every
// confirmed read whose index is applied.
func (n *Node) confirmReads(states []raft.ReadState) {
	if len(states) > 0 {
		n.mu.Lock()
		for _, rs := range states {
			req, ok := n.reads[string(rs.RequestCtx)]
			if !ok {
				continue // its caller gave up, or a duplicate answer
			}
			delete(n.reads, string(rs.RequestCtx))
			req.index = rs.Index
			req.confirmed.Store(true)
			n.pendingReads = append(n.pendingReads, req)
		}
		n.mu.Unlock()
	}
	if len(n.pendingReads) == 0 {
		return
	}
	keep := n.pendingReads[:0]
	for _, req := range n.pendingReads {
		if req.index <= n.applied {
			req.done <- readResult{index: req.index}
			continue
		}
		keep = append(keep, req)
	}
	clear(n.pendingReads[len(keep):])
	n.pendingReads = keep
}

// publish makes the loop's view visible to other goroutines. It allocates
// only when something changed.
func (n *Node) publish() {
	// Caught up means: everything committed is applied, and the commit index
	// has reached an entry of the current term. A new leader's first entry
	// is of its term, so only then does this node know the whole log the
	// leader holds as committed; a commit index read from disk on restart,
	// or heard before the leader's first append, may lag behind it.
	if n.leader != n.caughtLeader || n.term != n.caughtTerm {
		n.caughtLeader, n.caughtTerm, n.caughtDone = n.leader, n.term, false
	}
	if !n.caughtDone && n.leader != 0 && n.applied >= n.commit {
		if t, err := n.storage.Term(n.commit); err == nil && t == n.term {
			n.caughtDone = true
		}
	}
	caught := n.leader != 0 && n.caughtDone
	n.caught.Store(caught)
	if caught && !n.readyClosed {
		n.readyClosed = true
		close(n.readyc)
	}

	if n.leader != n.id && n.progress != nil {
		n.progress, n.progressNew = nil, true
	}
	old := n.status.Load()
	if old != nil && old.Leader == n.leader && old.Term == n.term && old.Commit == n.commit &&
		old.Applied == n.applied && sameSlice(old.Voters, n.voters) && sameSlice(old.Learners, n.learners) &&
		!n.progressNew {
		return
	}
	n.progressNew = false
	n.status.Store(&Status{ID: n.id, Leader: n.leader, Term: n.term, Commit: n.commit, Applied: n.applied,
		Voters: n.voters, Learners: n.learners, Progress: n.progress})
	if old != nil && old.Leader != n.leader {
		n.log.Info("leader changed", "leader", n.leader, "term", n.term)
		w := n.watch.Swap(&leaderWatch{ch: make(chan struct{})})
		close(w.ch)
	}
}

// sameSlice reports whether a and b are the same slice (not just equal).
func sameSlice(a, b []uint64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
