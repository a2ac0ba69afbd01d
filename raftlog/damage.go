package raftlog

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/metalog/metalog/internal/boltcheck"
)

// ErrDamaged is matched (errors.Is) by the errors of a damaged file of the
// log, found when it is opened: raft.db's pages (boltcheck.KindPages) or
// values (DamageRecord), a read of raft.db that made bbolt panic or fault
// (DamageRead), a bad record of a wal segment or a missing segment
// (DamageChecksum, DamageRecord, DamageMissing), a snapshot file whose
// header or checksum does not match (DamageChecksum; it also matches
// ErrBadSnapshotFile). The error's *boltcheck.Error names the file,
// where and what. Nothing in a damaged data dir is changed by the open that
// finds it: the member cannot start from it, and must be rebuilt from the
// other members (removed, and added again with an empty data dir) or
// restored from a backup.
var ErrDamaged = boltcheck.ErrDamaged

// The kinds of damage (boltcheck.Error.Kind) raftlog reports beside
// boltcheck.KindPages, at start and in CheckLog.
const (
	// DamageChecksum: a wal record or a snapshot file does not match its
	// checksum (or the length or header its format gives).
	DamageChecksum = "checksum"
	// DamageRecord: a value of raft.db or a wal record whose checksum
	// matched does not decode, or does not fit the log read so far.
	DamageRecord = "record"
	// DamageMissing: a file the log needs (a wal segment, the snapshot
	// raft.db names) is missing.
	DamageMissing = "missing"
	// DamageRead: bbolt panicked or faulted opening or reading raft.db
	// (boltcheck.Guard).
	DamageRead = boltcheck.KindRead
)

// damage is a damage of kind in file.
func damage(file, kind, where, format string, args ...any) *boltcheck.Error {
	return &boltcheck.Error{File: file, Kind: kind, Where: where, Detail: fmt.Sprintf(format, args...)}
}

// verifyBolt checks the page structure of the bbolt file at path before
// bbolt maps it (bbolt panics on damaged pages, partly on goroutines of its
// own), holding the file's lock (exclusive for a writer, shared for a
// reader) so that a process writing it cannot make a sound file look
// damaged. A missing or empty file passes. It waits at most timeout for the
// lock (ErrLocked).
func verifyBolt(path string, exclusive bool, timeout time.Duration) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	defer f.Close() // releases the lock
	if fi, err := f.Stat(); err != nil || fi.Size() == 0 {
		return err
	}
	if err := lockFile(f, exclusive, timeout); errors.Is(err, ErrLocked) {
		return fmt.Errorf("%w: %s", ErrLocked, path)
	} else if err != nil {
		return fmt.Errorf("raftlog: lock %s: %w", path, err)
	}
	if _, err := boltcheck.Verify(path); err != nil {
		if errors.Is(err, ErrDamaged) {
			return fmt.Errorf("raftlog: %w", err)
		}
		return fmt.Errorf("raftlog: check %s: %w", path, err)
	}
	return nil
}

// logCutShort is the damage of a log that ends before what was durably
// recorded beyond it (what): a wal segment cut short or removed. It names
// the newest segment, where the missing entries belonged.
func (s *Storage) logCutShort(what string) error {
	last, _ := s.LastIndex()
	return damage(s.wal.lastSegment(), DamageMissing, "", "the log ends at index %d, but %s: entries are missing (the segment was cut short or a segment removed)", last, what)
}
