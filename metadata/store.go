package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/schema"
)

// Bucket names of the schema store. Objects that belong to a keyspace
// (tables now; types and indexes later) live in one nested bucket per
// keyspace under their family's bucket, so dropping a keyspace is one bucket
// deletion per family.
var (
	bucketMeta      = []byte("meta")
	bucketKeyspaces = []byte("keyspaces")
	bucketTables    = []byte("tables")
	keyIndex        = []byte("applied_index")
	keyEpoch        = []byte("epoch")
)

// families are the buckets that hold per-keyspace objects.
var families = [][]byte{bucketTables}

// ErrStoreLocked is returned when another process holds the schema store.
var ErrStoreLocked = errors.New("metadata: schema store is locked by another process")

// Store is the materialised schema on disk (bbolt). It is written from
// schema changes only, never by rewriting unchanged entries, and records the
// log index and epoch it covers so a restart replays only the log after it.
// Store is not safe for concurrent use; the StateMachine serialises it.
type Store struct {
	path string
	db   *bolt.DB
}

// OpenStore opens or creates the store file schema.db in dir.
func OpenStore(dir string) (*Store, error) {
	path := filepath.Join(dir, "schema.db")
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && fi.Size() < 4096 {
		return nil, fmt.Errorf("metadata: schema store %s: file is truncated (%d bytes); move it away to rebuild it from the raft log", path, fi.Size())
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrStoreLocked, path)
		}
		return nil, fmt.Errorf("metadata: open schema store %s: %w (move the file away to rebuild it from the raft log)", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([][]byte{bucketMeta, bucketKeyspaces}, families...) {
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
	return &Store{path: path, db: db}, nil
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
		tables := tx.Bucket(bucketTables)
		err = tables.ForEachBucket(func(ksName []byte) error {
			return tables.Bucket(ksName).ForEach(func(k, v []byte) error {
				t, err := schema.DecodeTable(v)
				if err == nil {
					sch, err = sch.PutTable(t)
				}
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
		return nil, fmt.Errorf("metadata: load schema store %s: %w", s.path, err)
	}
	return m, nil
}

// write applies a merged batch of changes in one durable transaction and
// records that the store now covers the log up to b.index, at b.epoch.
func (s *Store) write(b *batch) error {
	// bbolt keeps references to values until the commit, so encodings go
	// into an arena that is only ever appended to (older slices stay valid
	// when it grows).
	var arena []byte
	encode := func(appendFn func([]byte) []byte) []byte {
		start := len(arena)
		arena = appendFn(arena)
		return arena[start:len(arena):len(arena)]
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		kss := tx.Bucket(bucketKeyspaces)
		for name, p := range b.keyspaces {
			key := []byte(name)
			if p.dropped {
				if err := kss.Delete(key); err != nil {
					return err
				}
				for _, f := range families {
					if fb := tx.Bucket(f); fb.Bucket(key) != nil {
						if err := fb.DeleteBucket(key); err != nil {
							return fmt.Errorf("drop %s of keyspace %s: %w", f, name, err)
						}
					}
				}
			}
			if p.keyspace != nil {
				v := encode(func(b []byte) []byte { return schema.AppendKeyspace(b, p.keyspace) })
				if err := kss.Put(key, v); err != nil {
					return fmt.Errorf("keyspace %s: %w", name, err)
				}
			}
			if len(p.tables) == 0 {
				continue
			}
			tb, err := tx.Bucket(bucketTables).CreateBucketIfNotExists(key)
			if err != nil {
				return fmt.Errorf("tables of keyspace %s: %w", name, err)
			}
			for tname, t := range p.tables {
				if t == nil {
					err = tb.Delete([]byte(tname))
				} else {
					err = tb.Put([]byte(tname), encode(func(b []byte) []byte { return schema.AppendTable(b, t) }))
				}
				if err != nil {
					return fmt.Errorf("table %s.%s: %w", name, tname, err)
				}
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := putUint64(meta, keyIndex, b.index); err != nil {
			return err
		}
		return putUint64(meta, keyEpoch, b.epoch)
	})
	if err != nil {
		return fmt.Errorf("metadata: write schema store %s: %w", s.path, err)
	}
	return nil
}

// batch is the set of pending changes, merged so that the last write per key
// wins. A keyspace drop clears what was pending under the keyspace and
// marks its buckets for deletion before later puts are written.
type batch struct {
	keyspaces map[string]*pendingKeyspace
	changes   int    // changes merged in, for the metrics
	index     uint64 // log index the batch brings the store to
	epoch     uint64
}

// pendingKeyspace is what a batch does to one keyspace.
type pendingKeyspace struct {
	dropped  bool                     // delete the keyspace and its objects first
	keyspace *schema.Keyspace         // new keyspace record, nil if unchanged or dropped
	tables   map[string]*schema.Table // new table records; nil value = delete
}

func newBatch() *batch { return &batch{keyspaces: map[string]*pendingKeyspace{}} }

func (b *batch) empty() bool { return b.changes == 0 }

func (b *batch) keyspace(name string) *pendingKeyspace {
	p := b.keyspaces[name]
	if p == nil {
		p = &pendingKeyspace{}
		b.keyspaces[name] = p
	}
	return p
}

// add merges changes into the batch.
func (b *batch) add(changes []schema.Change) error {
	for _, c := range changes {
		p := b.keyspace(c.Keyspace)
		switch c.Op {
		case schema.OpPutKeyspace:
			p.keyspace = c.KeyspaceValue
		case schema.OpDropKeyspace:
			*p = pendingKeyspace{dropped: true}
		case schema.OpPutTable:
			if p.tables == nil {
				p.tables = map[string]*schema.Table{}
			}
			p.tables[c.Table] = c.TableValue
		case schema.OpDropTable:
			if p.tables == nil {
				p.tables = map[string]*schema.Table{}
			}
			p.tables[c.Table] = nil
		default:
			return fmt.Errorf("metadata: unknown schema change %v for %s.%s", c.Op, c.Keyspace, c.Table)
		}
		b.changes++
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
