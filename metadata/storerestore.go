package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/snapshot"
)

// ErrSnapshotMismatch is matched by the error of a store snapshot whose
// file does not hold what the snapshot says: another index or epoch, or no
// store format.
var ErrSnapshotMismatch = errors.New("metadata: store snapshot does not match its file")

// maxStoreFileFactor bounds the store file a store snapshot may carry, as
// a multiple of max_mutation_size (which bounds the snapshot itself): a
// store's file compresses about 3.6 to 1 (7.4 MB to 2.1 MB at 100,000
// minimal tables), so 32 leaves room while no snapshot within the limit
// can make the receiver write gigabytes.
const maxStoreFileFactor = 32

// receivedSuffix names the file a store snapshot is written to, beside the
// store, until it is renamed into place.
const receivedSuffix = ".restore"

// receivedStore is a store snapshot's file, written beside a store,
// checked and loaded, not yet in place.
type receivedStore struct {
	file *Store // open, under its own name
	m    *ClusterMetadata
}

// installedIn reports whether s has switched to the file.
func (r *receivedStore) installedIn(s *Store) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db == r.file.db
}

// discard closes the file and removes it.
func (r *receivedStore) discard() {
	r.file.Close()
	os.Remove(r.file.path)
}

// restoreStore is Restore of a store snapshot (snapshot.IsStore) at log
// index index: the file is written as received beside the store, synced,
// checked and loaded (receiveStore), then, while no flush runs, takes
// this member's history up to the snapshot's epoch as every restore does
// (carryHistory), is renamed into place, and its metadata published. Any
// failure before the rename leaves the store, the pending changes and the
// published metadata as they were, and removes the file.
func restoreStore(sm *StateMachine, index uint64, data []byte) error {
	if limit := sm.encoder.limit(); limit > 0 {
		if len(data) > limit {
			return fmt.Errorf("metadata: restore snapshot at index %d: %w", index, &snapshot.TooLargeError{Size: len(data), Max: limit})
		}
		// Compressed, a few bytes could stand for a file filling the
		// disk: a file far past what any store compresses from is
		// refused before a byte of it is written.
		if h, err := snapshot.PeekStore(data); err == nil && h.Size > uint64(maxStoreFileFactor)*uint64(limit) {
			return fmt.Errorf("metadata: restore snapshot at index %d: %w: its store file of %d bytes is more than %d times max_mutation_size %d",
				index, snapshot.ErrTooLarge, h.Size, maxStoreFileFactor, limit)
		}
	}
	r, err := receiveStore(sm.store.path+receivedSuffix, index, data)
	if err != nil {
		return fmt.Errorf("metadata: restore snapshot at index %d: %w", index, err)
	}
	var st historyState
	m, err := sm.flusher.replace(func() (*ClusterMetadata, error) {
		err := r.file.update(func(tx *bolt.Tx) (err error) {
			st, err = carryHistory(tx, sm.store, sm.history, r.m.Epoch)
			return err
		})
		if err == nil {
			err = sm.store.install(r.file, "")
		}
		return r.m, err
	})
	if err != nil {
		// Unless the file is in place already (only the directory's sync
		// failed): then it is the store's, and the member stops on the
		// error (raftlog.Snapshotter.Restore).
		if !r.installedIn(sm.store) {
			r.discard()
		}
		return fmt.Errorf("metadata: restore snapshot at index %d: %w", index, err)
	}
	sm.history.replaced(st)
	// The digests remembered before belong to the replaced state.
	sm.digests.reset()
	sm.publish(m)
	sm.logger.Info("restored metadata snapshot", "index", index, "epoch", m.Epoch, "format", "store",
		"keyspaces", m.Schema.KeyspaceCount(), "tables", m.Schema.TableCount(), "requests", m.Requests.Len(), "bytes", len(data))
	return nil
}

// receiveStore checks data, a store snapshot taken at log index index
// (snapshot.DecodeStore: its checksum), writes the file it carries to
// path as received and syncs it, checks the file's pages
// (boltcheck.Verify), its format, and that it records index and the
// snapshot's epoch, and loads it (loadReceived), while the sync runs. On
// an error it leaves no file behind.
func receiveStore(path string, index uint64, data []byte) (*receivedStore, error) {
	s, err := snapshot.DecodeStore(data)
	if err != nil {
		return nil, err
	}
	if s.Index != index {
		return nil, fmt.Errorf("%w: snapshot covers index %d, restoring at %d", ErrSnapshotIndex, s.Index, index)
	}
	synced, err := writeReceived(path, s)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	r, err := openReceived(path, s.StoreHeader)
	// The file must be durable before it is renamed into place.
	if serr := synced(); err == nil && serr != nil {
		r.file.Close()
		err = serr
	}
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return r, nil
}

// writeReceived writes the file s carries to path, replacing what an
// earlier attempt left, and starts syncing it on a goroutine: synced
// waits for the sync and closes the file.
func writeReceived(path string, s *snapshot.StoreSnapshot) (synced func() error, err error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := s.WriteFile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	done := make(chan error, 1)
	go func() { done <- f.Sync() }()
	return func() error { return errors.Join(<-done, f.Close()) }, nil
}

// openReceived opens the file of a store snapshot whose header is h at
// path (openBolt: its pages checked first) and loads it (loadReceived).
// On an error the file is closed.
func openReceived(path string, h snapshot.StoreHeader) (*receivedStore, error) {
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	r := &receivedStore{file: &Store{path: path, db: db}}
	err = guardedRead(path, func() error {
		return r.file.view(func(tx *bolt.Tx) (err error) {
			r.m, err = loadReceived(tx, h)
			return err
		})
	})
	if err != nil {
		db.Close()
		return nil, withFile(err, path)
	}
	return r, nil
}

// loadReceived loads the metadata of a store snapshot's file in tx,
// after checking that it is a sealed store recording the index and epoch
// of the snapshot's header h. Its tables go in as stored (loadTables,
// encoded): their digests come from the bytes the seals vouch for, and the
// schema's digest must be the one the summary records, which the sender
// computed from the tables it had applied (and checked). Only if it is
// not (records another encoder wrote) is the file loaded again, every
// table checked and hashed from its decoded value.
func loadReceived(tx *bolt.Tx, h snapshot.StoreHeader) (*ClusterMetadata, error) {
	if ok, err := sealedFormat(tx); err != nil || !ok {
		return nil, errors.Join(fmt.Errorf("%w: the file has no store format", ErrSnapshotMismatch), err)
	}
	m, sum, err := loadWith(tx, nil, true)
	if err != nil {
		return nil, err
	}
	if sum.index != h.Index || sum.epoch != h.Epoch {
		return nil, fmt.Errorf("%w: the file covers index %d at epoch %d, the snapshot index %d at epoch %d",
			ErrSnapshotMismatch, sum.index, sum.epoch, h.Index, h.Epoch)
	}
	if sum.check(m) == nil {
		return m, nil
	}
	if m, sum, err = loadTx(tx, nil); err != nil {
		return nil, err
	}
	return m, sum.check(m)
}

// carryHistory puts into tx, a store snapshot's file whose history bucket
// is empty, what replaceTx keeps of the history of the store old for the
// state at epoch: old's records up to the cut (the epoch, or the start
// of a gap), as stored, then the records kept in memory; the epochs
// without a record become the gap. It returns the history state to
// install once the file is in place.
func carryHistory(tx *bolt.Tx, old *Store, h *historyLog, epoch uint64) (historyState, error) {
	hb := sealed(tx, bucketHistory)
	if hb == nil {
		return historyState{}, &boltcheck.Error{Kind: DamageRecord, Where: "bucket \"history\"", Detail: "the bucket is missing"}
	}
	hb.b.FillPercent = 1.0
	cut := h.cut(epoch)
	// The copies stay valid until tx commits, after old's transaction.
	var a arena
	err := old.view(func(otx *bolt.Tx) error {
		c := otx.Bucket(bucketHistory).Cursor()
		for k, v := c.First(); len(k) == 8 && binary.BigEndian.Uint64(k) <= cut; k, v = c.Next() {
			// Same bucket, same key: the seal holds as it is.
			key := a.encode(func(b []byte) []byte { return append(b, k...) })
			if err := hb.b.Put(key, a.encode(func(b []byte) []byte { return append(b, v...) })); err != nil {
				return fmt.Errorf("history of epoch %d: %w", binary.BigEndian.Uint64(k), err)
			}
		}
		return nil
	})
	if err != nil {
		return historyState{}, fmt.Errorf("metadata: keep the history of %s: %w", old.path, err)
	}
	return h.replaceTx(tx, &a, epoch)
}
