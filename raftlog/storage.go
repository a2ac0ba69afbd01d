package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// File and bucket layout of raft.db. The entries and the hard states are in
// the write-ahead log <dir>/wal (wal.go), which raft.db points into.
//
//	entries/       -> empty (format 1 kept the entries here: <index as 8
//	                  bytes big-endian> -> raftpb.Entry; moved at open)
//	meta/format    -> 8 bytes big-endian, storageFormat
//	meta/hardstate -> raftpb.HardState as of the last snapshot that
//	                  replaced the log; the wal's records supersede it
//	meta/walstart  -> 8 bytes big-endian, the first wal segment to replay
//	                  (the one the log after that snapshot starts in)
//	meta/confstate -> raftpb.ConfState
//	meta/compacted -> 16 bytes: index, term of the last entry removed by
//	                  compaction or covered by a snapshot (the "dummy" entry)
//	meta/snapshot  -> raftpb.Snapshot without Data: the metadata of the
//	                  newest stored snapshot, whose data is in the file
//	                  snap/<term>-<index>.snap (snapfile.go)
//	meta/boot      -> 8 bytes big-endian, incremented at every Start
//	meta/removed   -> 8 bytes big-endian, index of this member's removal
//	members/<id as 8 bytes big-endian> -> the member's context (may be
//	                  empty), written with the conf state that adds it and
//	                  deleted with the one that removes it
//	removed/<id as 8 bytes big-endian> -> 8 bytes, the index of another
//	                  member's removal; deleted if it is added again
const (
	storageFile = "raft.db"
	// storageFormat 2 keeps the entries and hard states in the write-ahead
	// log (wal.go); format 1 kept them in raft.db and is migrated at open.
	storageFormat = 2

	// defaultLockTimeout bounds the wait for the file lock, so a second
	// process opening the same directory gets ErrLocked instead of hanging.
	defaultLockTimeout = time.Second

	// The tail cache keeps the most recent entries in memory: followers and
	// the apply path read entries right after they are written, and serving
	// them from memory saves a read transaction and a decode per entry.
	tailCacheEntries = 512
	tailCacheBytes   = 4 << 20
)

var (
	bucketEntries = []byte("entries")
	bucketMeta    = []byte("meta")
	bucketMembers = []byte("members")
	bucketRemoved = []byte("removed")

	keyFormat    = []byte("format")
	keyHardState = []byte("hardstate")
	keyConfState = []byte("confstate")
	keyCompacted = []byte("compacted")
	keySnapshot  = []byte("snapshot")
	keyBoot      = []byte("boot")
	keyRemoved   = []byte("removed")
	keyWALStart  = []byte("walstart")
)

// Storage is the durable raft log of one node: entries and hard states
// appended to a write-ahead log in <dir>/wal (one fdatasync per Save), the
// rest in a bbolt file <dir>/raft.db. Opening it replays the log after the
// compaction point to index where each entry is; entries are read from the
// segment files when raft asks for them. A small cache keeps the most
// recent entries in memory.
//
// All methods are safe for concurrent use. Writes (Save, SetConfState,
// ApplySnapshot, Compact) are expected from one goroutine, the node's.
type Storage struct {
	db      *bolt.DB
	path    string
	snapDir string // <dir>/snap
	walDir  string // <dir>/wal

	mu sync.RWMutex // guards every field below and serialises writes
	// hardState is the latest HardState handed to Save or setHardStateLazy;
	// hsDirty reports that it has not been written to the file yet.
	hardState *raftpb.HardState
	hsDirty   bool
	confState *raftpb.ConfState
	// compIndex and compTerm identify the entry just before the first one
	// kept in the file (zero for a log that was never compacted).
	compIndex, compTerm uint64
	// last is the index of the last entry (compIndex if there is none).
	last uint64
	// tail holds entries [tailFirst, last] when non-empty. Its entries are
	// immutable; its backing array is never handed out.
	tail      []*raftpb.Entry
	tailFirst uint64
	tailBytes int
	closed    bool
	// snap is the newest stored snapshot with its data, nil if none. It is
	// immutable: Snapshot hands out its Data without copying.
	snap *raftpb.Snapshot
	// awaitIndex, when non-zero, is the index of a membership change that
	// snap predates: a new member would ignore snap, so Snapshot answers
	// "temporarily unavailable" until one at or past it is stored.
	awaitIndex uint64

	// wal holds the entries after compIndex and the hard states.
	wal *wal
}

var _ raft.Storage = (*Storage)(nil)

// OpenStorage opens (creating if needed) the raft log in dir (raft.db and
// wal/). If
// another process holds the file it fails within about a second with an
// error wrapping ErrLocked.
func OpenStorage(dir string) (*Storage, error) {
	return openStorage(dir, defaultLockTimeout)
}

func openStorage(dir string, lockTimeout time.Duration) (*Storage, error) {
	if dir == "" {
		return nil, errors.New("raftlog: storage directory is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("raftlog: create storage directory: %w", err)
	}
	path := filepath.Join(dir, storageFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: lockTimeout,
		// The freelist is rebuilt from the file on open instead of being
		// written at every commit: smaller commits on the hot path.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	s := &Storage{db: db, path: path, snapDir: filepath.Join(dir, snapDirName), walDir: filepath.Join(dir, walDirName)}
	if err := os.MkdirAll(s.snapDir, 0o700); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("raftlog: create snapshot directory: %w", err)
	}
	if err := s.load(); err != nil {
		if s.wal != nil {
			_ = s.wal.close()
		}
		_ = db.Close()
		return nil, err
	}
	// Leftovers of an interrupted write or receive, and files raft.db
	// never came to reference, are garbage now. Failing to remove them
	// costs only disk space.
	_ = purgeSnapFiles(s.snapDir, s.snap.GetMetadata().GetIndex(), true)
	return s, nil
}

// load reads the metadata and the newest snapshot (from its file, unless it
// is already cached) from raft.db, and replays the write-ahead log after the
// compaction point.
func (s *Storage) load() error {
	if s.wal != nil {
		_ = s.wal.close()
		s.wal = nil
	}
	s.hardState, s.hsDirty = nil, false
	s.compIndex, s.compTerm = 0, 0
	var snapMeta *raftpb.SnapshotMetadata
	var format, walStart uint64
	var legacy []*raftpb.Entry
	err := s.db.Update(func(tx *bolt.Tx) error {
		ents, err := tx.CreateBucketIfNotExists(bucketEntries)
		if err != nil {
			return fmt.Errorf("raftlog: %s: %w", s.path, err)
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return fmt.Errorf("raftlog: %s: %w", s.path, err)
		}
		if _, err := tx.CreateBucketIfNotExists(bucketMembers); err != nil {
			return fmt.Errorf("raftlog: %s: %w", s.path, err)
		}
		if _, err := tx.CreateBucketIfNotExists(bucketRemoved); err != nil {
			return fmt.Errorf("raftlog: %s: %w", s.path, err)
		}
		if v := meta.Get(keyFormat); v == nil {
			format = storageFormat
			if err := meta.Put(keyFormat, u64(storageFormat)); err != nil {
				return err
			}
		} else if format = binary.BigEndian.Uint64(v); format != storageFormat && format != 1 {
			return fmt.Errorf("raftlog: %s has storage format %d, this binary reads format %d", s.path, format, storageFormat)
		}
		if v := meta.Get(keyHardState); v != nil {
			hs := &raftpb.HardState{}
			if err := proto.Unmarshal(v, hs); err != nil {
				return fmt.Errorf("raftlog: %s: decode hard state: %w", s.path, err)
			}
			s.hardState = hs
		}
		s.confState = &raftpb.ConfState{}
		if v := meta.Get(keyConfState); v != nil {
			if err := proto.Unmarshal(v, s.confState); err != nil {
				return fmt.Errorf("raftlog: %s: decode conf state: %w", s.path, err)
			}
		}
		if v := meta.Get(keyCompacted); v != nil {
			if len(v) != 16 {
				return fmt.Errorf("raftlog: %s: compaction marker has %d bytes, want 16", s.path, len(v))
			}
			s.compIndex = binary.BigEndian.Uint64(v)
			s.compTerm = binary.BigEndian.Uint64(v[8:])
		}
		if v := meta.Get(keySnapshot); v != nil {
			snap := &raftpb.Snapshot{}
			if err := proto.Unmarshal(v, snap); err != nil {
				return fmt.Errorf("raftlog: %s: decode snapshot metadata: %w", s.path, err)
			}
			if snap.GetMetadata().GetIndex() > 0 {
				snapMeta = snap.GetMetadata()
			}
		}
		if v := meta.Get(keyWALStart); len(v) == 8 {
			walStart = binary.BigEndian.Uint64(v)
		}
		if format == 1 {
			// Entries kept in raft.db by format 1: they move to the log.
			want := s.compIndex + 1
			return ents.ForEach(func(k, v []byte) error {
				if i := binary.BigEndian.Uint64(k); i <= s.compIndex {
					return nil
				} else if i != want {
					return fmt.Errorf("raftlog: %s: entry %d missing (found %d)", s.path, want, i)
				}
				e := &raftpb.Entry{}
				if err := proto.Unmarshal(v, e); err != nil {
					return fmt.Errorf("raftlog: %s: decode entry %d: %w", s.path, want, err)
				}
				legacy = append(legacy, e)
				want++
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if format == 1 {
		if err := s.migrate(legacy); err != nil {
			return err
		}
		walStart = 1
	}
	w, hs, err := openWAL(s.walDir, walStart, s.compIndex, s.hardState)
	if err != nil {
		return err
	}
	s.wal, s.hardState = w, hs
	s.last = w.last()
	return s.loadSnapshot(snapMeta)
}

// migrate moves the entries of a format 1 raft.db and its hard state to a
// new write-ahead log. A crash before raft.db records format 2 leaves
// format 1, and the migration starts over.
func (s *Storage) migrate(ents []*raftpb.Entry) error {
	if err := os.RemoveAll(s.walDir); err != nil {
		return fmt.Errorf("raftlog: migrate to a write-ahead log: %w", err)
	}
	w, _, err := openWAL(s.walDir, 1, s.compIndex, s.hardState)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		err = w.append(s.hardState, ents)
	}
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("raftlog: migrate to a write-ahead log: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketEntries); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketEntries); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keyWALStart, u64(1)); err != nil {
			return err
		}
		return meta.Put(keyFormat, u64(storageFormat))
	})
	if err != nil {
		return fmt.Errorf("raftlog: migrate to a write-ahead log: %w", err)
	}
	return nil
}

// loadSnapshot makes the snapshot of md (nil for none) the cached one,
// reading its file unless the cache already holds it.
func (s *Storage) loadSnapshot(md *raftpb.SnapshotMetadata) error {
	if md == nil {
		s.snap = nil
		return nil
	}
	if old := s.snap.GetMetadata(); old.GetIndex() == md.GetIndex() && old.GetTerm() == md.GetTerm() {
		return nil
	}
	path := filepath.Join(s.snapDir, snapFileName(md.GetTerm(), md.GetIndex()))
	data, err := readSnapFile(path)
	if err != nil {
		return fmt.Errorf("raftlog: snapshot file %s (index %d, term %d, named by %s): %w", path, md.GetIndex(), md.GetTerm(), s.path, err)
	}
	s.snap = &raftpb.Snapshot{Data: data, Metadata: md}
	return nil
}

// Close writes a pending commit index, if any, and closes the file.
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
	if cerr := s.db.Close(); err == nil {
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
	case len(s.tail) > 0 && i >= s.tailFirst:
		return s.tail[i-s.tailFirst].GetTerm(), nil
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
	if len(s.tail) > 0 && lo >= s.tailFirst {
		src := s.tail[lo-s.tailFirst : hi-s.tailFirst]
		n, size := 1, uint64(proto.Size(src[0]))
		for ; n < len(src); n++ {
			size += uint64(proto.Size(src[n]))
			if size > maxSize {
				break
			}
		}
		out := make([]*raftpb.Entry, n)
		copy(out, src)
		return out, nil
	}
	return s.wal.read(lo, hi, maxSize)
}

// Snapshot implements raft.Storage. It returns the newest stored snapshot
// (given to ApplySnapshot or Save, or taken by the node), or an empty one.
// The data is kept in memory while the snapshot is the newest and is shared,
// not copied: it must not be modified. The metadata is the caller's.
func (s *Storage) Snapshot() (*raftpb.Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.awaitIndex > s.snap.GetMetadata().GetIndex() {
		// raft asks again at its next contact with the peer.
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	if s.snap == nil {
		return raftpb.EnsureSnapshot(&raftpb.Snapshot{}), nil
	}
	return &raftpb.Snapshot{
		Data:     s.snap.GetData(),
		Metadata: proto.Clone(s.snap.GetMetadata()).(*raftpb.SnapshotMetadata),
	}, nil
}

// awaitSnapshot makes Snapshot wait (answer "temporarily unavailable")
// until a snapshot at or past index is stored; zero stops waiting.
func (s *Storage) awaitSnapshot(index uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.awaitIndex = index
}

// snapshotIndex returns the index of the newest stored snapshot, 0 if none.
func (s *Storage) snapshotIndex() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snap.GetMetadata().GetIndex()
}

// storeSnapshot durably stores snap, which the node took of its own state at
// an applied index, as the newest snapshot: the file, then its metadata. The
// log is left alone (compacting it is a separate step), and so is the
// ConfState, which may have moved on since. A snapshot not newer than the
// stored one returns an error wrapping raft.ErrSnapOutOfDate. Old files
// beyond the newest two are removed.
func (s *Storage) storeSnapshot(snap *raftpb.Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	md := snap.GetMetadata()
	if cur := s.snap.GetMetadata().GetIndex(); md.GetIndex() <= cur {
		return fmt.Errorf("%w: snapshot at %d, newest stored at %d", raft.ErrSnapOutOfDate, md.GetIndex(), cur)
	}
	if md.GetIndex() > s.last {
		return fmt.Errorf("%w: snapshot at %d beyond last index %d", raft.ErrUnavailable, md.GetIndex(), s.last)
	}
	if _, err := writeSnapFile(s.snapDir, md.GetTerm(), md.GetIndex(), snap.GetData()); err != nil {
		return err
	}
	md = proto.Clone(md).(*raftpb.SnapshotMetadata)
	err := s.db.Update(func(tx *bolt.Tx) error {
		return putSnapshotMeta(tx, md)
	})
	if err != nil {
		return fmt.Errorf("raftlog: store snapshot at %d: %w", md.GetIndex(), err)
	}
	s.snap = &raftpb.Snapshot{Data: snap.GetData(), Metadata: md}
	// A file left behind costs disk space only; the next store retries.
	_ = purgeSnapFiles(s.snapDir, md.GetIndex(), false)
	return nil
}

// Save durably writes everything of one Ready: the snapshot (if not empty)
// first, then the entries, discarding any stored entries at or after the
// first new index, and the hard state (if not empty), the last two in one
// wal record (one write, one fdatasync). Save keeps references to ents; they must not be modified
// afterwards (raft never does).
//
// A snapshot's data goes to its own file (written and synced first), its
// metadata to raft.db, and it replaces the newest stored snapshot.
func (s *Storage) Save(hs *raftpb.HardState, ents []*raftpb.Entry, snap *raftpb.Snapshot) error {
	return s.save(hs, ents, snap, nil)
}

// save is Save that, with a snapshot and a non-nil members, also replaces
// the stored member contexts by members in the same transaction.
func (s *Storage) save(hs *raftpb.HardState, ents []*raftpb.Entry, snap *raftpb.Snapshot, members map[uint64][]byte) error {
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
	// Validate before writing so a failed Save leaves memory and file alike.
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
		md := snap.GetMetadata()
		if _, err := writeSnapFile(s.snapDir, md.GetTerm(), md.GetIndex(), snap.GetData()); err != nil {
			return err
		}
		// The log after the snapshot starts in a new segment, which
		// raft.db names in the transaction that records the snapshot
		// and the hard state as of it.
		seq, err := s.wal.newSegment()
		if err == nil {
			err = s.db.Update(func(tx *bolt.Tx) error {
				if err := s.putSnapshotLocked(tx, snap); err != nil {
					return err
				}
				if members != nil {
					if err := putMembers(tx, members); err != nil {
						return err
					}
				}
				if s.hardState != nil {
					// Its commit index must not cover entries that
					// are not on disk yet: the record after this
					// transaction brings them and the full hard state.
					hs := s.hardState
					if hs.GetCommit() > s.compIndex {
						hs = proto.Clone(hs).(*raftpb.HardState)
						hs.Commit = new(s.compIndex)
					}
					v, err := proto.Marshal(hs)
					if err != nil {
						return err
					}
					if err := tx.Bucket(bucketMeta).Put(keyHardState, v); err != nil {
						return err
					}
				}
				return tx.Bucket(bucketMeta).Put(keyWALStart, u64(seq))
			})
		}
		if err != nil {
			return s.reloadLocked(err)
		}
		s.wal.reset(s.compIndex)
		s.snap = &raftpb.Snapshot{
			Data:     snap.GetData(),
			Metadata: proto.Clone(snap.GetMetadata()).(*raftpb.SnapshotMetadata),
		}
		_ = purgeSnapFiles(s.snapDir, snap.GetMetadata().GetIndex(), false)
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
		s.cacheAppendLocked(ents)
	}
	return nil
}

// reloadLocked makes the in-memory view match the files again after a
// failed write, and returns the write's error.
func (s *Storage) reloadLocked(err error) error {
	s.resetCacheLocked()
	if lerr := s.load(); lerr != nil {
		// Nothing is known to be right: refuse further writes, read
		// nothing from the log.
		s.closed = true
		s.wal = &wal{first: s.compIndex + 1}
		s.last = s.compIndex
		_ = s.db.Close()
		return errors.Join(err, lerr)
	}
	return fmt.Errorf("raftlog: save: %w", err)
}

// setHardStateLazy records a hard state that raft says need not be synced
// (only the commit index moved) without writing it: it is written with the
// next Save or by Close. Losing it in a crash is allowed by raft; Start
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

func (s *Storage) cacheAppendLocked(ents []*raftpb.Entry) {
	first := ents[0].GetIndex()
	if len(s.tail) > 0 && first >= s.tailFirst && first <= s.tailFirst+uint64(len(s.tail)) {
		cut := int(first - s.tailFirst)
		for _, e := range s.tail[cut:] {
			s.tailBytes -= len(e.GetData())
		}
		clear(s.tail[cut:])
		s.tail = s.tail[:cut]
	} else {
		clear(s.tail)
		s.tail = s.tail[:0]
		s.tailFirst = first
		s.tailBytes = 0
	}
	for _, e := range ents {
		s.tailBytes += len(e.GetData())
	}
	s.tail = append(s.tail, ents...)
	drop := 0
	for len(s.tail)-drop > tailCacheEntries || (s.tailBytes > tailCacheBytes && len(s.tail)-drop > 1) {
		s.tailBytes -= len(s.tail[drop].GetData())
		drop++
	}
	if drop > 0 {
		n := copy(s.tail, s.tail[drop:])
		clear(s.tail[n:])
		s.tail = s.tail[:n]
		s.tailFirst += uint64(drop)
	}
}

func (s *Storage) resetCacheLocked() {
	clear(s.tail)
	s.tail = s.tail[:0]
	s.tailFirst = 0
	s.tailBytes = 0
}

// SetConfState durably records the configuration raft returned from
// ApplyConfChange, so a restart restores the same voters.
func (s *Storage) SetConfState(cs *raftpb.ConfState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	cs = proto.Clone(cs).(*raftpb.ConfState)
	v, err := proto.Marshal(cs)
	if err != nil {
		return fmt.Errorf("raftlog: encode conf state: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyConfState, v)
	})
	if err != nil {
		return fmt.Errorf("raftlog: save conf state: %w", err)
	}
	s.confState = cs
	return nil
}

// memberChange is the membership bookkeeping of one applied configuration
// change, written together with the resulting ConfState.
type memberChange struct {
	id      uint64
	context []byte // stored for an addition
	remove  bool
	self    bool // the removal is of this node: record it in meta/removed
	index   uint64
}

// saveConfChange durably records cs and the member change mc in one
// transaction, so Members after a restart matches the ConfState.
func (s *Storage) saveConfChange(cs *raftpb.ConfState, mc memberChange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	cs = proto.Clone(cs).(*raftpb.ConfState)
	v, err := proto.Marshal(cs)
	if err != nil {
		return fmt.Errorf("raftlog: encode conf state: %w", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keyConfState, v); err != nil {
			return err
		}
		if mc.id == 0 {
			return nil
		}
		members, removed := tx.Bucket(bucketMembers), tx.Bucket(bucketRemoved)
		if mc.remove {
			if mc.self {
				if err := meta.Put(keyRemoved, u64(mc.index)); err != nil {
					return err
				}
			} else if err := removed.Put(u64(mc.id), u64(mc.index)); err != nil {
				return err
			}
			return members.Delete(u64(mc.id))
		}
		if err := removed.Delete(u64(mc.id)); err != nil {
			return err
		}
		return members.Put(u64(mc.id), append([]byte{}, mc.context...))
	})
	if err != nil {
		return fmt.Errorf("raftlog: save conf change: %w", err)
	}
	s.confState = cs
	return nil
}

// members returns the stored member contexts by id; the slices are the
// caller's.
func (s *Storage) members() (map[uint64][]byte, error) {
	return readByID(s, bucketMembers, "members", func(v []byte) ([]byte, bool) {
		return append([]byte{}, v...), true
	})
}

// removedMembers returns the other members whose removal this node
// applied (and that were not added again since), by id, with the index of
// their removal.
func (s *Storage) removedMembers() (map[uint64]uint64, error) {
	return readByID(s, bucketRemoved, "removed members", func(v []byte) (uint64, bool) {
		if len(v) != 8 {
			return 0, false
		}
		return binary.BigEndian.Uint64(v), true
	})
}

// readByID reads a bucket keyed by 8-byte member ids, decoding each value
// with decode (false: malformed).
func readByID[V any](s *Storage, bucket []byte, what string, decode func([]byte) (V, bool)) (map[uint64]V, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[uint64]V)
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			val, ok := decode(v)
			if len(k) != 8 || !ok {
				return fmt.Errorf("raftlog: %s: malformed %s record (%d-byte key, %d-byte value)", s.path, what, len(k), len(v))
			}
			out[binary.BigEndian.Uint64(k)] = val
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("raftlog: read %s: %w", what, err)
	}
	return out, nil
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
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyRemoved, u64(max(index, 1)))
	})
}

// removedAt returns the index at which this member's removal was applied,
// or 0.
func (s *Storage) removedAt() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var at uint64
	_ = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyRemoved); len(v) == 8 {
			at = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return at
}

// ApplySnapshot durably replaces the log with snap: every stored entry is
// discarded, FirstIndex becomes the snapshot's index + 1 and the ConfState
// the snapshot's. It returns an error wrapping raft.ErrSnapOutOfDate for a
// snapshot older than the compaction point.
func (s *Storage) ApplySnapshot(snap *raftpb.Snapshot) error {
	if raft.IsEmptySnap(snap) {
		return errors.New("raftlog: apply snapshot: snapshot is empty")
	}
	return s.Save(nil, nil, snap)
}

// putSnapshotMeta records md as the newest snapshot's metadata.
func putSnapshotMeta(tx *bolt.Tx, md *raftpb.SnapshotMetadata) error {
	v, err := proto.Marshal(&raftpb.Snapshot{Metadata: md})
	if err != nil {
		return fmt.Errorf("encode snapshot metadata: %w", err)
	}
	return tx.Bucket(bucketMeta).Put(keySnapshot, v)
}

// putMembers replaces every stored member context by members; a member
// among them is no longer recorded as removed.
func putMembers(tx *bolt.Tx, members map[uint64][]byte) error {
	if err := tx.DeleteBucket(bucketMembers); err != nil {
		return err
	}
	b, err := tx.CreateBucket(bucketMembers)
	if err != nil {
		return err
	}
	removed := tx.Bucket(bucketRemoved)
	for id, ctx := range members {
		if err := b.Put(u64(id), append([]byte{}, ctx...)); err != nil {
			return err
		}
		if err := removed.Delete(u64(id)); err != nil {
			return err
		}
	}
	return nil
}

// putSnapshotLocked records a snapshot received from the leader: its
// metadata, and a log that starts right after it with its ConfState.
func (s *Storage) putSnapshotLocked(tx *bolt.Tx, snap *raftpb.Snapshot) error {
	md := snap.GetMetadata()
	if err := putSnapshotMeta(tx, md); err != nil {
		return err
	}
	meta := tx.Bucket(bucketMeta)
	cs := raftpb.EnsureConfState(proto.Clone(md.GetConfState()).(*raftpb.ConfState))
	cv, err := proto.Marshal(cs)
	if err != nil {
		return fmt.Errorf("encode conf state: %w", err)
	}
	if err := meta.Put(keyConfState, cv); err != nil {
		return err
	}
	// The caller starts the log after it in a new wal segment.
	if err := meta.Put(keyCompacted, u128(md.GetIndex(), md.GetTerm())); err != nil {
		return err
	}
	s.compIndex, s.compTerm = md.GetIndex(), md.GetTerm()
	s.last = s.compIndex
	s.confState = cs
	s.resetCacheLocked()
	if s.hardState.GetCommit() < s.compIndex {
		hs := &raftpb.HardState{}
		if s.hardState != nil {
			hs = proto.Clone(s.hardState).(*raftpb.HardState)
		}
		hs.Commit = new(s.compIndex)
		s.hardState, s.hsDirty = hs, true
	}
	return nil
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
	var term uint64
	if len(s.tail) > 0 && index >= s.tailFirst {
		term = s.tail[index-s.tailFirst].GetTerm()
	} else {
		term = s.wal.term(index)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyCompacted, u128(index, term))
	})
	if err != nil {
		return fmt.Errorf("raftlog: compact at %d: %w", index, err)
	}
	s.wal.compact(index)
	s.compIndex, s.compTerm = index, term
	if len(s.tail) > 0 && s.tailFirst <= index {
		drop := int(index - s.tailFirst + 1)
		for _, e := range s.tail[:drop] {
			s.tailBytes -= len(e.GetData())
		}
		n := copy(s.tail, s.tail[drop:])
		clear(s.tail[n:])
		s.tail = s.tail[:n]
		s.tailFirst = index + 1
	}
	return nil
}

// nextBoot durably increments and returns the boot counter. Proposal ids
// include it so that an entry proposed before a restart can never be
// mistaken for one proposed after it.
func (s *Storage) nextBoot() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var boot uint64
	err := s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyBoot); len(v) == 8 {
			boot = binary.BigEndian.Uint64(v)
		}
		boot++
		return meta.Put(keyBoot, u64(boot))
	})
	if err != nil {
		return 0, fmt.Errorf("raftlog: save boot counter: %w", err)
	}
	return boot, nil
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

func u64(v uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), v)
}

func u128(a, b uint64) []byte {
	out := make([]byte, 16)
	binary.BigEndian.PutUint64(out, a)
	binary.BigEndian.PutUint64(out[8:], b)
	return out
}
