package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// loop is the node's goroutine (run) and what it alone touches: the raft
// node, the view of raft's state it publishes (Status, Caught), and the
// parts that act on Readys: membership, snapshot scheduling, the holding
// of commit-index updates and the reads waiting for their index to apply.
type loop struct {
	cfg     *Config // the Node's; read only
	id      uint64
	boot    uint64
	log     *slog.Logger
	storage *Storage
	rn      *raft.RawNode
	pub     *published
	waits   *waiters

	members       *membership
	live          liveness // when each peer was last heard from, for promotions
	snaps         *snapScheduler
	commitUpdates *commitUpdates
	reads         pendingReads // confirmed, waiting for applied >= index

	// The receiving ends of the Node's channels.
	propc     <-chan *proposal
	recvc     <-chan *raftpb.Message
	reportc   <-chan report
	transferc <-chan uint64
	releasec  <-chan struct{}
	readc     <-chan *readRequest
	repairc   <-chan *repairRequest
	removedc  <-chan removedReport
	foreignc  <-chan error
	stopc     <-chan struct{}
	donec     chan struct{} // closed by exit

	leader uint64
	// savedTerm and savedVote are the term and vote on disk: while a
	// Ready does not change them, a leader may send before it persists.
	savedTerm, savedVote uint64
	term                 uint64
	commit               uint64
	applied              uint64
	progress             map[uint64]uint64
	progressNew          bool   // progress changed since the last publish
	caughtLeader         uint64 // leader (and term) the caught flag was computed for
	caughtTerm           uint64
	caughtDone           bool // caught up with caughtLeader in caughtTerm
	readyClosed          bool
	campaign             bool         // campaign once everything committed is applied
	batch                []Entry      // reused apply batch
	batchIDs             []proposalID // proposal ids of batch, same order
}

// newLoop builds the loop of n, which Start is creating, on rn and the
// stored state, and publishes its first view.
func newLoop(n *Node, rn *raft.RawNode, ss startState, memberCtx map[uint64][]byte, cs *raftpb.ConfState, sn Snapshotter) *loop {
	l := &loop{
		cfg: &n.cfg, id: n.id, boot: n.boot, log: n.log, storage: n.storage, rn: rn, pub: n.pub, waits: n.waits,
		members:       &membership{self: n.id, pub: n.pub, ctx: memberCtx},
		live:          newLiveness(2 * uint64(n.cfg.HeartbeatTicks)),
		snaps:         newSnapScheduler(&n.cfg, sn, n.storage, n.log),
		commitUpdates: newCommitUpdates(n.cfg.commitUpdateDelay),
		propc:         n.propc, recvc: n.recvc, reportc: n.reportc, transferc: n.transferc, releasec: n.releasec, readc: n.readc, repairc: n.repairc,
		removedc: n.removedc, foreignc: n.foreignc, stopc: n.stopc, donec: n.donec,
		term:      ss.hs.GetTerm(),
		savedTerm: ss.hs.GetTerm(),
		savedVote: ss.hs.GetVote(),
		commit:    ss.hs.GetCommit(),
		applied:   max(ss.applied, ss.first-1),
	}
	l.members.setConf(cs)
	// The only voter need not wait an election timeout; raft refuses to
	// campaign before the committed conf changes are applied, so the loop
	// campaigns once they are.
	l.campaign = len(l.members.voters) == 1 && l.members.voters[0] == n.id
	l.members.publish()
	l.publish()
	return l
}

// run is the node's goroutine: the only one touching l.rn.
func (l *loop) run() {
	var exitErr error
	defer func() { l.exit(exitErr) }()
	ticker := time.NewTicker(l.cfg.TickInterval)
	defer ticker.Stop()
	defer l.commitUpdates.stop()
	for {
		// Advance can make more work ready (our own append and apply
		// acknowledgements), so loop until raft has nothing left.
		for l.rn.HasReady() {
			if err := l.handleReady(); err != nil {
				l.log.Error("raft loop stopped", "err", err)
				exitErr = err
				return
			}
			if l.members.removedSelf {
				l.log.Info("this member was removed from the cluster; raft loop stopped")
				exitErr = ErrRemoved
				return
			}
		}
		if l.campaign && l.applied >= l.commit {
			l.campaign = false
			if l.leader == 0 {
				if err := l.rn.Campaign(); err != nil {
					l.log.Warn("campaign", "err", err)
				}
				continue
			}
		}
		var stop bool
		if stop, exitErr = l.handleNext(ticker.C); stop {
			return
		}
	}
}

// handleNext waits for the next input and handles it. stop says the loop
// must exit, with err as its cause (nil for Stop).
func (l *loop) handleNext(tick <-chan time.Time) (stop bool, err error) {
	select {
	case now := <-tick:
		l.rn.Tick()
		l.live.tick()
		l.refreshProgress()
		if l.snaps.retryDue(now) {
			l.maybeSnapshot()
		}
		if l.leader == l.id && l.members.pendingConf <= l.applied {
			l.members.promote(l.rn, l.commit, &l.live, l.cfg.Promotable, l.log)
		}
	case r := <-l.reportc:
		if r.snapshot {
			l.rn.ReportSnapshot(r.id, r.status)
		} else {
			l.rn.ReportUnreachable(r.id)
		}
	case to := <-l.transferc:
		if l.leader == l.id && to != l.id {
			l.log.Info("transferring leadership", "to", memberID(to))
			l.rn.TransferLeader(to)
		}
	case req := <-l.readc:
		l.rn.ReadIndex(req.key)
	case p := <-l.propc:
		l.propose(p)
		l.drainQueued()
	case m := <-l.recvc:
		l.step(m)
		l.drainQueued()
	case r := <-l.snaps.c:
		l.snaps.finish(r)
		l.maybeSnapshot()
	case <-l.commitUpdates.timer.C:
		l.sendCommitUpdates()
	case <-l.releasec:
		l.sendCommitUpdates()
	case r := <-l.removedc:
		if !r.leader && r.at != 0 && l.applied >= r.at {
			l.log.Warn("a member says this member was removed, but this member applied its addition after that removal; ignored (the other member has not applied it yet)",
				"by", memberID(r.by), "removed_at", r.at, "applied", l.applied)
			return false, nil
		}
		// Recorded like an applied removal, so Start refuses this data
		// directory from now on.
		if err := l.storage.markRemoved(l.applied); err != nil {
			l.log.Error("recording this member's removal", "err", err)
		}
		l.log.Info("a member reports this member was removed from the cluster (while it was away); raft loop stopped", "by", memberID(r.by), "removed_at", r.at)
		return true, ErrRemoved
	case err := <-l.foreignc:
		return true, stopForeign(l.storage, l.cfg.Dir, l.log, err)
	case req := <-l.repairc:
		if err := l.repair(req); err != nil {
			l.log.Error("raft loop stopped", "err", err)
			return true, err
		}
	case <-l.stopc:
		return true, nil
	}
	return false, nil
}

// stopForeign is the cause the loop stops with on err, from
// Node.ReportForeign. A member told that its cluster was forced into a
// new one (a *ForcedError) records it in st first, so that Start refuses
// its data dir dir from then on.
func stopForeign(st *Storage, dir string, log *slog.Logger, err error) error {
	var fe *ForcedError
	if !errors.As(err, &fe) {
		log.Error("a leader of another cluster sends to this member; raft loop stopped", "err", err)
		return err
	}
	cause := &ForcedError{Forcing: fe.Forcing, Dir: dir}
	if werr := st.db.markForcedAway(fe.Forcing); werr != nil {
		log.Error("recording that this member's cluster was forced into a new one", "err", werr)
	}
	log.Error("this member's cluster was forced into a new one; raft loop stopped, and this data dir must not be started again", "err", cause)
	return cause
}

// sendCommitUpdates sends the held entry-less appends (commitUpdates) of
// this leader's current term; older ones are dropped.
func (l *loop) sendCommitUpdates() {
	msgs := l.commitUpdates.take()
	live := msgs[:0]
	for _, m := range msgs {
		if l.leader == l.id && m.GetTerm() == l.term {
			live = append(live, m)
		}
	}
	if len(live) > 0 && l.cfg.Transport != nil {
		l.cfg.Transport.Send(live)
	}
}

// drainQueued takes the proposals and peer messages already queued, up to
// a batch, so that they share the next Ready and its fsync: under load
// (many clients, or a leader receiving forwarded proposals and append
// responses from followers) one fsync covers many entries.
func (l *loop) drainQueued() {
	for range proposalBatch {
		select {
		case p := <-l.propc:
			l.propose(p)
		case m := <-l.recvc:
			l.step(m)
		default:
			return
		}
	}
}

// step hands a peer message to raft, unless it would grow the log while
// the append gate is closed. Either way the sender was heard from.
func (l *loop) step(m *raftpb.Message) {
	l.live.note(m.GetFrom())
	if l.grows(m) {
		if err := l.gate(); err != nil {
			l.log.Debug("raft message dropped: the append gate is closed", "type", m.GetType().String(), "from", memberID(m.GetFrom()), "err", err)
			return
		}
	}
	if m.GetType() == raftpb.MsgProp && l.leader == l.id {
		l.commitUpdates.forwarded(m.GetFrom())
	}
	if err := l.rn.Step(m); err != nil {
		l.log.Debug("raft step", "type", m.GetType().String(), "from", memberID(m.GetFrom()), "err", err)
	}
}

// grows reports whether stepping m would write new entries to this node's
// log, so the append gate (Config.AppendGate) is asked first: an append
// with entries, a snapshot, or a proposal forwarded to this leader.
func (l *loop) grows(m *raftpb.Message) bool {
	switch m.GetType() {
	case raftpb.MsgApp:
		return len(m.Entries) > 0
	case raftpb.MsgSnap:
		return true
	case raftpb.MsgProp:
		return l.leader == l.id
	}
	return false
}

// propose hands p to raft; a proposal raft refuses gets the error at once,
// one it takes is marked taken (it may be in the log from now on).
func (l *loop) propose(p *proposal) {
	var err error
	switch {
	case p.cc == nil:
		if err = l.gate(); err == nil {
			err = l.rn.Propose(p.data)
		}
	case l.leader == l.id && l.members.pendingConf > l.applied:
		// A leader ignores a conf change while another is not yet applied
		// (it appends an empty entry instead, and nobody would wake the
		// waiter): refuse it here so the caller retries.
		err = errConfChangePending
	default:
		err = l.rn.ProposeConfChange(p.cc)
	}
	if err != nil {
		l.waits.finish(p.seq, proposalResult{proposeErr: err})
		return
	}
	p.taken.Store(true)
}

// gate asks Config.AppendGate, if set, whether the log may grow.
func (l *loop) gate() error {
	if l.cfg.AppendGate == nil {
		return nil
	}
	return l.cfg.AppendGate()
}

// exit runs when the loop returns: it fails every waiter and marks the node
// stopped, so no new waiter can register.
func (l *loop) exit(cause error) {
	errStop := l.waits.stop(cause)
	l.reads.fail(errStop)
	l.pub.caught.Store(false)
	close(l.donec)
}

// handleReady processes one Ready in the order raft's doc.go requires:
// persist, then send, then apply (the snapshot, then the committed
// entries), then Advance.
func (l *loop) handleReady() error {
	rd := l.rn.Ready()
	hasSnap := !raft.IsEmptySnap(rd.Snapshot)
	snapMembership, snapData, err := l.readySnapshot(rd.Snapshot, hasSnap)
	if err != nil {
		return err
	}
	if rd.SoftState != nil {
		l.leader = rd.SoftState.Lead
	}
	if rd.HardState != nil {
		l.term = rd.HardState.GetTerm()
		l.commit = rd.HardState.GetCommit()
	}
	l.members.noteAppended(rd.Entries)

	// 1. Persist. Entries, term and vote must be synced before any message
	// goes out; a hard state where only the commit index moved need not
	// be (raft's MustSync), so it rides along with the next write instead
	// of costing an fsync of its own. A snapshot goes to its file, its
	// metadata and the member contexts it carries to raft.db, with the
	// log replaced by what follows it.
	//
	// A leader whose term and vote this Ready leaves as they are on disk
	// sends first and persists while its followers do (raft thesis
	// 10.2.1): its MsgApps carry entries it is itself writing, and it
	// counts its own vote for them only once they are durable (Advance).
	if len(rd.Entries) > 0 && l.leader == l.id {
		l.commitUpdates.appended(rd.Entries[len(rd.Entries)-1].GetIndex())
	}
	msgs := l.commitUpdates.filter(rd.Messages)
	sendFirst := l.leader == l.id && !hasSnap &&
		(rd.HardState == nil || (rd.HardState.GetTerm() == l.savedTerm && rd.HardState.GetVote() == l.savedVote))
	if sendFirst && len(msgs) > 0 && l.cfg.Transport != nil {
		l.cfg.Transport.Send(msgs)
		// Send made the peers' senders runnable on this goroutine's P;
		// the fsync below would hold that P in a syscall for as long as
		// the disk takes, and the appends would leave only when the
		// scheduler takes the P back or another steals them. Yield once:
		// the senders write and flush their streams themselves
		// (stream.go), so the appends are on the wire before the write.
		runtime.Gosched()
	}
	if err := l.persist(rd.HardState, rd.Entries, rd.Snapshot, snapMembership, rd.MustSync || len(rd.Entries) > 0 || hasSnap); err != nil {
		return err
	}

	// 2. Send (unless sent above). The Sender reports a MsgSnap's outcome
	// (Node.ReportSnapshot).
	if !sendFirst && len(msgs) > 0 && l.cfg.Transport != nil {
		l.cfg.Transport.Send(msgs)
	}

	// 3. Apply.
	if hasSnap {
		if err := l.installSnapshot(rd.Snapshot, snapMembership, snapData); err != nil {
			return err
		}
	}
	if err := l.applyCommitted(rd.CommittedEntries); err != nil {
		return err
	}
	if len(rd.ReadStates) > 0 {
		l.reads = l.waits.confirmReads(rd.ReadStates, l.reads)
	}
	l.reads.complete(l.applied)
	l.maybeSnapshot()

	// 4. Advance.
	l.rn.Advance(rd)
	l.publish()
	return nil
}

// readySnapshot checks the snapshot of a Ready from the leader, if it has
// one, before anything is persisted: one this node could not install must
// not replace its log. It returns the membership and the Applier's data it
// carries (nil and nil without a snapshot).
func (l *loop) readySnapshot(snap *raftpb.Snapshot, hasSnap bool) (members *snapMembers, data []byte, err error) {
	if !hasSnap {
		return nil, nil, nil
	}
	index := snap.GetMetadata().GetIndex()
	if l.snaps.sn == nil {
		return nil, nil, fmt.Errorf("raftlog: received a snapshot at index %d, but the Applier does not implement Snapshotter", index)
	}
	sm, data, err := decodeEnvelope(snap.GetData())
	if err != nil {
		return nil, nil, fmt.Errorf("raftlog: received snapshot at index %d: %w", index, err)
	}
	return &sm, data, nil
}

// persist writes what a Ready must have on disk before its messages go
// out (write: entries, a snapshot, or a hard state raft must sync), or
// else just notes a hard state for the next write.
func (l *loop) persist(hs *raftpb.HardState, ents []*raftpb.Entry, snap *raftpb.Snapshot, sm *snapMembers, write bool) error {
	if !write {
		if hs != nil {
			l.storage.setHardStateLazy(hs)
		}
		return nil
	}
	start := time.Now()
	if err := l.storage.save(hs, ents, snap, sm); err != nil {
		return err
	}
	l.cfg.Metrics.save.Observe(time.Since(start).Seconds())
	if hs != nil {
		l.savedTerm, l.savedVote = hs.GetTerm(), hs.GetVote()
	}
	return nil
}

// applyCommitted feeds committed entries to the Applier in batches, split
// around configuration changes so the state machine never durably records
// an applied index past a configuration change that is not yet persisted.
func (l *loop) applyCommitted(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	for _, e := range ents {
		switch e.GetType() {
		case raftpb.EntryNormal:
			if len(e.GetData()) == 0 {
				continue // a new leader's empty entry
			}
			ent, id := committedEntry(e)
			l.batch = append(l.batch, ent)
			l.batchIDs = append(l.batchIDs, id)
		case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
			l.flushApply()
			if err := l.applyConfChange(e); err != nil {
				return err
			}
		}
	}
	l.flushApply()
	// The last entries may be a leader's empty ones, which move the applied
	// index without an Apply: publish it before reads complete against it.
	l.applied = ents[len(ents)-1].GetIndex()
	l.publish()
	return nil
}

// flushApply hands the pending batch to the Applier and its results to the
// waiting proposers of this node.
func (l *loop) flushApply() {
	if len(l.batch) == 0 {
		return
	}
	start := time.Now()
	results := applyChecked(l.cfg.Applier, l.batch)
	l.cfg.Metrics.apply.Observe(time.Since(start).Seconds())
	for _, e := range l.batch {
		l.snaps.appliedBytes(len(e.Data))
	}
	l.cfg.Metrics.appliedEntries.Add(float64(len(l.batch)))
	// Publish first, so a proposer that returns sees its entry in Status.
	l.applied = l.batch[len(l.batch)-1].Index
	l.publish()
	l.waits.finishApplied(l.batchIDs, results, l.id, l.boot)
	// Drop references to payloads so the reused arrays do not pin them.
	clear(l.batch)
	l.batch = l.batch[:0]
	l.batchIDs = l.batchIDs[:0]
}

// committedEntry is the Applier's view of committed normal entry e (its
// data aliases e's), and the id of its proposer. An entry raftlog did not
// write is a broken invariant.
func committedEntry(e *raftpb.Entry) (Entry, proposalID) {
	id, payload, err := decodeProposal(e.GetData())
	if err != nil {
		panic(fmt.Sprintf("raftlog: committed entry %d (term %d) was not written by raftlog: %v", e.GetIndex(), e.GetTerm(), err))
	}
	return Entry{Index: e.GetIndex(), Term: e.GetTerm(), Data: payload}, id
}

// applyChecked hands batch to app and returns its results, one per entry:
// another count is a broken invariant.
func applyChecked(app Applier, batch []Entry) []Result {
	results := app.Apply(batch)
	if len(results) != len(batch) {
		panic(fmt.Sprintf("raftlog: Applier returned %d results for %d entries (indexes %d..%d)",
			len(results), len(batch), batch[0].Index, batch[len(batch)-1].Index))
	}
	return results
}

// maybeSnapshot starts a snapshot of what is applied, if one is due.
func (l *loop) maybeSnapshot() {
	l.snaps.maybeStart(l.applied, snapMembers{contexts: l.members.ctx, removed: *l.pub.removedPeers.Load()})
}

// refreshProgress copies the leader's view of every member's match index
// for Status; on other nodes it clears it. It allocates only when a value
// changed.
func (l *loop) refreshProgress() {
	if l.leader != l.id {
		if l.progress != nil {
			l.progress, l.progressNew = nil, true
			l.publish()
		}
		return
	}
	changed := l.progress == nil
	count := 0
	l.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		count++
		if m, ok := l.progress[id]; !ok || m != pr.Match {
			changed = true
		}
	})
	if !changed && count == len(l.progress) {
		return
	}
	p := make(map[uint64]uint64, count)
	l.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		p[id] = pr.Match
	})
	l.progress, l.progressNew = p, true
	l.publish()
}

// publish makes the loop's view visible to other goroutines. It allocates
// only when something changed.
func (l *loop) publish() {
	// Caught up means: everything committed is applied, and the commit index
	// has reached an entry of the current term. A new leader's first entry
	// is of its term, so only then does this node know the whole log the
	// leader holds as committed; a commit index read from disk on restart,
	// or heard before the leader's first append, may lag behind it.
	if l.leader != l.caughtLeader || l.term != l.caughtTerm {
		l.caughtLeader, l.caughtTerm, l.caughtDone = l.leader, l.term, false
	}
	if !l.caughtDone && l.leader != 0 && l.applied >= l.commit {
		if t, err := l.storage.Term(l.commit); err == nil && t == l.term {
			l.caughtDone = true
		}
	}
	caught := l.leader != 0 && l.caughtDone
	l.pub.caught.Store(caught)
	if caught && !l.readyClosed {
		l.readyClosed = true
		close(l.pub.readyc)
	}

	if l.leader != l.id && l.progress != nil {
		l.progress, l.progressNew = nil, true
	}
	old := l.pub.status.Load()
	voters, learners := l.members.voters, l.members.learners
	if old != nil && old.Leader == l.leader && old.Term == l.term && old.Commit == l.commit &&
		old.Applied == l.applied && sameSlice(old.Voters, voters) && sameSlice(old.Learners, learners) &&
		!l.progressNew {
		return
	}
	l.progressNew = false
	l.pub.status.Store(&Status{ID: l.id, Leader: l.leader, Term: l.term, Commit: l.commit, Applied: l.applied,
		Voters: voters, Learners: learners, Progress: l.progress})
	if old != nil && old.Leader != l.leader {
		l.log.Info("leader changed", "leader", memberID(l.leader), "term", l.term)
		w := l.pub.watch.Swap(&leaderWatch{ch: make(chan struct{})})
		close(w.ch)
	}
}

// sameSlice reports whether a and b are the same slice (not just equal).
func sameSlice(a, b []uint64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
