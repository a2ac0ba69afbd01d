package metadata

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

// DefaultMaxSnapshotBytes is the default max_mutation_size, the largest
// snapshot Capture produces: 16 MiB.
const DefaultMaxSnapshotBytes = 16 << 20

// ErrCaptureIndex is returned by a capture's encode function when the state
// machine had already applied entries past the index asked for, so the
// metadata at that index is gone.
var ErrCaptureIndex = errors.New("metadata: state machine is past the snapshot index")

// ErrSnapshotIndex is returned by Restore for a snapshot that covers
// another log index than the one it is restored at.
var ErrSnapshotIndex = errors.New("metadata: snapshot index mismatch")

func (c *Config) validateSnapshot() error {
	if c.MaxSnapshotBytes < 0 {
		return fmt.Errorf("metadata: config: max snapshot bytes (max_mutation_size) must not be negative, got %d", c.MaxSnapshotBytes)
	}
	if c.MaxSnapshotBytes == 0 {
		c.MaxSnapshotBytes = DefaultMaxSnapshotBytes
	}
	return nil
}

// snapshotMetrics are the snapshot part of Metrics.
type snapshotMetrics struct {
	size     prometheus.Gauge
	max      prometheus.Gauge
	warnings prometheus.Counter
	duration prometheus.Histogram
}

func newSnapshotMetrics() snapshotMetrics {
	return snapshotMetrics{
		size: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metalog_snapshot_size_bytes",
			Help: "Size of the last encoded metadata snapshot (also when it was refused as too large).",
		}),
		max: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metalog_snapshot_max_bytes",
			Help: "Largest snapshot allowed (max_mutation_size); larger ones are refused.",
		}),
		warnings: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_snapshot_size_warnings_total",
			Help: "Times the snapshot size rose to 75% of max_mutation_size.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_snapshot_duration_seconds",
			Help:    "Time to encode one metadata snapshot.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}),
	}
}

func (m *snapshotMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.size, m.max, m.warnings, m.duration}
}

// snapshotEncoder turns captured metadata into snapshot bytes, a store
// snapshot (storesnap.go), and applies the size guard (max_mutation_size)
// to what is sent.
type snapshotEncoder struct {
	metrics *snapshotMetrics
	logger  *slog.Logger

	mu    sync.Mutex // guards guard
	guard *snapshot.Guard

	lastSize  atomic.Int64 // size of the last snapshot, to size the next buffer
	lastImage atomic.Int64 // size of the last snapshot's store file, likewise
}

func newSnapshotEncoder(cfg Config) *snapshotEncoder {
	cfg.Metrics.snapshot.max.Set(float64(cfg.MaxSnapshotBytes))
	return &snapshotEncoder{metrics: &cfg.Metrics.snapshot, logger: cfg.Logger, guard: snapshot.NewGuard(cfg.MaxSnapshotBytes)}
}

// Capture takes the metadata for a snapshot at log index index and returns
// the function that encodes it. Call it on the raft goroutine right after
// Apply returned for the entries up to index: it only takes the applied
// state (Current(), except during a rebuild, see BeginRebuild) and
// allocates the closure, so it does not hold up the raft loop.
//
// The applied state's Index must be at most index. It is below index when the
// entries after it were not commands handed to Apply (configuration
// changes, empty entries), which leave the metadata as it is; the snapshot
// records index either way. If Apply has already gone past index, the
// encode function returns an error matching ErrCaptureIndex.
//
// The encode function may run on any goroutine while Apply goes on, since
// it reads only the immutable state Capture took; raftlog runs one at a
// time (concurrent runs are safe but serialise on the size guard). It
// walks the whole schema and returns the snapshot bytes, which the caller
// owns: a store snapshot (snapshot.EncodeStore) of a schema store file
// holding exactly the captured state at index (storeImage), without the
// history, which each member keeps its own of. It never reads the store's
// file, which lags the applied state by the flush window. Over Config.MaxSnapshotBytes it returns no bytes and an error
// matching snapshot.ErrTooLarge that names the size and the limit; on the
// way up past 75% of the limit it logs one warning per crossing. Counting
// and reporting a snapshot that cannot be stored is the caller's job.
func (sm *StateMachine) Capture(index uint64) func() ([]byte, error) {
	m := sm.working
	if m.Index > index {
		err := fmt.Errorf("%w: snapshot asked for index %d, state machine applied up to %d", ErrCaptureIndex, index, m.Index)
		return func() ([]byte, error) { return nil, err }
	}
	return func() ([]byte, error) { return sm.encoder.encode(m, index) }
}

// limit is the largest snapshot allowed, in bytes (0: none).
func (s *snapshotEncoder) limit() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.guard.Max()
}

// encode encodes m as the store snapshot at index (storeImage,
// snapshot.EncodeStore) and checks its size.
func (s *snapshotEncoder) encode(m *ClusterMetadata, index uint64) ([]byte, error) {
	start := time.Now()
	// Sized from the last snapshot, so a large one grows its buffers once.
	last := s.lastImage.Load()
	image, err := storeImage(m, index, int(last+last/8+4096))
	if err != nil {
		return nil, fmt.Errorf("metadata: snapshot at index %d (epoch %d): %w", index, m.Epoch, err)
	}
	s.lastImage.Store(int64(len(image)))
	data := snapshot.EncodeStore(make([]byte, 0, s.lastSize.Load()+s.lastSize.Load()/8+4096), index, m.Epoch, image)
	s.metrics.duration.Observe(time.Since(start).Seconds())
	size := len(data)
	s.lastSize.Store(int64(size))
	s.metrics.size.Set(float64(size))

	s.mu.Lock()
	warn, err := s.guard.Check(size)
	max := s.guard.Max()
	s.mu.Unlock()
	if warn {
		s.metrics.warnings.Inc()
		s.logger.Warn("metadata snapshot passed 75% of max_mutation_size; raise max_mutation_size or drop unused tables before snapshots are refused",
			"size", size, "limit", max, "index", index, "epoch", m.Epoch,
			"keyspaces", m.Schema.KeyspaceCount(), "tables", m.Schema.TableCount())
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: snapshot at index %d (epoch %d): %w", index, m.Epoch, err)
	}
	return data, nil
}

// snapshotContents is what a snapshot of m at log index index holds.
func snapshotContents(m *ClusterMetadata, index uint64) snapshot.Contents {
	c := snapshot.Contents{Epoch: m.Epoch, Index: index, Schema: m.Schema, Requests: snapshotRequests(m.Requests)}
	if m.GuardrailsSet {
		c.Sections = []snapshot.Section{{Tag: snapshot.SectionGuardrails, Data: guardrails.AppendSettings(nil, m.Guardrails)}}
	}
	if m.KeyspaceGuardrails.Len() > 0 {
		c.Sections = append(c.Sections, snapshot.Section{Tag: snapshot.SectionKeyspaceGuardrails, Data: guardrails.AppendOverrides(nil, m.KeyspaceGuardrails)})
	}
	if m.History.Nonce != 0 {
		c.Sections = append(c.Sections, snapshot.Section{Tag: snapshot.SectionHistoryName, Data: appendHistoryName(nil, m.History)})
	}
	return c
}

// snapshotRequests encodes the remembered requests, oldest first. The
// records share one buffer (only ever appended to, so earlier records stay
// valid when it grows).
func snapshotRequests(r Requests) []snapshot.Request {
	ids := r.IDs()
	if len(ids) == 0 {
		return nil
	}
	out := make([]snapshot.Request, len(ids))
	var a arena
	for i, id := range ids {
		rec, ok := r.Get(id)
		if !ok {
			panic(fmt.Sprintf("metadata: request %q is in the order list but not remembered", id))
		}
		out[i] = snapshot.Request{ID: id, Record: a.encode(func(b []byte) []byte { return AppendRequestRecord(b, rec) })}
	}
	return out
}

// Restore replaces the state machine's metadata with the snapshot data
// taken at log index index (raft's snapshot metadata index).
//
// A store snapshot (snapshot.IsStore, what Capture takes) is installed as
// the store (restoreStore): its file is written beside schema.db as
// received, synced, checked (the snapshot's checksum, the file's pages,
// its format, the index and epoch it records, every seal, the schema's
// digest), loaded, given this member's history up to the snapshot's
// epoch, and renamed into place. The limit on snapshots
// (Config.MaxSnapshotBytes) applies to it as to the ones Capture takes.
//
// A record stream (snapshot.Encode, the format of members before store
// snapshots) is restored as it always was. It rewrites
// the schema store completely in one synchronous transaction (every bucket
// cleared, every object, request and the index and epoch written), drops
// the changes pending in the flusher, which the snapshot supersedes, and
// publishes the new metadata. The objects and requests go into the store
// as the snapshot holds them (snapshot.Records: the store keeps the same
// encoding), the requests decoded on the way, while another goroutine
// decodes and checks the rest of the snapshot (snapshot.Decode); the
// transaction commits only once the decode has succeeded. A corrupt
// snapshot, or one taken at another index, returns the decode's error and
// changes nothing; so does a failed store write: the store, the pending
// changes and the published metadata stay as they were.
//
// Like Apply it must be called on the raft goroutine, never concurrently
// with Apply. It walks the whole snapshot twice, once on each goroutine,
// and returns only after the decoding goroutine has ended.
func (sm *StateMachine) Restore(index uint64, data []byte) error {
	if snapshot.IsStore(data) {
		return restoreStore(sm, index, data)
	}
	dec := startDecode(data, index)
	defer dec.wait()
	var reqs Requests
	m, err := sm.replaceFrom(snapshotObjects(data, &reqs), func() (*ClusterMetadata, error) {
		m, err := dec.wait()
		if err != nil {
			return nil, err
		}
		m.Requests = reqs
		return m, nil
	})
	if err != nil {
		return fmt.Errorf("metadata: restore snapshot at index %d: %w", index, err)
	}
	// The digests remembered before belong to the replaced state.
	sm.digests.reset()
	sm.publish(m)
	sm.logger.Info("restored metadata snapshot", "index", index, "epoch", m.Epoch,
		"keyspaces", m.Schema.KeyspaceCount(), "tables", m.Schema.TableCount(), "requests", m.Requests.Len(), "bytes", len(data))
	return nil
}

// snapshotDecode is a snapshot being decoded into metadata on its own
// goroutine, which ends by itself; wait returns its result.
type snapshotDecode struct {
	done chan struct{} // closed when m and err are set
	m    *ClusterMetadata
	err  error
}

// startDecode starts decoding snapshot data taken at log index index.
func startDecode(data []byte, index uint64) *snapshotDecode {
	d := &snapshotDecode{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.m, d.err = decodeSnapshot(data, index)
	}()
	return d
}

// wait waits for the decode to end and returns its result; it may be
// called any number of times.
func (d *snapshotDecode) wait() (*ClusterMetadata, error) {
	<-d.done
	return d.m, d.err
}

// decodeSnapshot decodes and checks snapshot data taken at log index
// index into the metadata it holds but the requests, which Restore takes
// from the store write (snapshotObjects).
func decodeSnapshot(data []byte, index uint64) (*ClusterMetadata, error) {
	c, err := snapshot.Decode(data)
	if err != nil {
		return nil, err
	}
	if c.Index != index {
		return nil, fmt.Errorf("%w: snapshot covers index %d, restoring at %d", ErrSnapshotIndex, c.Index, index)
	}
	return metadataWithoutRequests(c, index)
}

// metadataOf is the metadata a decoded snapshot holds, at log index
// index.
func metadataOf(c *snapshot.Contents, index uint64) (*ClusterMetadata, error) {
	m, err := metadataWithoutRequests(c, index)
	if err != nil {
		return nil, err
	}
	for _, r := range c.Requests {
		if m.Requests, _, err = rememberRecord(m.Requests, r.ID, r.Record); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// rememberRecord decodes the request record b of request id and remembers
// it in reqs, returning the id that made way for it, if any.
func rememberRecord(reqs Requests, id string, b []byte) (Requests, string, error) {
	rec, err := DecodeRequestRecord(b)
	if err != nil {
		return reqs, "", fmt.Errorf("request %s: %w", clip.Quote(id), err)
	}
	reqs, evicted := reqs.Remember(id, rec)
	return reqs, evicted, nil
}

// metadataWithoutRequests is the metadata a decoded snapshot holds, at log
// index index, without its remembered requests.
func metadataWithoutRequests(c *snapshot.Contents, index uint64) (*ClusterMetadata, error) {
	m := &ClusterMetadata{Epoch: c.Epoch, Index: index, Schema: c.Schema, Guardrails: guardrails.Defaults()}
	for _, sec := range c.Sections {
		if sec.Tag == snapshot.SectionGuardrails {
			g, err := guardrails.DecodeSettings(sec.Data)
			if err != nil {
				return nil, fmt.Errorf("guardrails: %w", err)
			}
			m.Guardrails, m.GuardrailsSet = g, true
		}
		if sec.Tag == snapshot.SectionKeyspaceGuardrails {
			ov, err := guardrails.DecodeOverrides(sec.Data)
			if err != nil {
				return nil, fmt.Errorf("keyspace guardrails: %w", err)
			}
			m.KeyspaceGuardrails = ov
		}
		if sec.Tag == snapshot.SectionHistoryName {
			n, err := decodeHistoryName(sec.Data)
			if err != nil {
				return nil, err
			}
			m.History = n
		}
	}
	return m, nil
}

// replace rewrites the store with write while no flush runs, and on
// success drops whatever was pending: it is older than the metadata write
// returns.
func (f *flusher) replace(write func() (*ClusterMetadata, error)) (*ClusterMetadata, error) {
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	start := time.Now()
	m, err := write()
	f.metrics.flushDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		f.metrics.flushFailures.Inc()
		return nil, err
	}
	f.metrics.flushes.Inc()
	f.generation.Add(1)
	f.mu.Lock()
	f.pending = newBatch()
	f.pending.index, f.pending.epoch, f.pending.digest = m.Index, m.Epoch, m.Schema.Digest()
	f.failed = nil
	f.mu.Unlock()
	f.metrics.pending.Set(0)
	return m, nil
}

// replace rewrites the store to hold exactly m, and the history for it,
// while no flush runs.
func (sm *StateMachine) replace(m *ClusterMetadata) error {
	_, err := sm.replaceFrom(metadataObjects(m), func() (*ClusterMetadata, error) { return m, nil })
	return err
}

// replaceFrom rewrites the store to hold the objects objects puts and the
// metadata decoded returns, and the history for it
// (historyLog.replaceTx), while no flush runs (Store.replaceAll). It
// returns that metadata.
func (sm *StateMachine) replaceFrom(objects objectWriter, decoded func() (*ClusterMetadata, error)) (*ClusterMetadata, error) {
	var st historyState
	m, err := sm.flusher.replace(func() (*ClusterMetadata, error) {
		return sm.store.replaceAll(objects, decoded, func(tx *bolt.Tx, a *arena, m *ClusterMetadata) (err error) {
			st, err = sm.history.replaceTx(tx, a, m.Epoch)
			return err
		})
	})
	if err == nil {
		sm.history.replaced(st)
	}
	return m, err
}

// objectWriter puts every keyspace, schema object and remembered request
// into the cleared buckets of a store in tx. Values it puts must stay valid until the
// commit; a is an append-only arena for them.
type objectWriter func(tx *bolt.Tx, a *arena) error

// replaceAll rewrites the store in one durable transaction: it clears
// every bucket and puts the objects and requests with objects, then takes
// the metadata from decoded (which may still be running, e.g. decoding a
// snapshot on another goroutine), writes its guardrails, index and epoch,
// and runs history last. If decoded fails the transaction rolls back and
// its error is returned as is; if decoded succeeds but the writes fail,
// the store's error. It returns the metadata.
func (s *Store) replaceAll(objects objectWriter, decoded func() (*ClusterMetadata, error), history func(*bolt.Tx, *arena, *ClusterMetadata) error) (*ClusterMetadata, error) {
	// Values must stay valid until the commit: an append-only arena, as in
	// write.
	var a arena
	var m *ClusterMetadata
	var decodeErr error
	err := s.update(func(tx *bolt.Tx) error {
		err := clearStore(tx)
		if err == nil {
			err = objects(tx, &a)
		}
		// Always wait: the transaction must not commit before the
		// metadata is known good.
		if m, decodeErr = decoded(); decodeErr != nil {
			return decodeErr
		}
		if err != nil {
			return err
		}
		return putMetadata(tx, &a, m, history)
	})
	if decodeErr != nil {
		return nil, decodeErr
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: rewrite schema store %s: %w", s.path, err)
	}
	return m, nil
}

// clearStore replaces every bucket of the store but the history with an
// empty one.
func clearStore(tx *bolt.Tx) error {
	for _, name := range append([][]byte{bucketMeta, bucketKeyspaces, bucketRequests}, familyBuckets[:]...) {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return fmt.Errorf("clear bucket %s: %w", name, err)
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// metadataObjects puts the keyspaces, objects and requests of m, encoding
// each. It walks all of m.
func metadataObjects(m *ClusterMetadata) objectWriter {
	return func(tx *bolt.Tx, a *arena) error {
		kss := sealed(tx, bucketKeyspaces)
		for _, k := range m.Schema.Keyspaces() {
			key := []byte(k.Name)
			if err := kss.put(a, key, func(b []byte) []byte { return schema.AppendKeyspace(b, k) }); err != nil {
				return fmt.Errorf("keyspace %s: %w", k.Name, err)
			}
			for f := range numFamilies {
				list := familyObjects(k, family(f))
				if len(list) == 0 {
					continue
				}
				fb, err := createFamilyBucket(tx, family(f), key)
				if err != nil {
					return err
				}
				for _, v := range list {
					name := objectName(v)
					if err := fb.put(a, a.key(name), func(b []byte) []byte { return encodeObject(b, v) }); err != nil {
						return fmt.Errorf("%s %s.%s: %w", family(f), k.Name, name, err)
					}
				}
			}
		}
		reqs := sealed(tx, bucketRequests)
		for _, id := range m.Requests.IDs() {
			rec, _ := m.Requests.Get(id)
			if err := reqs.put(a, a.key(id), func(b []byte) []byte { return AppendRequestRecord(b, rec) }); err != nil {
				return fmt.Errorf("request %s: %w", clip.Quote(id), err)
			}
		}
		return nil
	}
}

// createFamilyBucket creates the bucket of family f for keyspace ks, to be
// filled in name order.
func createFamilyBucket(tx *bolt.Tx, f family, ks []byte) (*vault, error) {
	fb, err := tx.Bucket(familyBuckets[f]).CreateBucket(ks)
	if err != nil {
		return nil, fmt.Errorf("%s of keyspace %s: %w", f, ks, err)
	}
	// Names arrive sorted: fill pages completely instead of splitting
	// them in half.
	fb.FillPercent = 1.0
	return inVault(fb, familyBuckets[f], ks), nil
}

// recordFamilies are the families of the snapshot's object records.
var recordFamilies = map[snapshot.RecordKind]family{
	snapshot.RecordType:     familyTypes,
	snapshot.RecordTable:    familyTables,
	snapshot.RecordIndex:    familyIndexes,
	snapshot.RecordFunction: familyFunctions,
}

// snapshotObjects puts the keyspace, object and request records of
// snapshot data as the snapshot holds them (snapshot.Records), without
// re-encoding them: the store keeps the same encoding. It decodes only
// the requests, into *reqs, forgetting from the store as Remember forgets.
// Nothing here checks the objects; the caller commits only once
// snapshot.Decode has accepted data. The puts alias data, which must stay
// unchanged until the commit.
func snapshotObjects(data []byte, reqs *Requests) objectWriter {
	return func(tx *bolt.Tx, a *arena) error {
		kss, rb := sealed(tx, bucketKeyspaces), sealed(tx, bucketRequests)
		var fb *vault // the bucket of the last record's family and keyspace
		var last snapshot.Record
		return snapshot.Records(data, func(r snapshot.Record) error {
			switch r.Kind {
			case snapshot.RecordKeyspace:
				if err := kss.putBytes(a, r.Name, r.Data); err != nil {
					return fmt.Errorf("keyspace %s: %w", r.Name, err)
				}
				return nil
			case snapshot.RecordRequest:
				return putRequestRecord(rb, a, reqs, r)
			}
			f := recordFamilies[r.Kind]
			if fb == nil || r.Kind != last.Kind || !bytes.Equal(r.Keyspace, last.Keyspace) {
				var err error
				if fb, err = createFamilyBucket(tx, f, r.Keyspace); err != nil {
					return err
				}
			}
			last = r
			if err := fb.putBytes(a, r.Name, r.Data); err != nil {
				return fmt.Errorf("%s %s.%s: %w", f, r.Keyspace, r.Name, err)
			}
			return nil
		})
	}
}

// putRequestRecord puts the snapshot's record r of a remembered request
// into the requests bucket rb as it is and remembers it in *reqs; the
// request it makes way for leaves both.
func putRequestRecord(rb *vault, a *arena, reqs *Requests, r snapshot.Record) error {
	id := string(r.Name)
	var evicted string
	var err error
	if *reqs, evicted, err = rememberRecord(*reqs, id, r.Data); err != nil {
		return err
	}
	if err := rb.putBytes(a, r.Name, r.Data); err != nil {
		return fmt.Errorf("request %s: %w", clip.Quote(id), err)
	}
	if evicted != "" {
		if err := rb.b.Delete([]byte(evicted)); err != nil {
			return fmt.Errorf("request %s: %w", clip.Quote(evicted), err)
		}
	}
	return nil
}

// putMetadata puts m's guardrails, history name, index and epoch into the cleared
// store, then runs history.
func putMetadata(tx *bolt.Tx, a *arena, m *ClusterMetadata, history func(*bolt.Tx, *arena, *ClusterMetadata) error) error {
	meta := sealed(tx, bucketMeta)
	if err := putFormat(meta, a); err != nil {
		return err
	}
	if m.GuardrailsSet {
		if err := meta.put(a, keyGuardrails, func(b []byte) []byte { return guardrails.AppendSettings(b, m.Guardrails) }); err != nil {
			return fmt.Errorf("guardrails: %w", err)
		}
	}
	if m.KeyspaceGuardrails.Len() > 0 {
		if err := meta.put(a, keyKeyspaceGuardrails, func(b []byte) []byte { return guardrails.AppendOverrides(b, m.KeyspaceGuardrails) }); err != nil {
			return fmt.Errorf("keyspace guardrails: %w", err)
		}
	}
	if m.History.Nonce != 0 {
		if err := meta.put(a, keyHistoryName, func(b []byte) []byte { return appendHistoryName(b, m.History) }); err != nil {
			return fmt.Errorf("history name: %w", err)
		}
	}
	if err := putSummary(meta, a, storeSummary{index: m.Index, epoch: m.Epoch, digest: m.Schema.Digest(), known: true}); err != nil {
		return err
	}
	return history(tx, a, m)
}

// familyObjects returns the objects of family f in keyspace k, in store
// key order. It walks all of them.
func familyObjects(k *schema.Keyspace, f family) []any {
	var objs []any
	switch f {
	case familyTables:
		for t := range schema.TablesFrom(k, "") {
			objs = append(objs, t)
		}
		return objs // in name order already
	case familyTypes:
		for _, ut := range k.UserTypes() {
			objs = append(objs, ut)
		}
	case familyIndexes:
		for _, ix := range k.Indexes() {
			objs = append(objs, ix)
		}
	case familyFunctions:
		for _, fn := range k.Functions() {
			objs = append(objs, fn)
		}
	}
	slices.SortFunc(objs, func(a, b any) int { return cmp.Compare(objectName(a), objectName(b)) })
	return objs
}

// objectName is the store key of a table, user type, index or function
// (its signature).
func objectName(v any) string {
	switch v := v.(type) {
	case *schema.Table:
		return v.Name
	case *schema.UserType:
		return v.Name
	case *schema.Index:
		return v.Name
	case *schema.Function:
		return v.Signature()
	}
	panic(fmt.Sprintf("metadata: no store key for %T", v))
}
