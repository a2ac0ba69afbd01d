package metadata

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/boltcheck"
	"github.com/metalog/metalog/internal/clip"
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
// the types they use (schema.Builder.PutFunction takes them in any order).
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
func loadObject(sch *schema.Builder, f family, b []byte) error {
	switch f {
	case familyTypes:
		ut, err := schema.DecodeUserType(b)
		if err != nil {
			return err
		}
		return sch.PutUserType(ut)
	case familyFunctions:
		f, err := schema.DecodeFunction(b)
		if err != nil {
			return err
		}
		return sch.PutFunction(f)
	default:
		ix, err := schema.DecodeIndex(b)
		if err != nil {
			return err
		}
		return sch.PutIndex(ix)
	}
}

// loadFamily adds every object of family f stored in fb (one sub-bucket
// per keyspace) to sch; tables go through loadTables (encoded: see there).
func loadFamily(fb *bolt.Bucket, sch *schema.Builder, f family, p *pacer, encoded bool) error {
	if f == familyTables {
		return loadTables(fb, sch, p, encoded)
	}
	return eachKeyspaceVault(fb, f, p, func(ks []byte, v *vault) error {
		return v.forEach(func(k, p []byte) error {
			if err := loadObject(sch, f, p); err != nil {
				return undecodable(fmt.Sprintf("%s %s.%s", f, ks, k), err)
			}
			return nil
		})
	})
}

// eachKeyspaceVault hands fn each keyspace's bucket of family f, whose
// bucket is fb, paced by p (nil: not paced).
func eachKeyspaceVault(fb *bolt.Bucket, f family, p *pacer, fn func(ks []byte, v *vault) error) error {
	return fb.ForEach(func(ks, raw []byte) error {
		b := fb.Bucket(ks)
		if raw != nil || b == nil {
			return &boltcheck.Error{Kind: DamageRecord, Where: fmt.Sprintf("%s key %s", f, clip.Quote(string(ks))), Detail: "a value where a keyspace's bucket is expected"}
		}
		return fn(ks, inVault(b, familyBuckets[f], ks).paced(p))
	})
}

// loadBatch is how many decoded tables loadTables hands over at a time.
const loadBatch = 512

// errLoadStopped ends the reading of tables once putting one failed.
var errLoadStopped = errors.New("metadata: load stopped")

// decodedTable is a table loadTables decoded, with its stored encoding
// (valid during the transaction).
type decodedTable struct {
	t   *schema.Table
	enc []byte
}

// loadTables adds the tables stored in fb to sch, by far the most
// numerous objects: a goroutine reads and decodes them while the caller
// puts them into sch, whose PutTable builds each keyspace's table map in
// place instead of copying a path of it per table. A schema.TableDecoder
// decodes them, so that the tables of a keyspace share its name (sch must
// hold the keyspaces) and the names and types that repeat. With encoded,
// they are decoded unchecked and go in with PutEncodedTable, their
// digests taken from the stored encodings, for a caller that compares the
// schema's digest with the one the store records (a store snapshot's
// file; see loadReceived). The goroutine is done with fb's transaction
// when loadTables returns.
func loadTables(fb *bolt.Bucket, sch *schema.Builder, p *pacer, encoded bool) error {
	// Made of the schema so far, which the goroutine may read: a Schema
	// does not change.
	td := schema.NewTableDecoder(sch.Schema())
	decode := td.Decode
	if encoded {
		decode = td.DecodeUnchecked
	}
	batches := make(chan []decodedTable, 2)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(batches)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer boltcheck.Recover(&readErr, "")
		batch := make([]decodedTable, 0, loadBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]decodedTable, 0, loadBatch)
				return nil
			case <-stop:
				return errLoadStopped
			}
		}
		readErr = eachKeyspaceVault(fb, familyTables, p, func(ks []byte, v *vault) error {
			return v.forEach(func(k, p []byte) error {
				t, err := decode(p)
				if err != nil {
					return undecodable(fmt.Sprintf("%s %s.%s", familyTables, ks, k), err)
				}
				if batch = append(batch, decodedTable{t, p}); len(batch) == loadBatch {
					return send()
				}
				return nil
			})
		})
		if readErr == nil && len(batch) > 0 {
			readErr = send()
		}
	}()
	var putErr error
	for batch := range batches {
		for _, d := range batch {
			if putErr != nil {
				break
			}
			var err error
			if encoded {
				err = sch.PutEncodedTable(d.t, d.enc)
			} else {
				err = sch.PutTable(d.t)
			}
			if err != nil {
				putErr = undecodable(fmt.Sprintf("%s %s", familyTables, d.t.QualifiedName()), err)
				close(stop)
			}
		}
	}
	// batches is closed: the goroutine is done with the transaction.
	if putErr != nil {
		return putErr
	}
	return readErr
}

// ErrStoreLocked is returned when another process holds the schema store.
var ErrStoreLocked = errors.New("metadata: schema store is locked by another process")

// Store is the materialised schema on disk (bbolt). It is written from
// schema changes only, never by rewriting unchanged entries, and records the
// log index and epoch it covers so a restart replays only the log after it.
// Store is not safe for concurrent use; the StateMachine serialises it.
type Store struct {
	path string
	// mu guards db: a read transaction holds it shared while it begins
	// (view), a write transaction while it runs (update), and install,
	// which swaps in another file, holds it alone.
	mu sync.RWMutex
	db *bolt.DB
	// closing counts the replaced files install is closing: their last
	// read transactions (a scrub's) may still run; Close waits for them.
	closing sync.WaitGroup
}

// view runs fn in a read transaction of the store's file. The file may
// be replaced meanwhile (install): the transaction goes on reading the
// one it began on.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	s.mu.RLock()
	tx, err := s.db.Begin(false)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// update runs fn in a write transaction of the store's file.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.Update(fn)
}

// storeFile is the name of the store's file in its directory.
const storeFile = "schema.db"

// storeMmapSize is the address space the store maps from the start (not
// memory: only the pages read are resident). bbolt maps more as the file
// grows, and every new mapping copies the transaction's pending nodes out
// of the old one: a snapshot's restore of a million tables writes a file
// of over 100 MB in one transaction, which would map a dozen times.
const storeMmapSize = 1 << 30

// OpenStore opens or creates the store file schema.db in dir. An
// existing file's page structure is checked first (boltcheck.Verify), so
// that bbolt never maps a damaged one; a store written before seals is
// sealed in place. A store snapshot's file left beside it by a crash
// (schema.db.restore) is removed. Errors of a damaged file match ErrDamaged.
func OpenStore(dir string) (*Store, error) {
	path := filepath.Join(dir, storeFile)
	// A store snapshot's file that a crash left before it was renamed
	// into place is never the store.
	if err := os.Remove(path + receivedSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("metadata: remove the unfinished restore %s: %w", path+receivedSuffix, err)
	}
	return openStoreFile(path)
}

// openStoreFile opens or creates the store file at path (OpenStore).
func openStoreFile(path string) (*Store, error) {
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	err = guardedRead(path, func() error { return db.Update(initStore) })
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("metadata: init schema store %s: %w", path, withFile(err, path))
	}
	return &Store{path: path, db: db}, nil
}

// openBolt opens or creates the bbolt file at path, for a store,
// checking the page structure of an existing one first (boltcheck.Verify)
// so that bbolt never maps a damaged file.
func openBolt(path string) (*bolt.DB, error) {
	fi, err := os.Stat(path)
	if err == nil && fi.Size() > 0 {
		if _, err := boltcheck.Verify(path); err != nil {
			return nil, fmt.Errorf("metadata: schema store: %w", err)
		}
	}
	var db *bolt.DB
	err = guardedRead(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true, InitialMmapSize: storeMmapSize})
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, bolt.ErrTimeout):
			return nil, fmt.Errorf("%w: %s", ErrStoreLocked, path)
		case errors.Is(err, ErrDamaged):
			return nil, fmt.Errorf("metadata: open schema store: %w", err)
		}
		return nil, fmt.Errorf("metadata: open schema store %s: %w", path, err)
	}
	return db, nil
}

// initStore creates the buckets of a new store and records its format and
// an empty summary, or seals a store written before seals (creating the
// buckets older versions did not have). A sealed store is left as it is:
// a bucket missing there is a damage Load reports.
func initStore(tx *bolt.Tx) error {
	fresh := tx.Bucket(bucketMeta) == nil
	if !fresh {
		if ok, err := sealedFormat(tx); err != nil || ok {
			return err
		}
	}
	for _, b := range storeBuckets() {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if !fresh {
		return upgradeStore(tx)
	}
	var a arena
	meta := sealed(tx, bucketMeta)
	if err := putFormat(meta, &a); err != nil {
		return err
	}
	return putSummary(meta, &a, storeSummary{digest: schema.Schema{}.Digest(), known: true})
}

// storeBuckets are the names of the store's top-level buckets.
func storeBuckets() [][]byte {
	return append([][]byte{bucketMeta, bucketKeyspaces, bucketRequests, bucketHistory}, familyBuckets[:]...)
}

// Close closes the store file, once the files it replaced are closed.
func (s *Store) Close() error {
	s.mu.Lock()
	err := s.db.Close()
	s.mu.Unlock()
	s.closing.Wait()
	return err
}

// Load reads the whole store into a ClusterMetadata, checking every
// seal, and the schema against the digest the summary records. A store
// just sealed by an upgrade gets its digest recorded here. Errors of a
// damaged store match ErrDamaged and name the file.
func (s *Store) Load() (*ClusterMetadata, error) {
	var m *ClusterMetadata
	var sum storeSummary
	err := guardedRead(s.path, func() error {
		return s.view(func(tx *bolt.Tx) (err error) {
			m, sum, err = loadTx(tx, nil)
			return err
		})
	})
	if err == nil {
		err = sum.check(m)
	}
	if err == nil && !sum.known {
		sum.digest, sum.known = m.Schema.Digest(), true
		err = s.update(func(tx *bolt.Tx) error {
			var a arena
			return putSummary(sealed(tx, bucketMeta), &a, sum)
		})
	}
	if err != nil {
		if errors.Is(err, ErrDamaged) {
			return nil, fmt.Errorf("metadata: load schema store: %w", withFile(err, s.path))
		}
		return nil, fmt.Errorf("metadata: load schema store %s: %w", s.path, err)
	}
	return m, nil
}

// check compares the schema of m, read from a store, with the digest
// the store's summary s records, when it records one.
func (s storeSummary) check(m *ClusterMetadata) error {
	if !s.known || m.Schema.Digest() == s.digest {
		return nil
	}
	return &boltcheck.Error{Kind: DamageDigest, Where: "meta key \"summary\"", Detail: fmt.Sprintf(
		"the schema read (%d keyspaces, %d tables) does not match the digest the summary records at log index %d",
		m.Schema.KeyspaceCount(), m.Schema.TableCount(), s.index)}
}

// loadTx reads the store of tx into a ClusterMetadata, with its summary.
// The values of the keyspaces, families and requests are read at the
// pace of p (a scrub; nil: at once).
func loadTx(tx *bolt.Tx, p *pacer) (*ClusterMetadata, storeSummary, error) {
	return loadWith(tx, p, false)
}

// loadWith is loadTx, with the tables put encoded (loadTables) and the
// requests read beside the schema (loadRequestsAside) when encoded is set.
func loadWith(tx *bolt.Tx, p *pacer, encoded bool) (m *ClusterMetadata, sum storeSummary, err error) {
	if encoded {
		aside := loadRequestsAside(tx.DB())
		defer func() {
			r := <-aside
			if err == nil {
				m.Requests, err = r.reqs, r.err
			}
		}()
	}
	m = &ClusterMetadata{Guardrails: guardrails.Defaults()}
	for _, name := range storeBuckets() {
		if tx.Bucket(name) == nil {
			return nil, storeSummary{}, &boltcheck.Error{Kind: DamageRecord, Where: fmt.Sprintf("bucket %q", name), Detail: "the bucket is missing"}
		}
	}
	meta := sealed(tx, bucketMeta)
	if sum, err = readSummary(meta); err != nil {
		return nil, sum, err
	}
	m.Index, m.Epoch = sum.index, sum.epoch
	if err := loadMeta(meta, m); err != nil {
		return nil, sum, err
	}
	var sch schema.Builder
	err = sealed(tx, bucketKeyspaces).paced(p).forEach(func(k, v []byte) error {
		ks, err := schema.DecodeKeyspace(v)
		if err != nil {
			return undecodable(fmt.Sprintf("keyspace %s", clip.Quote(string(k))), err)
		}
		sch.PutKeyspace(ks)
		return nil
	})
	if err != nil {
		return nil, sum, err
	}
	for f := range numFamilies {
		if err = loadFamily(tx.Bucket(familyBuckets[f]), &sch, f, p, encoded); err != nil {
			return nil, sum, err
		}
	}
	m.Schema = sch.Schema()
	if !encoded {
		m.Requests, err = loadRequests(sealed(tx, bucketRequests).paced(p))
	}
	return m, sum, err
}

// requestsLoaded is what loadRequestsAside read.
type requestsLoaded struct {
	reqs Requests
	err  error
}

// loadRequestsAside reads the remembered requests of db in a read
// transaction of its own, on a goroutine, while the caller reads the
// schema: the goroutine sends the result, once, and ends. A missing
// bucket reads as none (the caller's load reports it).
func loadRequestsAside(db *bolt.DB) <-chan requestsLoaded {
	c := make(chan requestsLoaded, 1)
	go func() {
		var r requestsLoaded
		r.err = boltcheck.Guard(db.Path(), func() error {
			return db.View(func(tx *bolt.Tx) (err error) {
				if v := sealed(tx, bucketRequests); v != nil {
					r.reqs, err = loadRequests(v)
				}
				return err
			})
		})
		c <- r
	}()
	return c
}

// loadMeta reads the guardrails, the overrides and the history name.
func loadMeta(meta *vault, m *ClusterMetadata) error {
	if v, err := meta.get(keyGuardrails); err != nil {
		return err
	} else if v != nil {
		g, err := guardrails.DecodeSettings(v)
		if err != nil {
			return undecodable("guardrails", err)
		}
		m.Guardrails, m.GuardrailsSet = g, true
	}
	if v, err := meta.get(keyKeyspaceGuardrails); err != nil {
		return err
	} else if v != nil {
		ov, err := guardrails.DecodeOverrides(v)
		if err != nil {
			return undecodable("keyspace guardrails", err)
		}
		m.KeyspaceGuardrails = ov
	}
	if v, err := meta.get(keyHistoryName); err != nil {
		return err
	} else if v != nil {
		n, err := decodeHistoryName(v)
		if err != nil {
			return undecodable("history name", err)
		}
		m.History = n
	}
	return nil
}

// undecodable is the damage of a record whose seal matched but which does
// not decode (or does not fit the schema read so far).
func undecodable(what string, err error) error {
	return &boltcheck.Error{Kind: DamageRecord, Where: what, Detail: err.Error()}
}

// write applies a merged batch of changes in one durable transaction and
// records that the store now covers the log up to b.index, at b.epoch.
func (s *Store) write(b *batch) error {
	var a arena
	err := s.update(func(tx *bolt.Tx) error {
		for _, name := range sortedKeys(b.keyspaces) {
			if err := b.keyspaces[name].write(tx, &a, name); err != nil {
				return err
			}
		}
		reqs := sealed(tx, bucketRequests)
		for _, id := range sortedKeys(b.requests) {
			rec := b.requests[id]
			var err error
			if rec == nil {
				err = reqs.b.Delete([]byte(id))
			} else {
				err = reqs.put(&a, a.key(id), func(b []byte) []byte { return AppendRequestRecord(b, *rec) })
			}
			if err != nil {
				return fmt.Errorf("request %s: %w", clip.Quote(id), err)
			}
		}
		if err := writeHistory(tx, &a, b.records, b.keep); err != nil {
			return err
		}
		return b.writeMeta(sealed(tx, bucketMeta), &a)
	})
	if err != nil {
		return fmt.Errorf("metadata: write schema store %s: %w", s.path, err)
	}
	return nil
}

// write puts what the batch does to keyspace name: drops its buckets
// first when it was dropped, then puts its new record and objects.
func (p *pendingKeyspace) write(tx *bolt.Tx, a *arena, name string) error {
	key := []byte(name)
	if p.dropped {
		if err := tx.Bucket(bucketKeyspaces).Delete(key); err != nil {
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
		err := sealed(tx, bucketKeyspaces).put(a, key, func(b []byte) []byte { return schema.AppendKeyspace(b, p.keyspace) })
		if err != nil {
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
		v := inVault(fb, familyBuckets[f], key)
		for _, oname := range sortedKeys(objs) {
			obj := objs[oname]
			if obj == nil {
				err = fb.Delete([]byte(oname))
			} else {
				err = v.put(a, a.key(oname), func(b []byte) []byte { return encodeObject(b, obj) })
			}
			if err != nil {
				return fmt.Errorf("%s %s.%s: %w", family(f), name, oname, err)
			}
		}
	}
	return nil
}

// writeMeta puts what b changes in the meta bucket: the guardrails, the
// overrides and the history name when they changed, and always the
// summary of the index, epoch and digest the store now covers.
func (b *batch) writeMeta(meta *vault, a *arena) error {
	if b.guardrails != nil {
		if err := meta.put(a, keyGuardrails, func(dst []byte) []byte { return guardrails.AppendSettings(dst, *b.guardrails) }); err != nil {
			return fmt.Errorf("guardrails: %w", err)
		}
	}
	if b.keyspaceGuardrails != nil {
		if err := meta.put(a, keyKeyspaceGuardrails, func(dst []byte) []byte { return guardrails.AppendOverrides(dst, *b.keyspaceGuardrails) }); err != nil {
			return fmt.Errorf("keyspace guardrails: %w", err)
		}
	}
	if b.history != nil {
		if err := meta.put(a, keyHistoryName, func(dst []byte) []byte { return appendHistoryName(dst, *b.history) }); err != nil {
			return fmt.Errorf("history name: %w", err)
		}
	}
	return putSummary(meta, a, storeSummary{index: b.index, epoch: b.epoch, digest: b.digest, known: true})
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
	// digest is the schema's digest at index.
	digest [32]byte
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
func loadRequests(b *vault) (Requests, error) {
	type entry struct {
		id  string
		rec RequestRecord
	}
	var all []entry
	err := b.forEach(func(k, v []byte) error {
		rec, err := DecodeRequestRecord(v)
		if err != nil {
			return undecodable(fmt.Sprintf("request %s", clip.Quote(string(k))), err)
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
// appended to, so slices handed out earlier stay valid when it grows. It
// fills chunks of arenaChunk bytes and starts a new one when the current
// one is nearly full, so that growing never copies what it holds: a
// catch-up's write of thousands of tables and records would otherwise
// copy the whole arena at every doubling.
type arena struct{ buf []byte }

// Chunks of an arena.
const (
	// arenaChunk is the size of a new chunk.
	arenaChunk = 64 << 10
	// arenaRoom is the free space below which the next encoding starts a
	// new chunk. An encoding larger than what is left grows the chunk it
	// started in, copying at most that chunk.
	arenaRoom = 4 << 10
)

// begin makes room for the next encoding and returns where it starts.
func (a *arena) begin() int {
	if cap(a.buf)-len(a.buf) < arenaRoom {
		a.buf = make([]byte, 0, arenaChunk)
	}
	return len(a.buf)
}

// encode appends with appendFn and returns just what it appended.
func (a *arena) encode(appendFn func([]byte) []byte) []byte {
	start := a.begin()
	a.buf = appendFn(a.buf)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// key returns the bytes of s in the arena: a bbolt key, which must stay
// valid until the commit like a value, without an allocation of its own.
func (a *arena) key(s string) []byte {
	start := a.begin()
	a.buf = append(a.buf, s...)
	return a.buf[start:len(a.buf):len(a.buf)]
}
