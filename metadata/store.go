package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/schema"
)

// Bucket names of the schema store. Tables live in one nested bucket per
// keyspace so that dropping a keyspace is one bucket deletion.
var (
	bucketMeta      = []byte("meta")
	bucketKeyspaces = []byte("keyspaces")
	bucketTables    = []byte("tables")
	keyIndex        = []byte("applied_index")
	keyEpoch        = []byte("epoch")
)

// ErrStoreLocked is returned when another process holds the schema store.
var ErrStoreLocked = errors.New("metadata: schema store is locked by another process")

// Store is the materialised schema on disk (bbolt). It is written from
// schema changes only, never by rewriting unchanged entries, and records the
// log index and epoch it covers so a restart replays only the log after it.
type Store struct {
	db *bolt.DB
}

// OpenStore opens or creates the store file schema.db in dir.
func OpenStore(dir string) (*Store, error) {
	path := filepath.Join(dir, "schema.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrStoreLocked, path)
		}
		return nil, fmt.Errorf("metadata: open schema store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketKeyspaces, bucketTables} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("metadata: init schema store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the store file.
func (s *Store) Close() error { return s.db.Close() }

// Load reads the whole store into a ClusterMetadata.
func (s *Store) Load() (*ClusterMetadata, error) {
	m := &ClusterMetadata{}
	err := s.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		m.Index = getUint64(meta, keyIndex)
		m.Epoch = getUint64(meta, keyEpoch)
		var sch schema.Schema
		err := tx.Bucket(bucketKeyspaces).ForEach(func(k, v []byte) error {
			ks, err := schema.DecodeKeyspace(v)
			if err != nil {
				return fmt.Errorf("keyspace %q: %w", k, err)
			}
			sch = sch.PutKeyspace(ks)
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketTables).ForEachBucket(func(ksName []byte) error {
			return tx.Bucket(bucketTables).Bucket(ksName).ForEach(func(k, v []byte) error {
				t, err := schema.DecodeTable(v)
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", ksName, k, err)
				}
				sch, err = sch.PutTable(t)
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", ksName, k, err)
				}
				return nil
			})
		})
		m.Schema = sch
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("metadata: load schema store: %w", err)
	}
	return m, nil
}

// Write applies changes in one durable transaction and records that the
// store now covers the log up to index, at epoch. Only the keys named by
// changes are written.
func (s *Store) Write(changes []schema.Change, index, epoch uint64) error {
	var buf []byte
	err := s.db.Update(func(tx *bolt.Tx) error {
		kss, tables := tx.Bucket(bucketKeyspaces), tx.Bucket(bucketTables)
		for _, c := range changes {
			var err error
			switch c.Op {
			case schema.PutKeyspace:
				buf = schema.AppendKeyspace(buf[:0], c.KeyspaceValue)
				err = kss.Put([]byte(c.Keyspace), buf)
			case schema.DropKeyspace:
				err = kss.Delete([]byte(c.Keyspace))
				if err == nil && tables.Bucket([]byte(c.Keyspace)) != nil {
					err = tables.DeleteBucket([]byte(c.Keyspace))
				}
			case schema.PutTable:
				var b *bolt.Bucket
				if b, err = tables.CreateBucketIfNotExists([]byte(c.Keyspace)); err == nil {
					buf = schema.AppendTable(buf[:0], c.TableValue)
					err = b.Put([]byte(c.Table), buf)
				}
			case schema.DropTable:
				if b := tables.Bucket([]byte(c.Keyspace)); b != nil {
					err = b.Delete([]byte(c.Table))
				}
			default:
				err = fmt.Errorf("unknown change op %v", c.Op)
			}
			if err != nil {
				return fmt.Errorf("%v %s.%s: %w", c.Op, c.Keyspace, c.Table, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := putUint64(meta, keyIndex, index); err != nil {
			return err
		}
		return putUint64(meta, keyEpoch, epoch)
	})
	if err != nil {
		return fmt.Errorf("metadata: write schema store: %w", err)
	}
	return nil
}

func getUint64(b *bolt.Bucket, key []byte) uint64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func putUint64(b *bolt.Bucket, key []byte, v uint64) error {
	return b.Put(key, binary.BigEndian.AppendUint64(nil, v))
}
