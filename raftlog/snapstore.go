package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/metalog/metalog/internal/durable"
)

// Snapshot files live next to raft.db:
//
//	<dir>/snap/<term>-<index>.snap   term and index as 16 hex digits each,
//	                                 so names sort like (term, index)
//
// A file holds a header and the snapshot's data (raftpb.Snapshot.Data, which
// is raftlog's envelope, see envelope.go):
//
//	magic  (8 bytes, snapFileMagic)
//	length (8 bytes big-endian) of the data
//	crc32  (4 bytes big-endian, Castagnoli) of the data
//	data
//
// The snapshot's metadata (index, term, ConfState) is in raft.db under
// meta/snapshot; the file it names is written (temp file, fsync, rename,
// directory fsync) before the metadata, so the metadata never names a file
// that is not complete. The newest snapFilesKept files are kept.
const (
	snapDirName   = "snap"
	snapSuffix    = ".snap"
	snapFileMagic = "RLSNAP01"
	snapHeaderLen = len(snapFileMagic) + 8 + 4
	// snapFilesKept is how many snapshot files are kept: the current one
	// and the one before it (to look at when the current one is in doubt).
	snapFilesKept = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// snapStore is a Storage's snapshot files and the metadata of its newest
// stored snapshot. The data stays on disk: raft asks for it (Snapshot)
// only when a follower needs it, and it is read back from the file then,
// so a member does not keep a copy of its whole state in memory between
// snapshots. It is not safe for concurrent use: Storage calls it under its
// mutex.
type snapStore struct {
	dir string // <dir>/snap
	// newest is the metadata of the newest stored snapshot, nil if none;
	// its file is complete and was checked when it became the newest. It
	// is immutable: it is cloned when handed out.
	newest *raftpb.SnapshotMetadata
	// awaitIndex, when non-zero, is the index of a membership change that
	// newest predates: a new member would ignore it, so Snapshot answers
	// "temporarily unavailable" until one at or past it is stored.
	awaitIndex uint64
}

// openSnapStore opens (creating if needed) the snapshot directory dir.
func openSnapStore(dir string) (*snapStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("raftlog: create snapshot directory: %w", err)
	}
	return &snapStore{dir: dir}, nil
}

// path returns the file name of the snapshot of md.
func (s *snapStore) path(md *raftpb.SnapshotMetadata) string {
	return filepath.Join(s.dir, snapFileName(md.GetTerm(), md.GetIndex()))
}

// load makes the snapshot of md (nil for none), which raft.db at dbPath
// names, the newest one, reading and checking its file unless it is the
// newest already. The data read is not kept.
func (s *snapStore) load(md *raftpb.SnapshotMetadata, dbPath string) error {
	if md == nil {
		s.newest = nil
		return nil
	}
	if old := s.newest; old.GetIndex() == md.GetIndex() && old.GetTerm() == md.GetTerm() {
		return nil
	}
	if _, err := s.read(md, dbPath); err != nil {
		return err
	}
	s.newest = md
	return nil
}

// read reads and checks the file of the snapshot of md, which raft.db at
// dbPath names, and returns its data (one allocation of the file's size).
func (s *snapStore) read(md *raftpb.SnapshotMetadata, dbPath string) ([]byte, error) {
	path := s.path(md)
	data, err := readSnapFile(path)
	if errors.Is(err, ErrDamaged) {
		return nil, badSnapshotFile{fmt.Errorf("raftlog: the snapshot at index %d, term %d, named by %s: %w", md.GetIndex(), md.GetTerm(), dbPath, err)}
	}
	if err != nil {
		return nil, badSnapshotFile{fmt.Errorf("raftlog: snapshot file %s (index %d, term %d, named by %s): %w", path, md.GetIndex(), md.GetTerm(), dbPath, err)}
	}
	return data, nil
}

// write durably writes the file of the snapshot of md, whose data is the
// concatenation of pieces (written as they are, not joined first); keep
// makes it the newest once raft.db names it.
func (s *snapStore) write(md *raftpb.SnapshotMetadata, pieces ...[]byte) error {
	_, err := writeSnapFile(s.dir, md.GetTerm(), md.GetIndex(), pieces...)
	return err
}

// keep makes the snapshot of md, whose file is written and which raft.db
// names, the newest snapshot (keeping a copy of md, not the data), and
// removes the files no longer kept. A file left behind costs disk space
// only; the next one removes it.
func (s *snapStore) keep(md *raftpb.SnapshotMetadata) {
	s.newest = proto.Clone(md).(*raftpb.SnapshotMetadata)
	_ = purgeSnapFiles(s.dir, s.index(), false)
}

// index returns the index of the newest snapshot, 0 if none.
func (s *snapStore) index() uint64 {
	return s.newest.GetIndex()
}

// snapshot is Storage.Snapshot: the newest snapshot with its data read
// back from its file (both the caller's), an empty one, or, while a newer
// one is awaited, raft.ErrSnapshotTemporarilyUnavailable. An error reading
// the file matches ErrBadSnapshotFile.
func (s *snapStore) snapshot(dbPath string) (*raftpb.Snapshot, error) {
	if s.awaitIndex > s.index() {
		// raft asks again at its next contact with the peer.
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	if s.newest == nil {
		return raftpb.EnsureSnapshot(&raftpb.Snapshot{}), nil
	}
	data, err := s.read(s.newest, dbPath)
	if err != nil {
		return nil, err
	}
	return &raftpb.Snapshot{
		Data:     data,
		Metadata: proto.Clone(s.newest).(*raftpb.SnapshotMetadata),
	}, nil
}

// await makes snapshot answer "temporarily unavailable" until a snapshot
// at or past index is kept; zero stops waiting.
func (s *snapStore) await(index uint64) {
	s.awaitIndex = index
}

func snapFileName(term, index uint64) string {
	return fmt.Sprintf("%016x-%016x%s", term, index, snapSuffix)
}

// parseSnapFileName returns the term and index of a snapshot file name.
func parseSnapFileName(name string) (term, index uint64, ok bool) {
	base, found := strings.CutSuffix(name, snapSuffix)
	if !found || len(base) != 33 || base[16] != '-' {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(base, "%016x-%016x", &term, &index); err != nil {
		return 0, 0, false
	}
	return term, index, true
}

// writeSnapFile durably writes the concatenation of pieces as the snapshot
// file of (term, index) in dir and returns its path.
func writeSnapFile(dir string, term, index uint64, pieces ...[]byte) (path string, err error) {
	path = filepath.Join(dir, snapFileName(term, index))
	f, err := os.CreateTemp(dir, snapFileName(term, index)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("raftlog: create snapshot file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	var size uint64
	var sum uint32
	for _, p := range pieces {
		size += uint64(len(p))
		sum = crc32.Update(sum, crcTable, p)
	}
	hdr := make([]byte, 0, snapHeaderLen)
	hdr = append(hdr, snapFileMagic...)
	hdr = binary.BigEndian.AppendUint64(hdr, size)
	hdr = binary.BigEndian.AppendUint32(hdr, sum)
	for _, p := range append([][]byte{hdr}, pieces...) {
		if _, err = f.Write(p); err != nil {
			return "", fmt.Errorf("raftlog: write snapshot file %s: %w", path, err)
		}
	}
	if err = f.Sync(); err != nil {
		return "", fmt.Errorf("raftlog: sync snapshot file %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("raftlog: close snapshot file %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return "", fmt.Errorf("raftlog: rename snapshot file to %s: %w", path, err)
	}
	if err = durable.SyncDir(dir); err != nil {
		return "", fmt.Errorf("raftlog: sync snapshot directory %s: %w", dir, err)
	}
	return path, nil
}

// readSnapFile reads and checks the snapshot file at path and returns its
// data (one allocation of the file's size). A file whose header or
// checksum does not match is a damage (ErrDamaged).
func readSnapFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < snapHeaderLen || string(b[:len(snapFileMagic)]) != snapFileMagic {
		return nil, damage(path, DamageChecksum, "header", "not a raftlog snapshot file (%d bytes, bad header)", len(b))
	}
	size := binary.BigEndian.Uint64(b[len(snapFileMagic):])
	sum := binary.BigEndian.Uint32(b[len(snapFileMagic)+8:])
	data := b[snapHeaderLen:]
	if size != uint64(len(data)) {
		return nil, damage(path, DamageChecksum, "", "truncated or padded: header says %d data bytes, file has %d", size, len(data))
	}
	if got := crc32.Checksum(data, crcTable); got != sum {
		return nil, damage(path, DamageChecksum, "", "checksum mismatch: header %08x, data %08x", sum, got)
	}
	return data, nil
}

// purgeSnapFiles removes snapshot files other than the current one (at
// index current, 0 for none) and the newest snapFilesKept-1 older ones;
// files after current were never referenced by raft.db (a crash between
// file and metadata) and go too. With removeTemp, leftover temporary files
// are removed as well (only when nothing can be writing them: at open).
func purgeSnapFiles(dir string, current uint64, removeTemp bool) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var older []uint64
	files := make(map[uint64][]string)
	var errs []error
	for _, de := range des {
		name := de.Name()
		if strings.HasSuffix(name, ".tmp") {
			if removeTemp {
				errs = append(errs, os.Remove(filepath.Join(dir, name)))
			}
			continue
		}
		_, index, ok := parseSnapFileName(name)
		if !ok {
			continue
		}
		switch {
		case index > current:
			errs = append(errs, os.Remove(filepath.Join(dir, name)))
		case index < current:
			if len(files[index]) == 0 {
				older = append(older, index)
			}
			files[index] = append(files[index], name)
		}
	}
	slices.Sort(older)
	keepOlder := snapFilesKept - 1
	if current == 0 {
		keepOlder = 0
	}
	for _, index := range older[:max(0, len(older)-keepOlder)] {
		for _, name := range files[index] {
			errs = append(errs, os.Remove(filepath.Join(dir, name)))
		}
	}
	return errors.Join(errs...)
}

// badSnapshotFile is the error of a snapshot file that cannot be read
// back; it matches ErrBadSnapshotFile.
type badSnapshotFile struct{ err error }

func (e badSnapshotFile) Error() string        { return e.err.Error() }
func (e badSnapshotFile) Unwrap() error        { return e.err }
func (e badSnapshotFile) Is(target error) bool { return target == ErrBadSnapshotFile }
