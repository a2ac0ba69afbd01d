package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/snapshot"
)

// keyRestoredFrom, in the meta bucket of a store made by RestoreBackup,
// holds the id of the backup it was restored from.
var keyRestoredFrom = []byte("restored_from")

// EncodeBackup encodes m as a backup: a snapshot file in the format the
// members' own snapshots have (checksummed, snapshot.Decode reads it), at
// the log index of m's last command. No size guard applies: a backup does
// not travel through raft. It reads only m, which is immutable, so it may
// run on any goroutine while the member applies on.
func EncodeBackup(m *ClusterMetadata) []byte {
	c := snapshotContents(m, m.Index)
	return snapshot.Encode(nil, &c)
}

// BackupID is the id of a backup: the first 8 bytes of its checksum, so
// that the same file always has the same id.
func BackupID(data []byte) uint64 {
	if len(data) < 32 {
		return 0
	}
	return binary.BigEndian.Uint64(data[len(data)-32:])
}

// RestoreBackup creates, in dir, the schema store of a member of a new
// cluster from a backup (EncodeBackup's bytes): the backup's schema,
// guardrail settings and remembered request ids at its epoch, at log index
// 0, since the new cluster's log starts empty; its first DDL takes the
// epoch after the backup's. The store keeps no history before it, and
// records the backup's id (RestoredFrom), from which the new cluster's id
// is made, so that it never takes the old cluster for its own. dir must not
// hold a schema store yet. It returns what the store holds.
func RestoreBackup(dir string, data []byte) (*ClusterMetadata, error) {
	c, err := snapshot.Decode(data)
	if err != nil {
		return nil, err
	}
	m, err := metadataOf(c, 0)
	if err != nil {
		return nil, fmt.Errorf("metadata: backup: %w", err)
	}
	path := filepath.Join(dir, storeFile)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("metadata: restore into %s: it holds a schema store already (%s): restore into a new data dir", dir, path)
	}
	s, err := OpenStore(dir)
	if err != nil {
		return nil, err
	}
	id := binary.BigEndian.AppendUint64(nil, BackupID(data))
	err = s.replaceAll(m, func(tx *bolt.Tx, _ *arena) error {
		return tx.Bucket(bucketMeta).Put(keyRestoredFrom, id)
	})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: restore into %s: %w", path, err)
	}
	return m, nil
}

// RestoredFrom returns the id of the backup the schema store in dir was
// restored from (RestoreBackup), or 0: there is no store, or it was not
// restored. It opens the store read-only and closes it.
func RestoredFrom(dir string) (uint64, error) {
	path := filepath.Join(dir, storeFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, fmt.Errorf("metadata: open schema store %s: %w", path, err)
	}
	defer db.Close()
	var id uint64
	err = db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if v := meta.Get(keyRestoredFrom); len(v) == 8 {
				id = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	return id, err
}
