package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/boltcheck"

	"github.com/metalog/metalog/snapshot"
)

// keyRestoredFrom, in the meta bucket of a store made by RestoreBackup,
// holds the id of the backup it was restored from.
var keyRestoredFrom = []byte("restored_from")

// Backup encodes m, a state this member has applied (its Current or an
// earlier view), as a backup: a record stream (snapshot.Encode,
// checksummed, snapshot.Decode reads it; the format of members' snapshots
// before store snapshots), at the log
// index of m's last command, with the history records kept up to m's epoch
// (SectionHistory). No size guard applies: a backup does not travel
// through raft. It reads only m and the history, so it may run on any
// goroutine while the member applies on. It fails, matching
// ErrHistoryIncomplete, while this member lacks history it is copying
// from a peer: another member has it.
func (sm *StateMachine) Backup(m *ClusterMetadata) ([]byte, error) {
	recs, err := sm.history.encoded(sm.history.Oldest()-1, m.Epoch)
	if err != nil {
		return nil, fmt.Errorf("metadata: backup at epoch %d: %w", m.Epoch, err)
	}
	c := snapshotContents(m, m.Index)
	if len(recs) > 0 {
		body := binary.AppendUvarint(nil, uint64(len(recs)))
		for _, r := range recs {
			body = binary.AppendUvarint(body, uint64(len(r)))
			body = append(body, r...)
		}
		c.Sections = append(c.Sections, snapshot.Section{Tag: snapshot.SectionHistory, Data: body})
	}
	return snapshot.Encode(nil, &c), nil
}

// BackupHistory checks the history records of a backup's SectionHistory:
// each decodes, and their epochs follow one another up to epoch, the
// backup's. It returns how many there are and the first one's epoch. Each
// record is decoded and dropped in turn, so a long history is checked in
// little memory.
func BackupHistory(data []byte, epoch uint64) (n int, first uint64, err error) {
	err = eachBackupRecord(data, epoch, func(e uint64, _ []byte) error {
		if n++; n == 1 {
			first = e
		}
		return nil
	})
	return n, first, err
}

// eachBackupRecord checks the records of a SectionHistory body as
// BackupHistory says and hands each, with its epoch, to fn, oldest first.
func eachBackupRecord(data []byte, epoch uint64, fn func(epoch uint64, record []byte) error) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return errors.New("metadata: backup history: bad record count")
	}
	data = data[k:]
	var last uint64
	for i := range n {
		size, k := binary.Uvarint(data)
		if k <= 0 || size > uint64(len(data)-k) {
			return fmt.Errorf("metadata: backup history: record %d of %d is truncated", i+1, n)
		}
		raw := data[k : k+int(size)]
		r, err := DecodeRecord(raw)
		if err != nil {
			return fmt.Errorf("metadata: backup history: record %d of %d: %w", i+1, n, err)
		}
		if i > 0 && r.Epoch != last+1 || r.Epoch > epoch {
			return fmt.Errorf("metadata: backup history: record %d of %d is of epoch %d, out of order (backup at epoch %d)", i+1, n, r.Epoch, epoch)
		}
		last = r.Epoch
		if err := fn(r.Epoch, raw); err != nil {
			return err
		}
		data = data[k+int(size):]
	}
	if len(data) != 0 {
		return fmt.Errorf("metadata: backup history: %d bytes after the last record", len(data))
	}
	if n > 0 && last != epoch {
		return fmt.Errorf("metadata: backup history ends at epoch %d, the backup is at %d", last, epoch)
	}
	return nil
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
// epoch after the backup's. The store keeps the backup's history records,
// and records the backup's id (RestoredFrom), from which the new cluster's id
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
	var history []byte
	for _, sec := range c.Sections {
		if sec.Tag == snapshot.SectionHistory {
			history = sec.Data
		}
	}
	id := binary.BigEndian.AppendUint64(nil, BackupID(data))
	_, err = s.replaceAll(metadataObjects(m), func() (*ClusterMetadata, error) { return m, nil }, func(tx *bolt.Tx, a *arena, _ *ClusterMetadata) error {
		if history != nil {
			hb := sealed(tx, bucketHistory)
			hb.b.FillPercent = 1.0 // epochs only append
			err := eachBackupRecord(history, c.Epoch, func(epoch uint64, record []byte) error {
				return hb.putBytes(a, epochKey(epoch), record)
			})
			if err != nil {
				return err
			}
		}
		return sealed(tx, bucketMeta).putBytes(a, keyRestoredFrom, id)
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
// restored. It checks the file's pages (a damaged one fails with
// ErrDamaged), opens it read-only and closes it.
func RestoredFrom(dir string) (uint64, error) {
	path := filepath.Join(dir, storeFile)
	if fi, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return 0, nil
	}
	if _, err := boltcheck.Verify(path); err != nil {
		return 0, fmt.Errorf("metadata: schema store: %w", err)
	}
	var id uint64
	err := guardedRead(path, func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			return fmt.Errorf("open: %w", err)
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error {
			v, err := restoredFromTx(tx)
			if len(v) == 8 {
				id = binary.BigEndian.Uint64(v)
			}
			return err
		})
	})
	if err != nil {
		return 0, fmt.Errorf("metadata: schema store %s: %w", path, withFile(err, path))
	}
	return id, nil
}

// restoredFromTx reads the restored_from key of a sealed store, or of one
// written before seals.
func restoredFromTx(tx *bolt.Tx) ([]byte, error) {
	meta := sealed(tx, bucketMeta)
	if meta == nil {
		return nil, nil
	}
	isSealed, err := sealedFormat(tx)
	if err != nil || !isSealed {
		return meta.b.Get(keyRestoredFrom), err
	}
	return meta.get(keyRestoredFrom)
}
