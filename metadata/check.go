package metadata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/snapshot"
)

// checkLockTimeout bounds the wait for the store's lock in CheckStore: a
// running member holds it, and a check must not wait for it to stop.
const checkLockTimeout = 500 * time.Millisecond

// StoreCheck is what CheckStore read from a sound schema store.
type StoreCheck struct {
	// Path is the store's file.
	Path string
	// Sealed is false for a store written before seals: its values carry
	// no checksums, only its pages were checked, and its Digest and
	// counts are not known. The next start seals it.
	Sealed bool
	// Index and Epoch are the log index and epoch the store covers.
	Index, Epoch uint64
	// Digest is the digest of the schema read, which matches the one the
	// summary records.
	Digest [32]byte
	// Keyspaces, Tables and Requests count what the store holds.
	Keyspaces, Tables, Requests int
}

// CheckStore checks the schema store in dir as OpenStore and Load do,
// without writing to it: its pages (boltcheck), then, opened read-only,
// every seal, every record and the summary's digest. Errors of a damaged
// store match ErrDamaged and name the file; a store a running member
// holds fails with ErrStoreLocked, a missing one with os.ErrNotExist.
func CheckStore(dir string) (StoreCheck, error) {
	path := filepath.Join(dir, storeFile)
	c := StoreCheck{Path: path}
	if _, err := os.Stat(path); err != nil {
		return c, fmt.Errorf("metadata: schema store: %w", err)
	}
	if _, err := boltcheck.Verify(path); err != nil {
		return c, fmt.Errorf("metadata: schema store: %w", err)
	}
	var db *bolt.DB
	err := guardedRead(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: checkLockTimeout})
		return err
	})
	if errors.Is(err, bolt.ErrTimeout) {
		return c, fmt.Errorf("%w: %s", ErrStoreLocked, path)
	}
	if err != nil {
		return c, fmt.Errorf("metadata: open schema store %s: %w", path, err)
	}
	defer db.Close()
	var m *ClusterMetadata
	var sum storeSummary
	err = guardedRead(path, func() error {
		return db.View(func(tx *bolt.Tx) (err error) {
			if c.Sealed, err = sealedFormat(tx); err != nil {
				return err
			}
			if !c.Sealed {
				meta := tx.Bucket(bucketMeta)
				c.Index, c.Epoch = getUint64(meta, keyIndex), getUint64(meta, keyEpoch)
				return nil
			}
			m, sum, err = loadTx(tx, nil)
			return err
		})
	})
	if err == nil && c.Sealed {
		err = sum.check(m)
	}
	if err != nil {
		return c, fmt.Errorf("metadata: check schema store: %w", withFile(err, path))
	}
	if c.Sealed {
		c.Index, c.Epoch, c.Digest = m.Index, m.Epoch, m.Schema.Digest()
		c.Keyspaces, c.Tables, c.Requests = m.Schema.KeyspaceCount(), m.Schema.TableCount(), m.Requests.Len()
	}
	return c, nil
}

// SnapshotCheck is what a snapshot of the metadata holds.
type SnapshotCheck struct {
	// Index and Epoch are the log index and epoch the snapshot covers.
	Index, Epoch uint64
	// Digest is the digest of its schema.
	Digest [32]byte
	// Keyspaces and Tables count its schema.
	Keyspaces, Tables int
}

// CheckSnapshot decodes data, a snapshot Capture took at log index index,
// and checks it as Restore does, without the member's store: a store
// snapshot's file is written to a temporary directory, checked and loaded
// there, then removed. The error of data that does not decode matches
// ErrDamaged.
func CheckSnapshot(index uint64, data []byte) (SnapshotCheck, error) {
	var m *ClusterMetadata
	var err error
	if snapshot.IsStore(data) {
		var dir string
		if dir, err = os.MkdirTemp("", "metalog-snapshot-check-"); err != nil {
			return SnapshotCheck{}, fmt.Errorf("metadata: check snapshot at index %d: %w", index, err)
		}
		defer os.RemoveAll(dir)
		var r *receivedStore
		if r, err = receiveStore(filepath.Join(dir, storeFile), index, data); err == nil {
			r.discard()
			m = r.m
		}
	} else {
		m, err = decodeSnapshot(data, index)
	}
	if err != nil {
		return SnapshotCheck{}, &boltcheck.Error{Kind: DamageRecord, Detail: err.Error()}
	}
	return SnapshotCheck{Index: index, Epoch: m.Epoch, Digest: m.Schema.Digest(), Keyspaces: m.Schema.KeyspaceCount(), Tables: m.Schema.TableCount()}, nil
}
