package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// A node's data directory holds its raft log in three parts: the
// write-ahead log <dir>/wal with the entries and hard states (wal.go), the
// snapshot files <dir>/snap (snapstore.go), and raft.db, a bbolt file
// (raftdb.go) that points into both and keeps the member registries:
//
//	entries/       -> empty (format 1 kept the entries here: <index as 8
//	                  bytes big-endian> -> raftpb.Entry; moved at open)
//	meta/format    -> 8 bytes big-endian, storageFormat
//
// From format 3 on, every value of meta, members and removed is followed
// by its seal, a CRC-32C of the bucket, the key and the value (seal.go).
//
//	meta/hardstate -> raftpb.HardState as of the last snapshot that
//	                  replaced the log; the wal's records supersede it
//	meta/walstart  -> 8 bytes big-endian, the first wal segment to replay
//	                  (the one the log after that snapshot starts in)
//	meta/confstate -> raftpb.ConfState
//	meta/compacted -> 16 bytes: index, term of the last entry removed by
//	                  compaction or covered by a snapshot (the "dummy" entry)
//	meta/snapshot  -> raftpb.Snapshot without Data: the metadata of the
//	                  newest stored snapshot, whose data is in the file
//	                  snap/<term>-<index>.snap (snapstore.go)
//	meta/boot      -> 8 bytes big-endian, incremented at every Start
//	meta/removed   -> 8 bytes big-endian, index of this member's removal
//	meta/cluster   -> 8 bytes big-endian, the id of the cluster the log
//	                  belongs to (Config.ClusterID), written by the Start
//	                  that created the log; absent in logs written before
//	meta/origin    -> 1 byte, how that Start began the log: 'b' bootstrap
//	                  (Config.Peers) or 'j' join (Config.Join); absent in
//	                  logs written before
//	meta/naming    -> 1 byte, what the log records about naming its
//	                  cluster's history (HistoryNaming): 'n' this log began
//	                  a new history (a bootstrap, a forcing), 'e' it joined
//	                  a cluster whose history is named; absent in logs
//	                  written before history names, and in logs that
//	                  joined a cluster of such logs
//	meta/member    -> 8 bytes big-endian, the raft id of the member the log
//	                  belongs to (Config.ID), written by its first Start
//	                  (memberid.go)
//	meta/forced    -> the forcings of the log (ForceNewCluster), oldest
//	                  first, 32 bytes each: from and to cluster ids, the
//	                  index, the forcing member's id (forced.go)
//	meta/forcedaway -> 32 bytes, a forcing of the cluster this log
//	                  belongs to, as the forcing member told this member:
//	                  Start refuses the log (ForcedError)
//	members/<id as 8 bytes big-endian> -> the member's context (may be
//	                  empty), written with the conf state that adds it and
//	                  deleted with the one that removes it
//	removed/<id as 8 bytes big-endian> -> 8 bytes, the index of another
//	                  member's removal, from a conf change or a snapshot;
//	                  deleted if it is added again (only a log of an
//	                  earlier release re-adds a removed id)
const (
	storageFile = "raft.db"
	// storageFormat 3 seals raft.db's values (seal.go); format 2 did not,
	// and is sealed at open. Both keep the entries and hard states in the
	// write-ahead log (wal.go); format 1 kept them in raft.db and is
	// migrated at open.
	storageFormat = 3

	// defaultLockTimeout bounds the wait for the file lock, so a second
	// process opening the same directory gets ErrLocked instead of hanging.
	defaultLockTimeout = time.Second
)

// Storage is the durable raft log of one node, as raft.Storage, and the
// node's write path into it. It composes the write-ahead log (entries and
// hard states, one record and one fdatasync per Ready), raft.db (raftDB:
// metadata and member registries), the snapshot files (snapStore, which
// keeps the newest one's metadata in memory, its data on disk), and a cache of the most recent entries
// (entryCache). Opening it replays the log after the compaction point to
// index where each entry is; entries are read from the segment files when
// raft asks for them. Start opens it; the Node owns it.
//
// All methods are safe for concurrent use. Writes (save, saveConfChange,
// storeSnapshot, Compact) are expected from one goroutine, the node's.
type Storage struct {
	path   string // raft.db's, for messages
	walDir string // <dir>/wal
	db     *raftDB
	snaps  *snapStore
	fsync  prometheus.Observer // the wal's fdatasync latency
	// log reports what raft's calls cannot return (Snapshot); nil: not
	// reported. start sets it before the node runs.
	log *slog.Logger

	mu sync.RWMutex // guards every field below and snaps, and serialises writes
	// hardState is the latest HardState handed to save or setHardStateLazy;
	// hsDirty reports that it has not been written to the file yet.
	hardState *raftpb.HardState
	hsDirty   bool
	confState *raftpb.ConfState
	// compIndex and compTerm identify the entry just before the first one
	// kept in the log (zero for a log that was never compacted).
	compIndex, compTerm uint64
	// last is the index of the last entry (compIndex if there is none).
	last   uint64
	cache  entryCache
	closed bool
	// wal holds the entries after compIndex and the hard states.
	wal *wal
}

var _ raft.Storage = (*Storage)(nil)

// openStorage opens (creating if needed) the raft log in dir (raft.db,
// wal/ and snap/), observing into m (nil: unregistered metrics). If
// another process holds the file it fails after lockTimeout with an error
// wrapping ErrLocked.
func openStorage(dir string, lockTimeout time.Duration, m *Metrics) (*Storage, error) {
	if m == nil {
		m = NewMetrics(nil)
	}
	if dir == "" {
		return nil, errors.New("raftlog: storage directory is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("raftlog: create storage directory: %w", err)
	}
	db, err := openRaftDB(dir, lockTimeout)
	if err != nil {
		return nil, err
	}
	snaps, err := openSnapStore(filepath.Join(dir, snapDirName))
	if err != nil {
		_ = db.close()
		return nil, err
	}
	s := &Storage{path: db.path, walDir: filepath.Join(dir, walDirName), db: db, snaps: snaps, fsync: m.walFsync}
	if err := s.load(); err != nil {
		if s.wal != nil {
			_ = s.wal.close()
		}
		_ = db.close()
		return nil, err
	}
	// Leftovers of an interrupted write, and files raft.db never came to
	// reference, are garbage now. Failing to remove them costs only disk
	// space.
	_ = purgeSnapFiles(snaps.dir, snaps.index(), true)
	return s, nil
}

// load reads the metadata from raft.db and the newest snapshot (from its
// file, unless it is already in memory), migrates a format 1 log, and
// replays the write-ahead log after the compaction point.
func (s *Storage) load() error {
	if s.wal != nil {
		_ = s.wal.close()
		s.wal = nil
	}
	s.hardState, s.hsDirty = nil, false
	s.compIndex, s.compTerm = 0, 0
	st, err := s.db.read()
	if err != nil {
		return err
	}
	s.hardState, s.confState = st.hardState, st.confState
	s.compIndex, s.compTerm = st.compIndex, st.compTerm
	walStart := st.walStart
	if st.format == 1 {
		if err := s.migrate(st.legacy); err != nil {
			return err
		}
		walStart = 1
	}
	w, hs, err := openWAL(s.walDir, walStart, s.compIndex, s.hardState, s.fsync)
	if err != nil {
		return err
	}
	s.wal, s.hardState = w, hs
	s.last = w.last()
	return s.snaps.load(st.snapMeta, s.path)
}

// migrate moves the entries of a format 1 raft.db and its hard state to a
// new write-ahead log. A crash before raft.db records format 3 leaves
// format 1, and the migration starts over.
func (s *Storage) migrate(ents []*raftpb.Entry) error {
	if err := os.RemoveAll(s.walDir); err != nil {
		return fmt.Errorf("raftlog: migrate to a write-ahead log: %w", err)
	}
	w, _, err := openWAL(s.walDir, 1, s.compIndex, s.hardState, s.fsync)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		err = w.append(s.hardState, ents)
	}
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.db.finishMigration()
	}
	if err != nil {
		return fmt.Errorf("raftlog: migrate to a write-ahead log: %w", err)
	}
	return nil
}

// Close writes a pending commit index, if any, and closes the files.
// It is idempotent.
func (s *Storage) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	var err error
	if s.hsDirty {
		err = s.wal.append(s.hardState, nil)
	}
	s.closed = true
	if cerr := s.wal.close(); err == nil {
		err = cerr
	}
	if cerr := s.db.close(); err == nil {
		err = cerr
	}
	return err
}

// InitialState implements raft.Storage. It returns copies.
func (s *Storage) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var hs *raftpb.HardState
	if s.hardState != nil {
		hs = proto.Clone(s.hardState).(*raftpb.HardState)
	}
	cs := raftpb.EnsureConfState(proto.Clone(s.confState).(*raftpb.ConfState))
	return hs, cs, nil
}

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compIndex + 1, nil
}

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.last, nil
}

// Term implements raft.Storage. It returns raft.ErrCompacted for an index
// before FirstIndex()-1 and raft.ErrUnavailable for one after LastIndex()
// (the bare values: raft compares them with ==).
func (s *Storage) Term(i uint64) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case i < s.compIndex:
		return 0, raft.ErrCompacted
	case i == s.compIndex:
		return s.compTerm, nil
	case i > s.last:
		return 0, raft.ErrUnavailable
	}
	if t, ok := s.cache.term(i); ok {
		return t, nil
	}
	return s.wal.term(i), nil
}

// Entries implements raft.Storage: entries [lo, hi), at least one if any,
// and no more than maxSize encoded bytes beyond the first. The returned
// slice is freshly allocated and owned by the caller; the entries in it must
// not be modified.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if lo <= s.compIndex {
		return nil, raft.ErrCompacted
	}
	if hi > s.last+1 || lo > hi || s.last == s.compIndex {
		return nil, raft.ErrUnavailable
	}
	if lo == hi {
		return nil, nil
	}
	if out, ok := s.cache.entries(lo, hi, maxSize); ok {
		return out, nil
	}
	return s.wal.read(lo, hi, maxSize)
}

// Snapshot implements raft.Storage. It returns the newest stored snapshot
// (received from the leader, or taken by the node), or an empty one. The
// data is read back from the snapshot's file at each call (raft asks only
// when a follower needs a snapshot) and is the caller's, like the
// metadata. raft panics on any error but "temporarily unavailable", so a
// file that cannot be read is logged and answered with that (raft asks
// again later); readSnapshot returns the error itself.
func (s *Storage) Snapshot() (*raftpb.Snapshot, error) {
	snap, err := s.readSnapshot()
	if errors.Is(err, ErrBadSnapshotFile) {
		if s.log != nil {
			s.log.Error("cannot read the stored snapshot to send it; a follower that needs it waits", "err", err)
		}
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	return snap, err
}

// readSnapshot is Snapshot, with an error matching ErrBadSnapshotFile when
// the snapshot's file cannot be read back.
func (s *Storage) readSnapshot() (*raftpb.Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snaps.snapshot(s.path)
}

// awaitSnapshot makes Snapshot wait (answer "temporarily unavailable")
// until a snapshot at or past index is stored; zero stops waiting.
func (s *Storage) awaitSnapshot(index uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps.await(index)
}

// snapshotIndex returns the index of the newest stored snapshot, 0 if none.
func (s *Storage) snapshotIndex() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snaps.index()
}

// snapshotFile returns the file name of the newest stored snapshot.
func (s *Storage) snapshotFile() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snaps.path(s.snaps.newest)
}

// storeSnapshot durably stores the snapshot of md, which the node took of
// its own state at an applied index and whose data is the concatenation of
// pieces, as the newest snapshot: the file, then its metadata. The
// log is left alone (compacting it is a separate step), and so is the
// ConfState, which may have moved on since. A snapshot not newer than the
// stored one returns an error wrapping raft.ErrSnapOutOfDate. Old files
// beyond the newest two are removed.
func (s *Storage) storeSnapshot(md *raftpb.SnapshotMetadata, pieces ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	if cur := s.snaps.index(); md.GetIndex() <= cur {
		return fmt.Errorf("%w: snapshot at %d, newest stored at %d", raft.ErrSnapOutOfDate, md.GetIndex(), cur)
	}
	if md.GetIndex() > s.last {
		return fmt.Errorf("%w: snapshot at %d beyond last index %d", raft.ErrUnavailable, md.GetIndex(), s.last)
	}
	if err := s.snaps.write(md, pieces...); err != nil {
		return err
	}
	if err := s.db.storeSnapshotMeta(md); err != nil {
		return fmt.Errorf("raftlog: store snapshot at %d: %w", md.GetIndex(), err)
	}
	s.snaps.keep(md)
	return nil
}

// save durably writes everything of one Ready: the snapshot (if not empty)
// first, then the entries, discarding any stored entries at or after the
// first new index, and the hard state (if not empty), the last two in one
// wal record (one write, one fdatasync). It keeps references to ents; they
// must not be modified afterwards (raft never does).
//
// A snapshot's data goes to its own file (written and synced first), its
// metadata to raft.db, and it replaces the log and the newest stored
// snapshot; a non-nil members replaces the stored member contexts, and
// adds the removed members it carries, in the same transaction.
func (s *Storage) save(hs *raftpb.HardState, ents []*raftpb.Entry, snap *raftpb.Snapshot, members *snapMembers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	if !raft.IsEmptyHardState(hs) {
		s.hardState = proto.Clone(hs).(*raftpb.HardState)
		s.hsDirty = true
	}
	hasSnap := !raft.IsEmptySnap(snap)
	if !hasSnap && len(ents) == 0 && !s.hsDirty {
		return nil
	}
	// Validate before writing so a failed save leaves memory and file alike.
	if hasSnap && snap.GetMetadata().GetIndex() <= s.compIndex {
		return fmt.Errorf("%w: snapshot at %d, log compacted to %d", raft.ErrSnapOutOfDate, snap.GetMetadata().GetIndex(), s.compIndex)
	}
	if len(ents) > 0 {
		last := s.last
		if hasSnap {
			last = snap.GetMetadata().GetIndex()
		}
		if first := ents[0].GetIndex(); first > last+1 {
			return fmt.Errorf("raftlog: append at %d leaves a gap after last index %d", first, last)
		}
	}
	if hasSnap {
		if err := s.replaceBySnapshotLocked(snap, members); err != nil {
			return err
		}
	}
	// Entries at or before the compaction point are already covered.
	if len(ents) > 0 {
		if first := ents[0].GetIndex(); first <= s.compIndex {
			if s.compIndex-first+1 >= uint64(len(ents)) {
				ents = nil
			} else {
				ents = ents[s.compIndex-first+1:]
			}
		}
	}
	if len(ents) == 0 && !s.hsDirty {
		return nil
	}
	// One record, one fdatasync: the entries (replacing any stored at or
	// after the first of them) and the hard state.
	if err := s.wal.append(s.hardState, ents); err != nil {
		return s.reloadLocked(err)
	}
	s.hsDirty = false
	if len(ents) > 0 {
		s.last = s.wal.last()
		s.cache.append(ents)
	}
	return nil
}

// replaceBySnapshotLocked makes snap, received from the leader, the newest
// snapshot and replaces the log by what follows it: the file, then, in one
// raft.db transaction, its metadata and ConfState, the membership it
// carries (unless members is nil), the hard state as of it and the wal
// segment the log after it starts in.
func (s *Storage) replaceBySnapshotLocked(snap *raftpb.Snapshot, members *snapMembers) error {
	md := snap.GetMetadata()
	if err := s.snaps.write(md, snap.GetData()); err != nil {
		return err
	}
	cs := raftpb.EnsureConfState(proto.Clone(md.GetConfState()).(*raftpb.ConfState))
	// The commit index covers at least the snapshot. On disk (raft.db) it
	// must not cover entries that are not written yet: the record after
	// this transaction brings them and the full hard state.
	hs, dirty := s.hardState, s.hsDirty
	if hs.GetCommit() < md.GetIndex() {
		hs = &raftpb.HardState{}
		if s.hardState != nil {
			hs = proto.Clone(s.hardState).(*raftpb.HardState)
		}
		hs.Commit = new(md.GetIndex())
		dirty = true
	}
	onDisk := hs
	if hs.GetCommit() > md.GetIndex() {
		onDisk = proto.Clone(hs).(*raftpb.HardState)
		onDisk.Commit = new(md.GetIndex())
	}
	seq, err := s.wal.newSegment()
	if err == nil {
		err = s.db.replaceBySnapshot(md, cs, members, onDisk, seq)
	}
	if err != nil {
		return s.reloadLocked(err)
	}
	s.compIndex, s.compTerm = md.GetIndex(), md.GetTerm()
	s.last = s.compIndex
	s.confState = cs
	s.cache.reset()
	s.hardState, s.hsDirty = hs, dirty
	s.wal.reset(s.compIndex)
	s.snaps.keep(md)
	return nil
}

// reloadLocked makes the in-memory view match the files again after a
// failed write, and returns the write's error.
func (s *Storage) reloadLocked(err error) error {
	s.cache.reset()
	if lerr := s.load(); lerr != nil {
		// Nothing is known to be right: refuse further writes, read
		// nothing from the log.
		s.closed = true
		s.wal = &wal{first: s.compIndex + 1}
		s.last = s.compIndex
		_ = s.db.close()
		return errors.Join(err, lerr)
	}
	return fmt.Errorf("raftlog: save: %w", err)
}

// setHardStateLazy records a hard state that raft says need not be synced
// (only the commit index moved) without writing it: it is written with the
// next save or by Close. Losing it in a crash is allowed by raft; Start
// copes with a commit index behind the applied index.
func (s *Storage) setHardStateLazy(hs *raftpb.HardState) {
	if raft.IsEmptyHardState(hs) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hardState = proto.Clone(hs).(*raftpb.HardState)
	s.hsDirty = true
}

// raiseCommit sets the in-memory commit index to at least commit. Start uses
// it when the state machine durably applied entries whose commit index was
// not synced (see setHardStateLazy): they were committed, or they could not
// have been applied.
func (s *Storage) raiseCommit(commit uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hardState.GetCommit() >= commit {
		return
	}
	hs := &raftpb.HardState{}
	if s.hardState != nil {
		hs = proto.Clone(s.hardState).(*raftpb.HardState)
	}
	hs.Commit = new(commit)
	s.hardState, s.hsDirty = hs, true
}

// saveConfChange durably records cs, the configuration raft returned from
// ApplyConfChange, and the member change mc (none when mc.id is 0), so a
// restart restores the same voters and Members.
func (s *Storage) saveConfChange(cs *raftpb.ConfState, mc memberChange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	cs = proto.Clone(cs).(*raftpb.ConfState)
	if err := s.db.saveConfChange(cs, mc); err != nil {
		return err
	}
	s.confState = cs
	return nil
}

// markRemoved records that this member was removed from the cluster (it
// learned so from a peer, not from its own log): Start refuses its data
// directory from now on.
func (s *Storage) markRemoved(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	return s.db.markRemoved(index)
}

// Compact durably discards the entries before index; entry index is kept
// only as the term marker at FirstIndex()-1, so afterwards FirstIndex() is
// index+1. The caller must have applied index and must keep a snapshot at
// or after it for peers that fall behind (the node compacts only to
// SnapshotCatchUpEntries before its newest stored snapshot). Compacting at
// or before the current point returns raft.ErrCompacted.
func (s *Storage) Compact(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	if index <= s.compIndex {
		return raft.ErrCompacted
	}
	if index > s.last {
		return fmt.Errorf("%w: compact at %d beyond last index %d", raft.ErrUnavailable, index, s.last)
	}
	term, ok := s.cache.term(index)
	if !ok {
		term = s.wal.term(index)
	}
	if err := s.db.storeCompacted(index, term); err != nil {
		return fmt.Errorf("raftlog: compact at %d: %w", index, err)
	}
	s.wal.compact(index)
	s.compIndex, s.compTerm = index, term
	s.cache.compact(index)
	return nil
}
