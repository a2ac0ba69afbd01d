package raftlog

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/metalog/metalog/internal/boltcheck"
)

// The offline check of a stopped member's raft log: CheckLog reads
// raft.db, the write-ahead log and the snapshot files and checks them
// without writing anything: raft.db's pages (boltcheck) and records,
// every wal record's checksum and framing, every snapshot file's checksum
// and envelope. What it finds is in LogCheck.Files; Rebuild then replays
// the log into a state machine, to compare with what the member's own
// store holds.

// ErrNotRebuilt is matched by the error of Rebuild when the log does not
// reach the index asked for, or no snapshot lets it start below it: the
// comparison cannot be made, which is not a damage.
var ErrNotRebuilt = errors.New("raftlog: the log cannot be replayed to that index")

// checkLockTimeout bounds the wait for raft.db's lock: a running member
// holds it, and the check must not wait for it to stop.
const checkLockTimeout = 500 * time.Millisecond

// CheckedFile is one file of the raft log as CheckLog found it.
type CheckedFile struct {
	// Path is the file's path.
	Path string
	// Summary says what a sound file holds.
	Summary string
	// Damage is what is wrong with the file; nil when it is sound.
	Damage *boltcheck.Error
	// Note is something to know that is not a damage: a torn last record
	// (a crash mid-write), a file the next start removes.
	Note string
}

// SnapshotFile is a sound snapshot file.
type SnapshotFile struct {
	Path        string
	Index, Term uint64
}

// LogCheck is what CheckLog found. Close releases the files it keeps
// open for Rebuild.
type LogCheck struct {
	// Files are the files read, raft.db first, then the wal segments and
	// the snapshot files in order.
	Files []CheckedFile
	// Readable reports that raft.db could be read: without it the log's
	// start and its snapshot are unknown, and Rebuild fails.
	Readable bool
	// First and Last are the entries the log holds up to the first
	// damage, if any (Last is First-1 when none).
	First, Last uint64
	// Commit is the commit index of the newest hard state.
	Commit uint64
	// Snapshots are the sound snapshot files raft.db names or kept, by
	// increasing index.
	Snapshots []SnapshotFile

	wal    *wal
	legacy []*raftpb.Entry // the entries of a format 1 raft.db
}

// CheckLog checks the raft log in dir, which must not be in use: it fails
// with an error matching ErrLocked when a running member holds raft.db,
// and with another error when dir holds no raft.db or cannot be read.
// Damages are not errors: they are in the Files of the LogCheck.
func CheckLog(dir string) (*LogCheck, error) {
	path := filepath.Join(dir, storageFile)
	c := &LogCheck{}
	var st *dbState
	if err := checkPresent(dir); err != nil {
		if err := c.damaged(path, err); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("raftlog: %s is not a member's data dir: %w", dir, err)
	} else if st, err = c.checkRaftDB(path); err != nil {
		return nil, err
	}
	if err := c.checkWAL(filepath.Join(dir, walDirName), st); err != nil {
		c.Close()
		return nil, err
	}
	var named *raftpb.SnapshotMetadata
	if st != nil {
		named = st.snapMeta
	}
	if err := c.checkSnapshots(filepath.Join(dir, snapDirName), named); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the wal segments the check keeps open.
func (c *LogCheck) Close() error {
	if c.wal == nil {
		return nil
	}
	return c.wal.close()
}

// Damaged reports whether any file is damaged.
func (c *LogCheck) Damaged() bool {
	return slices.ContainsFunc(c.Files, func(f CheckedFile) bool { return f.Damage != nil })
}

func (c *LogCheck) add(f CheckedFile) { c.Files = append(c.Files, f) }

// checkRaftDB checks raft.db at path and returns what it holds, nil when
// it is damaged (a damage in Files).
func (c *LogCheck) checkRaftDB(path string) (*dbState, error) {
	if _, err := boltcheck.Verify(path); err != nil {
		return nil, c.damaged(path, err)
	}
	var d *raftDB
	err := boltcheck.Guard(path, func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: checkLockTimeout})
		if errors.Is(err, berrors.ErrTimeout) {
			return fmt.Errorf("%w: %s", ErrLocked, path)
		}
		d = &raftDB{bolt: db, path: path}
		return err
	})
	if err != nil {
		return nil, c.damaged(path, err)
	}
	defer d.close()
	var st dbState
	var members map[uint64][]byte
	err = boltcheck.Guard(path, func() error {
		if err := d.bolt.View(func(tx *bolt.Tx) error { return readChecked(d, tx, &st) }); err != nil {
			return named(d.path, err)
		}
		var err error
		members, err = d.members()
		if err == nil {
			_, err = d.removedMembers()
		}
		return err
	})
	if err != nil {
		return nil, c.damaged(path, err)
	}
	c.Readable = true
	c.Commit = st.hardState.GetCommit()
	sum := fmt.Sprintf("format %d, compacted to %d, snapshot at %d, %d members", st.format, st.compIndex, st.snapMeta.GetIndex(), len(members))
	if st.walStart > 1 {
		sum += fmt.Sprintf(", the log from wal segment %d", st.walStart)
	}
	c.add(CheckedFile{Path: path, Summary: sum})
	return &st, nil
}

// readChecked reads what Storage reads from raft.db in tx, a read-only
// transaction: the buckets must be there and the format recorded.
func readChecked(d *raftDB, tx *bolt.Tx, st *dbState) error {
	for _, b := range [][]byte{bucketEntries, bucketMeta, bucketMembers, bucketRemoved} {
		if tx.Bucket(b) == nil {
			return fmt.Errorf("the bucket %q is missing", b)
		}
	}
	if tx.Bucket(bucketMeta).Get(keyFormat) == nil {
		return errors.New("no storage format is recorded")
	}
	if err := d.readMeta(tx, st); err != nil {
		return err
	}
	if st.format == 1 {
		return d.readLegacy(tx.Bucket(bucketEntries), st)
	}
	return nil
}

// damaged records err as the damage of path, or returns it when it is not
// a damage of the file (a lock, a failed read of the file system).
func (c *LogCheck) damaged(path string, err error) error {
	var d *boltcheck.Error
	switch {
	case errors.As(err, &d):
		d.File = path
	case errors.Is(err, ErrLocked), errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
		return err
	default:
		d = &boltcheck.Error{File: path, Kind: DamageRecord, Detail: err.Error()}
	}
	c.add(CheckedFile{Path: path, Damage: d})
	return nil
}

// checkWAL checks the segments of the write-ahead log in dir and indexes
// the entries after the compaction point st records, up to the first
// damage; st nil (raft.db unreadable): only the records' checksums.
func (c *LogCheck) checkWAL(dir string, st *dbState) error {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("raftlog: read wal directory: %w", err)
	}
	var seqs []uint64
	for _, de := range des {
		if seq, ok := parseWALFileName(de.Name()); ok {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	var start uint64
	if st != nil {
		c.First, c.Last, start = st.compIndex+1, st.compIndex+uint64(len(st.legacy)), st.walStart
		if st.format == 1 {
			c.legacy = st.legacy // the next start moves them to a new wal
		} else {
			c.wal = &wal{dir: dir, first: c.First}
		}
	}
	w, prev := c.wal, uint64(0)
	for i, seq := range seqs {
		path := filepath.Join(dir, walFileName(seq))
		if seq < start {
			c.add(CheckedFile{Path: path, Note: fmt.Sprintf("before the log's first segment (%d): the next start removes it", start)})
			continue
		}
		if prev != 0 && seq != prev+1 {
			gap := filepath.Join(dir, walFileName(prev+1))
			c.add(CheckedFile{Path: gap, Damage: &boltcheck.Error{File: gap, Kind: DamageMissing,
				Detail: fmt.Sprintf("segment %d is missing between %d and %d", prev+1, prev, seq)}})
			w = nil
		}
		prev = seq
		ok, err := c.checkSegment(w, path, seq, i == len(seqs)-1)
		if err != nil {
			return err
		}
		if !ok {
			w = nil // past a damage the records are only checked
		}
	}
	if c.wal != nil {
		c.Last = c.wal.last()
	}
	return nil
}

// checkSegment checks the wal segment seq at path, indexing its entries
// into w unless it is nil, and reports whether it is sound.
func (c *LogCheck) checkSegment(w *wal, path string, seq uint64, last bool) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("raftlog: open wal segment: %w", err)
	}
	seg := &walSeg{seq: seq, f: f}
	if c.wal != nil {
		c.wal.segs = append(c.wal.segs, seg) // closed with the check
	} else {
		defer f.Close()
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return false, fmt.Errorf("raftlog: read wal segment %s: %w", path, err)
	}
	hs, end, torn, err := w.scan(seg, b, last)
	if hs != nil && w != nil {
		c.Commit = hs.GetCommit()
	}
	if err != nil {
		c.add(CheckedFile{Path: path, Damage: &boltcheck.Error{File: path, Kind: walDamageKind(err), Where: fmt.Sprintf("offset %d", end), Detail: err.Error()}})
		return false, nil
	}
	cf := CheckedFile{Path: path, Summary: fmt.Sprintf("%d bytes of records", end)}
	if w != nil && seg.maxIndex > 0 {
		cf.Summary += fmt.Sprintf(", entries up to %d", seg.maxIndex)
	}
	if w != nil && hs != nil {
		cf.Summary += fmt.Sprintf(", term %d, commit %d", hs.GetTerm(), hs.GetCommit())
	}
	if torn != nil {
		cf.Note = fmt.Sprintf("the last record, at offset %d, is torn (%v): a crash in the middle of a write, or damage; the next start cuts it off", end, torn)
	}
	c.add(cf)
	return true, nil
}

// checkSnapshots checks the snapshot files in dir; named is the snapshot
// raft.db names (nil: none, or raft.db is unreadable).
func (c *LogCheck) checkSnapshots(dir string, named *raftpb.SnapshotMetadata) error {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("raftlog: read snapshot directory: %w", err)
	}
	found := false
	for _, de := range des {
		path := filepath.Join(dir, de.Name())
		term, index, ok := parseSnapFileName(de.Name())
		switch {
		case strings.HasSuffix(de.Name(), ".tmp"):
			c.add(CheckedFile{Path: path, Note: "left by an interrupted write: the next start removes it"})
			continue
		case !ok:
			continue
		case c.Readable && index > named.GetIndex():
			c.add(CheckedFile{Path: path, Note: "raft.db does not name it (a crash between the file and raft.db): the next start removes it"})
			continue
		}
		isNamed := index == named.GetIndex() && term == named.GetTerm()
		found = found || isNamed
		data, err := readSnapFile(path)
		if err == nil {
			_, _, err = decodeEnvelope(data)
		}
		if err != nil {
			c.add(CheckedFile{Path: path, Damage: &boltcheck.Error{File: path, Kind: DamageChecksum, Detail: err.Error()}})
			continue
		}
		cf := CheckedFile{Path: path, Summary: fmt.Sprintf("snapshot at index %d, term %d, %d bytes", index, term, len(data))}
		if isNamed {
			cf.Summary += ", the one raft.db names"
		}
		c.add(cf)
		c.Snapshots = append(c.Snapshots, SnapshotFile{Path: path, Index: index, Term: term})
	}
	if named != nil && !found {
		path := filepath.Join(dir, snapFileName(named.GetTerm(), named.GetIndex()))
		c.add(CheckedFile{Path: path, Damage: &boltcheck.Error{File: path, Kind: DamageMissing, Detail: "raft.db names this snapshot, its file is missing"}})
	}
	slices.SortFunc(c.Snapshots, func(a, b SnapshotFile) int { return cmp.Compare(a.Index, b.Index) })
	return nil
}

// ReadSnapshot reads the snapshot file f again and returns the Applier's
// data in it.
func (c *LogCheck) ReadSnapshot(f SnapshotFile) ([]byte, error) {
	data, err := readSnapFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("raftlog: snapshot file %s: %w", f.Path, err)
	}
	_, app, err := decodeEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("raftlog: snapshot file %s: %w", f.Path, err)
	}
	return app, nil
}

// Entries returns the log's entries [lo, hi), at least one and no more
// than maxSize encoded bytes beyond the first, as Storage.Entries does.
func (c *LogCheck) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	if lo < c.First || hi > c.Last+1 || lo >= hi {
		return nil, fmt.Errorf("raftlog: entries [%d, %d) are outside the log [%d, %d]", lo, hi, c.First, c.Last)
	}
	if c.wal == nil {
		return c.legacy[lo-c.First : hi-c.First], nil
	}
	return c.wal.read(lo, hi, maxSize)
}

// Rebuild brings app, a state machine with nothing applied (sn its
// Snapshotter), to index from the checked log: it restores the newest
// sound snapshot at or below index that the log goes on from (none when
// the log starts at 1), then applies the committed normal entries after
// it, and returns the snapshot's index (0: none). It fails with an error
// matching ErrNotRebuilt when the log cannot reach index that way.
func (c *LogCheck) Rebuild(app Applier, sn Snapshotter, index uint64) (base uint64, err error) {
	switch {
	case !c.Readable:
		return 0, fmt.Errorf("%w: raft.db cannot be read", ErrNotRebuilt)
	case index > c.Last:
		return 0, fmt.Errorf("%w: index %d is past the last entry read from the log (%d)", ErrNotRebuilt, index, c.Last)
	}
	var snap *SnapshotFile
	for i := range c.Snapshots {
		if s := &c.Snapshots[i]; s.Index <= index && (s.Index == index || s.Index+1 >= c.First) {
			snap = s
		}
	}
	if snap == nil && c.First > 1 {
		return 0, fmt.Errorf("%w: the log starts at %d, and no sound snapshot at or below %d goes on into it", ErrNotRebuilt, c.First, index)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("raftlog: replay the log to %d: %v", index, r)
		}
	}()
	if snap != nil {
		data, err := c.ReadSnapshot(*snap)
		if err != nil {
			return 0, err
		}
		if err := sn.Restore(snap.Index, data); err != nil {
			return 0, fmt.Errorf("raftlog: restore the snapshot at index %d: %w", snap.Index, err)
		}
		base = snap.Index
	}
	if base < index {
		if _, err := replay(c, app, base+1, index); err != nil {
			return base, err
		}
	}
	return base, nil
}
