package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// snapScheduler takes the node's snapshots: it decides when (every
// Config.SnapshotEntries applied entries, and, once snapshots are larger
// than sizedSnapshotBytes, not before the log applied since the last one
// holds as many bytes as it; or at once for a new member of a compacted
// log), has the Applier capture its state on the node's
// goroutine and encodes it on another, stores the result and compacts the
// log behind it. It also restores the snapshots the leader sends. It is
// owned by the node's goroutine, except c and wg, shared with the
// encoding goroutine.
type snapScheduler struct {
	sn         Snapshotter // the Applier's; nil: no snapshots
	storage    *Storage
	log        *slog.Logger
	every      uint64 // Config.SnapshotEntries
	catchUp    uint64 // Config.SnapshotCatchUpEntries
	onSnapshot func(SnapshotEvent)

	c      chan snapResult // capacity 1: at most one snapshot in flight
	wg     sync.WaitGroup  // the encoding goroutine; Stop waits for it
	busy   bool            // a snapshot is being encoded
	tried  uint64          // applied index of the last snapshot taken or tried
	wanted bool            // take one at the next chance, whatever every says

	// lastBytes is the size of the last snapshot stored or restored (0
	// until one is, this run), logBytes the entry data applied since the
	// last one was taken or tried.
	lastBytes, logBytes int

	// retryAt, when not zero, is when a snapshot that failed for want of
	// something that comes back by itself (file descriptors, space; see
	// transientSnapshotError) is tried again, though nothing was applied
	// since: without it, a member that recovered would wait for
	// SnapshotEntries more entries to store one, its log uncompacted and
	// its OnSnapshot callee (the member) reporting the failure all along.
	// retryDelay is the wait after the last such failure: it doubles up
	// to maxSnapshotRetryDelay, and a stored snapshot resets it.
	retryAt    time.Time
	retryDelay time.Duration
}

// The waits before a snapshot that failed for a transient reason is tried
// again.
const (
	firstSnapshotRetryDelay = time.Second
	maxSnapshotRetryDelay   = time.Minute
)

// transientSnapshotError reports whether a snapshot failed for want of a
// resource that comes back without an operator: file descriptors (a flood
// of connections) or space (freed). Other failures (a snapshot too large,
// a bug) would fail again the same way: they wait for the schedule.
func transientSnapshotError(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOSPC} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// sizedSnapshotBytes is the snapshot size from which the schedule also
// counts log bytes. Encoding a snapshot costs in proportion to its size:
// taken every SnapshotEntries entries whatever its size, a snapshot of a
// million tables (about 75 MB) would cost each member several times the
// DDLs themselves, a cost per change that grows with the table count.
// Waiting until the log since the last one is as large keeps it a
// constant share of the work per byte logged; smaller snapshots cost
// little and keep the plain count.
const sizedSnapshotBytes = 1 << 20

// snapResult is an encoded snapshot (or the failure to encode one), handed
// from the encoding goroutine back to the loop.
type snapResult struct {
	index, term uint64
	cs          *raftpb.ConfState
	header      []byte // the envelope's header (envelopeHeader); nil when err is set
	data        []byte // the Applier's data, which follows header; nil when err is set
	err         error  // the Applier's encode error
	start       time.Time
}

func newSnapScheduler(cfg *Config, sn Snapshotter, st *Storage, log *slog.Logger) *snapScheduler {
	return &snapScheduler{
		sn: sn, storage: st, log: log,
		every: cfg.SnapshotEntries, catchUp: cfg.SnapshotCatchUpEntries, onSnapshot: cfg.OnSnapshot,
		c:     make(chan snapResult, 1),
		tried: st.snapshotIndex(),
	}
}

// maybeStart starts a snapshot at applied when one is due (see due) or
// wanted now, and none is in flight. The Applier captures its state here, with sm the
// membership to put in the envelope (its member contexts not modified in
// place by the caller, its removed map immutable); encoding runs on a
// goroutine of its own, which sends the result to c.
func (s *snapScheduler) maybeStart(applied uint64, sm snapMembers) {
	if s.sn == nil || s.busy {
		return
	}
	if !s.wanted && !s.due(applied) && !s.retryDue(time.Now()) {
		return
	}
	index := applied
	if index <= s.storage.snapshotIndex() {
		s.wanted = false
		return // nothing new since the stored one
	}
	term, err := s.storage.Term(index)
	if err != nil {
		s.log.Error("snapshot: term of the applied index", "index", index, "err", err)
		return
	}
	_, cs, _ := s.storage.InitialState()  // the ConfState as of index: applied conf changes are stored at once
	sm.contexts = maps.Clone(sm.contexts) // an immutable view: contexts are replaced, never modified
	start := time.Now()
	encode := s.sn.Capture(index)
	s.busy, s.tried, s.wanted, s.logBytes, s.retryAt = true, index, false, 0, time.Time{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		r := snapResult{index: index, term: term, cs: cs, start: start}
		data, err := encode()
		if err != nil {
			r.err = err
		} else {
			r.header, r.data = envelopeHeader(sm), data
		}
		s.c <- r // never blocks: capacity 1, one snapshot in flight
	}()
}

// due reports whether the schedule calls for a snapshot at applied.
func (s *snapScheduler) due(applied uint64) bool {
	if applied-s.tried < s.every {
		return false
	}
	return s.lastBytes < sizedSnapshotBytes || s.logBytes >= s.lastBytes
}

// retryDue reports whether a snapshot that failed for a transient reason
// is to be tried again at now.
func (s *snapScheduler) retryDue(now time.Time) bool {
	return !s.retryAt.IsZero() && !now.Before(s.retryAt)
}

// appliedBytes counts n bytes of entry data applied, for the schedule.
func (s *snapScheduler) appliedBytes(n int) { s.logBytes += n }

// finish stores an encoded snapshot and compacts the log behind it, then
// reports the attempt. Nothing is compacted when encoding or storing
// failed: the log keeps everything since the last good snapshot. The
// caller calls maybeStart after it.
func (s *snapScheduler) finish(r snapResult) {
	s.busy = false
	var err error
	switch {
	case r.err != nil:
		err = fmt.Errorf("raftlog: encode snapshot at index %d: %w", r.index, r.err)
	case r.index <= s.storage.snapshotIndex():
		// A snapshot from the leader was installed meanwhile; it covers
		// this one, and the log was replaced.
		s.log.Info("snapshot overtaken by a newer one; dropped", "index", r.index, "stored_index", s.storage.snapshotIndex())
		return
	default:
		md := &raftpb.SnapshotMetadata{Index: new(r.index), Term: new(r.term), ConfState: r.cs}
		if err = s.storage.storeSnapshot(md, r.header, r.data); err == nil {
			s.lastBytes = len(r.header) + s.work(r.data)
			err = s.compactBehind(r.index)
		}
	}
	size := len(r.header) + len(r.data)
	ev := SnapshotEvent{Index: r.index, Size: size, Duration: time.Since(r.start), Err: err}
	s.scheduleRetry(err, r.index)
	if err != nil {
		// Whoever waited for a newer snapshot gets the stored one, as
		// before: better than none.
		s.storage.awaitSnapshot(0)
		if s.onSnapshot == nil {
			// Otherwise OnSnapshot's callee logs it, with what to do.
			s.log.Error("snapshot failed", "index", r.index, "err", err)
		}
	} else {
		first, _ := s.storage.FirstIndex()
		s.log.Info("snapshot stored", "index", r.index, "term", r.term, "bytes", size,
			"first_index", first, "duration", ev.Duration)
	}
	if s.onSnapshot != nil {
		s.onSnapshot(ev)
	}
}

// scheduleRetry sets when a snapshot that ended with err is tried again:
// after a transient failure, retryDelay later (doubled each time, up to
// maxSnapshotRetryDelay); after a success or another failure, when the
// schedule says.
func (s *snapScheduler) scheduleRetry(err error, index uint64) {
	if err == nil || !transientSnapshotError(err) {
		s.retryAt, s.retryDelay = time.Time{}, 0
		return
	}
	s.retryDelay = min(max(2*s.retryDelay, firstSnapshotRetryDelay), maxSnapshotRetryDelay)
	s.retryAt = time.Now().Add(s.retryDelay)
	s.log.Info("the snapshot failed for want of file descriptors or space; it is tried again", "index", index, "retry_in", s.retryDelay)
}

// compactBehind compacts the log to catchUp entries before the stored
// snapshot at index: never past it, and never below FirstIndex.
func (s *snapScheduler) compactBehind(index uint64) error {
	if index <= s.catchUp {
		return nil
	}
	to := index - s.catchUp
	if first, _ := s.storage.FirstIndex(); to < first {
		return nil
	}
	if err := s.storage.Compact(to); err != nil {
		return fmt.Errorf("raftlog: compact the log to %d behind the snapshot at %d: %w", to, index, err)
	}
	return nil
}

// wantFor asks for a snapshot at once, for a member added at index: a new
// member of a compacted log catches up by a snapshot, and raft on it
// ignores one whose ConfState does not list it. Until it is stored, the
// stored one is not offered (a transfer for nothing).
func (s *snapScheduler) wantFor(index uint64) {
	if s.sn == nil {
		return
	}
	if first, _ := s.storage.FirstIndex(); first > 1 {
		s.wanted = true
		s.storage.awaitSnapshot(index)
	}
}

// restore hands the data of a snapshot received from the leader (already
// persisted, log replaced) to the Applier.
func (s *snapScheduler) restore(md *raftpb.SnapshotMetadata, data []byte) error {
	if err := s.sn.Restore(md.GetIndex(), data); err != nil {
		return fmt.Errorf("raftlog: restore snapshot at index %d (term %d): %w", md.GetIndex(), md.GetTerm(), err)
	}
	if md.GetIndex() > s.tried {
		s.tried, s.logBytes = md.GetIndex(), 0
	}
	s.lastBytes = s.work(data)
	return nil
}

// work is the size that the Applier's snapshot data stands for in the
// schedule (SnapshotSizer), its length unless the Applier says otherwise.
func (s *snapScheduler) work(data []byte) int {
	if w, ok := s.sn.(SnapshotSizer); ok {
		return w.SnapshotWork(data)
	}
	return len(data)
}

// wait waits for the encoding goroutine, if any.
func (s *snapScheduler) wait() { s.wg.Wait() }

// installSnapshot, on the loop, hands a snapshot received from the leader
// (already persisted, log replaced) to the Applier and takes over the
// membership it carries.
func (l *loop) installSnapshot(snap *raftpb.Snapshot, sm *snapMembers, data []byte) error {
	md := snap.GetMetadata()
	index := md.GetIndex()
	start := time.Now()
	if err := l.snaps.restore(md, data); err != nil {
		return err
	}
	l.members.restore(md.GetConfState(), sm)
	l.applied = index
	l.commit = max(l.commit, index)
	ms := l.members.publish()
	l.publish()
	l.log.Info("installed snapshot from the leader", "index", index, "term", md.GetTerm(), "bytes", len(snap.GetData()),
		"voters", l.members.voters, "learners", l.members.learners, "duration", time.Since(start))
	if l.cfg.OnMembersRestored != nil {
		l.cfg.OnMembersRestored(clonePeers(ms))
	}
	return nil
}

// restoreAtStart hands the stored snapshot to the Applier: Start calls it
// when the log no longer holds the entries right after Config.Applied.
func restoreAtStart(cfg Config, st *Storage, sn Snapshotter) error {
	snap, err := st.readSnapshot()
	if err != nil {
		return err
	}
	md := snap.GetMetadata()
	file := st.snapshotFile()
	_, data, err := decodeEnvelope(snap.GetData())
	if err != nil {
		return fmt.Errorf("raftlog: snapshot file %s: %w", file, err)
	}
	if err := sn.Restore(md.GetIndex(), data); err != nil {
		return fmt.Errorf("raftlog: restore snapshot at index %d from %s: %w", md.GetIndex(), file, err)
	}
	cfg.Logger.Info("restored the state machine from the stored snapshot", "raft_id", memberID(cfg.ID),
		"index", md.GetIndex(), "term", md.GetTerm(), "bytes", len(snap.GetData()), "applied_before", cfg.Applied)
	return nil
}
