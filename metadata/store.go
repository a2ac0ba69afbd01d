package metadata

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

// Bucket names of the schema store. Objects that belong to a keyspace
// (tables, user types, indexes, functions) live in one nested bucket per
// keyspace under their family's bucket, so dropping a keyspace is one
// bucket deletion per family.
var (
	bucketMeta      = []byte("meta")
	bucketKeyspaces = []byte("keyspaces")
	bucketRequests  = []byte("requests")
	keyIndex        = []byte("applied_index")
	keyEpoch        = []byte("epoch")
	keyGuardrails   = []byte("guardrails")
	// keyKeyspaceGuardrails holds the per-keyspace overrides
	// (guardrails.AppendOverrides); absent: none.
	keyKeyspaceGuardrails = []byte("keyspace_guardrails")
	// keyHistoryName holds the history name (appendHistoryName);
	// absent: none.
	keyHistoryName = []byte("history_name")
)

// family is one kind of per-keyspace object in the store.
type family int

// The families, in the order Load reads them: types before the tables that
// use them, tables before their indexes; functions and aggregates after
// the types they use (schema.PutFunction takes them in any order).
const (
	familyTypes family = iota
	familyTables
	familyIndexes
	familyFunctions
	numFamilies
)

// familyBuckets are the top-level bucket names of the families.
var familyBuckets = [numFamilies][]byte{
	familyTypes:     []byte("types"),
	familyTables:    []byte("tables"),
	familyIndexes:   []byte("indexes"),
	familyFunctions: []byte("functions"),
}

func (f family) String() string { return string(familyBuckets[f]) }

// encodeObject appends the encoding of v (a *schema.Table, *schema.UserType,
// *schema.Index or *schema.Function) to dst.
func encodeObject(dst []byte, v any) []byte {
	switch v := v.(type) {
	case *schema.Table:
		return schema.AppendTable(dst, v)
	case *schema.UserType:
		return schema.AppendUserType(dst, v)
	case *schema.Index:
		return schema.AppendIndex(dst, v)
	case *schema.Function:
		return schema.AppendFunction(dst, v)
	}
	panic(fmt.Sprintf("metadata: no encoding for %T", v))
}

// loadObject decodes one record of family f, other than a table
// (loadTables loads those), and adds it to sch.
func loadObject(sch schema.Schema, f family, b []byte) (schema.Schema, error) {
	switch f {
	case familyTypes:
		ut, err := schema.DecodeUserType(b)
		if err != nil {
			return sch, err
		}
		return sch.PutUserType(ut)
	case familyFunctions:
		f, err := schema.DecodeFunction(b)
		if err != nil {
			return sch, err
		}
		return sch.PutFunction(f)
	default:
		ix, err := schema.DecodeIndex(b)
		if err != nil {
			return sch, err
		}
		return sch.PutIndex(ix)
	}
}

// loadFamily adds every object of family f stored in fb (one sub-bucket
// per keyspace) to sch; tables go through loadTables.
func loadFamily(fb *bolt.Bucket, sch schema.Schema, f family) (schema.Schema, error) {
	if f == familyTables {
		return loadTables(fb, sch)
	}
	err := fb.ForEachBucket(func(ksName []byte) error {
		return fb.Bucket(ksName).ForEach(func(k, v []byte) error {
			var err error
			if sch, err = loadObject(sch, f, v); err != nil {
				return fmt.Errorf("%s %s.%s: %w", f, ksName, k, err)
			}
			return nil
		})
	})
	return sch, err
}

// loadBatch is how many decoded tables loadTables hands over at a time.
const loadBatch = 512

// errLoadStopped ends the reading of tables once putting one failed.
var errLoadStopped = errors.New("metadata: load stopped")

// loadTables adds the tables stored in fb to sch, by far the most
// numerous objects: a goroutine reads and decodes them while the caller
// puts them into a schema.TableLoader, which builds each keyspace's table
// map in place instead of copying a path of it per table. The goroutine
// is done with fb's transaction when loadTables returns.
func loadTables(fb *bolt.Bucket, sch schema.Schema) (schema.Schema, error) {
	batches := make(chan []*schema.Table, 2)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(batches)
		batch := make([]*schema.Table, 0, loadBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]*schema.Table, 0, loadBatch)
				return nil
			case <-stop:
				return errLoadStopped
			}
		}
		readErr = fb.ForEachBucket(func(ksName []byte) error {
			return fb.Bucket(ksName).ForEach(func(k, v []byte) error {
				t, err := schema.DecodeTable(v)
				if err != nil {
					return fmt.Errorf("%s %s.%s: %w", familyTables, ksName, k, err)
				}
				if batch = append(batch, t); len(batch) == loadBatch {
					return send()
				}
				return nil
			})
		})
		if readErr == nil && len(batch) > 0 {
			readErr = send()
		}
	}()
	l := sch.LoadTables()
	var putErr error
	for batch := range batches {
		for _, t := range batch {
			if putErr != nil {
				break
			}
			if err := l.Put(t); err != nil {
				putErr = fmt.Errorf("%s %s: %w", familyTables, t.QualifiedName(), err)
				close(stop)
			}
		}
	}
	// batches is closed: the goroutine is done with the transaction.
	if putErr != nil {
		return sch, putErr
	}
	if readErr != nil {
		return sch, readErr
	}
	return l.Schema(), nil
}

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

// storeFile is the name of the store's file in its directory.
const storeFile = "schema.db"

// storeMmapSize is the address space the store maps from the start (not
// memory: only the pages read are resident). bbolt maps more as the file
// grows, and every new mapping copies the transaction's pending nodes out
// of the old one: a snapshot's restore of a million tables writes a file
// of over 100 MB in one transaction, which would map a dozen times.
const storeMmapSize = 1 << 30

// OpenStore opens or creates the store file schema.db in dir.
func OpenStore(dir string) (*Store, error) {
	path := filepath.Join(dir, storeFile)
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 && fi.Size() < 4096 {
		return nil, fmt.Errorf("metadata: schema store %s: file is truncated (%d bytes); move it away to rebuild it from the raft log", path, fi.Size())
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true, InitialMmapSize: storeMmapSize})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrStoreLocked, path)
		}
		return nil, fmt.Errorf("metadata: open schema store %s: %w (move the file away to rebuild it from the raft log)", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([][]byte{bucketMeta, bucketKeyspaces, bucketRequests, bucketHistory}, familyBuckets[:]...) {
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
	m := &ClusterMetadata{Guardrails: guardrails.Defaults()}
	err := s.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		m.Index = getUint64(meta, keyIndex)
		m.Epoch = getUint64(meta, keyEpoch)
		if v := meta.Get(keyGuardrails); v != nil {
			g, err := guardrails.DecodeSettings(v)
			if err != nil {
				return fmt.Errorf("guardrails: %w", err)
			}
			m.Guardrails, m.GuardrailsSet = g, true
		}
		if v := meta.Get(keyKeyspaceGuardrails); v != nil {
			ov, err := guardrails.DecodeOverrides(v)
			if err != nil {
				return fmt.Errorf("keyspace guardrails: %w", err)
			}
			m.KeyspaceGuardrails = ov
		}
		if v := meta.Get(keyHistoryName); v != nil {
			n, err := decodeHistoryName(v)
			if err != nil {
				return err
			}
			m.History = n
		}
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
		for f := range numFamilies {
			if sch, err = loadFamily(tx.Bucket(familyBuckets[f]), sch, f); err != nil {
				break
			}
		}
		m.Schema = sch
		if err != nil {
			return err
		}
		m.Requests, err = loadRequests(tx.Bucket(bucketRequests))
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
	var a arena
	err := s.db.Update(func(tx *bolt.Tx) error {
		kss := tx.Bucket(bucketKeyspaces)
		for _, name := range sortedKeys(b.keyspaces) {
			p := b.keyspaces[name]
			key := []byte(name)
			if p.dropped {
				if err := kss.Delete(key); err != nil {
					return err
				}
				for _, fname := range familyBuckets {
					if fb := tx.Bucket(fname); fb.Bucket(key) != nil {
						if err := fb.DeleteBucket(key); err != nil {
							return fmt.Errorf("drop %s of keyspace %s: %w", fname, name, err)
						}
					}
				}
			}
			if p.keyspace != nil {
				v := a.encode(func(b []byte) []byte { return schema.AppendKeyspace(b, p.keyspace) })
				if err := kss.Put(key, v); err != nil {
					return fmt.Errorf("keyspace %s: %w", name, err)
				}
			}
			for f, objs := range p.objects {
				if len(objs) == 0 {
					continue
				}
				fb, err := tx.Bucket(familyBuckets[f]).CreateBucketIfNotExists(key)
				if err != nil {
					return fmt.Errorf("%s of keyspace %s: %w", family(f), name, err)
				}
				for _, oname := range sortedKeys(objs) {
					v := objs[oname]
					if v == nil {
						err = fb.Delete([]byte(oname))
					} else {
						err = fb.Put(a.key(oname), a.encode(func(b []byte) []byte { return encodeObject(b, v) }))
					}
					if err != nil {
						return fmt.Errorf("%s %s.%s: %w", family(f), name, oname, err)
					}
				}
			}
		}
		reqs := tx.Bucket(bucketRequests)
		for _, id := range sortedKeys(b.requests) {
			rec := b.requests[id]
			var err error
			if rec == nil {
				err = reqs.Delete([]byte(id))
			} else {
				err = reqs.Put(a.key(id), a.encode(func(b []byte) []byte { return AppendRequestRecord(b, *rec) }))
			}
			if err != nil {
				return fmt.Errorf("request %s: %w", schema.QuoteClip(id), err)
			}
		}
		if err := writeHistory(tx, &a, b.records, b.keep); err != nil {
			return err
		}
		return b.writeMeta(tx.Bucket(bucketMeta))
	})
	if err != nil {
		return fmt.Errorf("metadata: write schema store %s: %w", s.path, err)
	}
	return nil
}

// writeMeta puts what b changes in the meta bucket: the guardrails, the
// overrides and the history name when they changed, and always the index
// and epoch the store now covers.
func (b *batch) writeMeta(meta *bolt.Bucket) error {
	if b.guardrails != nil {
		if err := meta.Put(keyGuardrails, guardrails.AppendSettings(nil, *b.guardrails)); err != nil {
			return fmt.Errorf("guardrails: %w", err)
		}
	}
	if b.keyspaceGuardrails != nil {
		if err := meta.Put(keyKeyspaceGuardrails, guardrails.AppendOverrides(nil, *b.keyspaceGuardrails)); err != nil {
			return fmt.Errorf("keyspace guardrails: %w", err)
		}
	}
	if b.history != nil {
		if err := meta.Put(keyHistoryName, appendHistoryName(nil, *b.history)); err != nil {
			return fmt.Errorf("history name: %w", err)
		}
	}
	if err := putUint64(meta, keyIndex, b.index); err != nil {
		return err
	}
	return putUint64(meta, keyEpoch, b.epoch)
}

// sortedKeys returns the keys of m in order. The store puts a bucket's
// keys in this order: bbolt inserts into a node's sorted slice, so puts in
// map order move half the node per key (quadratic in a large batch) where
// puts in order mostly append.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// batch is the set of pending changes, merged so that the last write per key
// wins. A keyspace drop clears what was pending under the keyspace and
// marks its buckets for deletion before later puts are written.
type batch struct {
	keyspaces map[string]*pendingKeyspace
	requests  map[string]*RequestRecord // remembered requests; nil value = forgotten
	// guardrails are the new guardrail settings, nil if unchanged.
	guardrails *guardrails.Settings
	// keyspaceGuardrails are all the new overrides, nil if unchanged.
	keyspaceGuardrails *guardrails.Overrides
	// history is the new history name, nil if unchanged.
	history *HistoryName
	// records are the history records of the epochs applied, in order.
	records []*Record
	// keep is the oldest epoch whose record stays; older ones are pruned.
	keep    uint64
	changes int    // changes merged in, for the metrics
	index   uint64 // log index the batch brings the store to
	epoch   uint64
}

// pendingKeyspace is what a batch does to one keyspace.
type pendingKeyspace struct {
	dropped  bool             // delete the keyspace and its objects first
	keyspace *schema.Keyspace // new keyspace record, nil if unchanged or dropped
	// objects are the new records per family by name; a nil value deletes.
	objects [numFamilies]map[string]any
}

// set records the new value (nil: deletion) of one object.
func (p *pendingKeyspace) set(f family, name string, v any) {
	if p.objects[f] == nil {
		p.objects[f] = map[string]any{}
	}
	p.objects[f][name] = v
}

func newBatch() *batch {
	return &batch{keyspaces: map[string]*pendingKeyspace{}, requests: map[string]*RequestRecord{}}
}

func (b *batch) empty() bool { return b.changes == 0 }

func (b *batch) keyspace(name string) *pendingKeyspace {
	p := b.keyspaces[name]
	if p == nil {
		p = &pendingKeyspace{}
		b.keyspaces[name] = p
	}
	return p
}

// requestChange is a request id remembered (Record set) or forgotten.
type requestChange struct {
	ID     string
	Record *RequestRecord
}

// addRequests merges remembered and forgotten request ids into the batch.
func (b *batch) addRequests(rcs []requestChange) {
	for _, rc := range rcs {
		b.requests[rc.ID] = rc.Record
		b.changes++
	}
}

// addRecords adds the records of applied epochs and the new prune line.
// They do not count as changes: each comes with the schema or guardrail
// change it records.
func (b *batch) addRecords(records []*Record, keep uint64) {
	b.records = append(b.records, records...)
	b.keep = max(b.keep, keep)
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
			p.set(familyTables, c.Table, c.TableValue)
		case schema.OpDropTable:
			p.set(familyTables, c.Table, nil)
		case schema.OpPutType:
			p.set(familyTypes, c.Name, c.TypeValue)
		case schema.OpDropType:
			p.set(familyTypes, c.Name, nil)
		case schema.OpPutIndex:
			p.set(familyIndexes, c.Name, c.IndexValue)
		case schema.OpDropIndex:
			p.set(familyIndexes, c.Name, nil)
		case schema.OpPutFunction:
			p.set(familyFunctions, c.Name, c.FunctionValue)
		case schema.OpDropFunction:
			p.set(familyFunctions, c.Name, nil)
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

// loadRequests reads the remembered requests back in log order.
func loadRequests(b *bolt.Bucket) (Requests, error) {
	type entry struct {
		id  string
		rec RequestRecord
	}
	var all []entry
	err := b.ForEach(func(k, v []byte) error {
		rec, err := DecodeRequestRecord(v)
		if err != nil {
			return fmt.Errorf("request %s: %w", schema.QuoteClip(string(k)), err)
		}
		all = append(all, entry{string(k), rec})
		return nil
	})
	if err != nil {
		return Requests{}, err
	}
	slices.SortFunc(all, func(a, b entry) int { return cmp.Compare(a.rec.Index, b.rec.Index) })
	var r Requests
	for _, e := range all {
		r, _ = r.Remember(e.id, e.rec)
	}
	return r, nil
}

// arena holds encodings that must stay valid until a bbolt commit (bbolt
// keeps references to the values it is given until then). It is only ever
// appended to, so slices handed out earlier stay valid when it grows.
type arena struct{ buf []byte }

// encode appends with appendFn and returns just what it appended.
func (a *arena) encode(appendFn func([]byte) []byte) []byte {
	start := len(a.buf)
	a.buf = appendFn(a.buf)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// key returns the bytes of s in the arena: a bbolt key, which must stay
// valid until the commit like a value, without an allocation of its own.
func (a *arena) key(s string) []byte {
	start := len(a.buf)
	a.buf = append(a.buf, s...)
	return a.buf[start:len(a.buf):len(a.buf)]
}
