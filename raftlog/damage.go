package raftlog

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/metalog/metalog/internal/boltcheck"
)

// ErrDamaged is matched (errors.Is) by the errors of a damaged file of the
// log, found when it is opened: raft.db's pages (boltcheck.KindPages) or
// values (DamageRecord), a read of raft.db that made bbolt panic or fault
// (DamageRead), a bad record of a wal segment (DamageWAL), a snapshot file
// whose header or checksum does not match (DamageSnapshot, which also
// matches ErrBadSnapshotFile). The error's *boltcheck.Error names the file,
// where and what. Nothing in a damaged data dir is changed by the open that
// finds it: the member cannot start from it, and must be rebuilt from the
// other members (removed, and added again with an empty data dir) or
// restored from a backup.
var ErrDamaged = boltcheck.ErrDamaged

// The kinds of damage (boltcheck.Error.Kind) raftlog reports beside
// boltcheck.KindPages.
const (
	// DamageRecord: a value of raft.db does not decode.
	DamageRecord = "record"
	// DamageRead: bbolt panicked or faulted opening or reading raft.db.
	DamageRead = "read"
	// DamageWAL: a record of a wal segment fails its checksum or does not
	// decode, or a segment is missing.
	DamageWAL = "wal"
	// DamageSnapshot: a snapshot file's header or checksum does not match.
	DamageSnapshot = "snapshot"
)

// damage is a damage of kind in file.
func damage(file, kind, where, format string, args ...any) *boltcheck.Error {
	return &boltcheck.Error{File: file, Kind: kind, Where: where, Detail: fmt.Sprintf(format, args...)}
}

// guardBolt runs f, which opens or reads the bbolt file at path, turning a
// panic of bbolt or a memory fault (a page mapped past the end of a file
// cut short) into a damage of path: bbolt trusts its pages.
func guardBolt(path string, f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damage(path, DamageRead, "", "reading it failed: %v", r)
		}
	}()
	return f()
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
