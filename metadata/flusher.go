package metadata

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

// DefaultMaxPendingChanges bounds the changes a coalescing window may hold
// before a flush is forced, so memory stays bounded under a burst.
const DefaultMaxPendingChanges = 10000

// flusher coalesces schema changes and writes them to the store: at once
// when the window is 0, otherwise at most one window after the first
// pending change, or as soon as maxPending changes are waiting. With a
// window, its writer goroutine (run) does every write, so the apply loop
// goes on applying while a batch is written and fsynced; it waits only
// when the next batch reaches the bound before the writer is free, so at
// most one batch is being written and one, of about maxPending changes,
// is pending.
type flusher struct {
	store      *Store
	hist       *historyLog
	window     time.Duration
	maxPending int
	metrics    *Metrics
	logger     *slog.Logger
	onError    func(error) // Config.OnFlushError; nil: none

	writeMu sync.Mutex // serialises store writes, so batches land in log order

	// generation is bumped at every rewrite of the whole store (replace,
	// Scrubber.Repair), so a scrub knows whether it read the state the
	// digests it compares with describe.
	generation atomic.Uint64

	mu      sync.Mutex // guards pending and failed
	pending *batch
	failed  error // last write error, nil after a good write

	kick  chan struct{} // a first change is pending (buffered, 1)
	full  chan struct{} // the bound is reached: write now (unbuffered, so a send waits for a free writer)
	taken chan struct{} // the writer took the batch full asked for (unbuffered)
	stop  chan struct{}
	done  chan struct{}
}

// newFlusher returns the flusher of a state machine configured by cfg
// (validated), writing to store and hist.
func newFlusher(store *Store, hist *historyLog, cfg *Config) *flusher {
	f := &flusher{
		store: store, hist: hist, window: cfg.FlushWindow, maxPending: cfg.MaxPendingChanges, metrics: cfg.Metrics,
		logger: cfg.Logger, onError: cfg.OnFlushError,
		pending: newBatch(), kick: make(chan struct{}, 1), full: make(chan struct{}), taken: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if f.window > 0 {
		go f.run()
	} else {
		close(f.done)
	}
	return f
}

// update is what applied entries up to index/epoch change in the store.
type update struct {
	changes    []schema.Change
	reqs       []requestChange
	guardrails *guardrails.Settings // nil: unchanged
	// keyspaceGuardrails are all the overrides, nil: unchanged.
	keyspaceGuardrails *guardrails.Overrides
	// history is the new history name, nil: unchanged.
	history *HistoryName
	records []*Record
	// keep is the oldest epoch whose record stays (0: all).
	keep         uint64
	index, epoch uint64
	// digest is the schema's digest at index.
	digest [32]byte
}

// stage merges an update into the pending batch and flushes when the
// window or the bound says so. With a zero window it returns only once the
// changes are durable.
func (f *flusher) stage(u update) error {
	f.mu.Lock()
	first := f.pending.empty()
	err := f.pending.add(u.changes)
	f.pending.addRequests(u.reqs)
	if u.guardrails != nil {
		f.pending.guardrails = u.guardrails
		f.pending.changes++
	}
	if u.keyspaceGuardrails != nil {
		f.pending.keyspaceGuardrails = u.keyspaceGuardrails
		f.pending.changes++
	}
	if u.history != nil {
		f.pending.history = u.history
		f.pending.changes++
	}
	f.pending.addRecords(u.records, u.keep)
	f.pending.index, f.pending.epoch, f.pending.digest = u.index, u.epoch, u.digest
	n := f.pending.changes
	f.mu.Unlock()
	if err != nil {
		return err
	}
	f.metrics.pending.Set(float64(n))
	switch {
	case n == 0:
		return nil
	case f.window == 0:
		return f.flush()
	case n >= f.maxPending:
		f.handToWriter()
		return nil
	case first:
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// handToWriter asks the writer to write the pending batch now and returns
// once the writer has taken it, so the batch pending afterwards is empty.
// It waits while the writer is busy with the previous batch, which holds
// the apply loop back until memory is released; once the writer has
// stopped (Close) it writes on the caller's goroutine.
func (f *flusher) handToWriter() {
	select {
	case f.full <- struct{}{}:
		<-f.taken
	case <-f.done:
		if err := f.flush(); err != nil {
			f.flushFailed(err)
		}
	}
}

// run flushes one window after each first pending change, and at once
// when the bound is reached, until stopped.
func (f *flusher) run() {
	defer close(f.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-f.stop:
			timer.Stop()
			return
		case <-f.kick:
			timer.Reset(f.window)
		case <-f.full:
			if err := f.flushThen(func() { f.taken <- struct{}{} }); err != nil {
				f.flushFailed(err)
				timer.Reset(f.window)
			}
		case <-timer.C:
			if err := f.flush(); err != nil {
				f.flushFailed(err)
				// Try again one window later.
				timer.Reset(f.window)
			}
		}
	}
}

// flushFailed reports a flush that failed and will be tried again.
func (f *flusher) flushFailed(err error) {
	f.logger.Error("schema flush failed; changes stay pending and the raft log still covers them", "err", err)
	if f.onError != nil {
		f.onError(err)
	}
}

// flush writes whatever is pending in one transaction.
func (f *flusher) flush() error { return f.flushThen(func() {}) }

// flushThen writes whatever is pending in one transaction, calling taken
// once the batch is taken from pending, before it is written.
func (f *flusher) flushThen(taken func()) error {
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	f.mu.Lock()
	b := f.pending
	f.pending = newBatch()
	f.pending.index, f.pending.epoch, f.pending.digest = b.index, b.epoch, b.digest
	f.mu.Unlock()
	taken()
	if b.empty() {
		return nil
	}
	start := time.Now()
	err := f.store.write(b)
	f.metrics.flushDuration.Observe(time.Since(start).Seconds())
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.metrics.flushFailures.Inc()
		b.merge(f.pending)
		f.pending = b
		f.failed = err
		return err
	}
	f.failed = nil
	f.hist.flushedTo(b.epoch, b.keep)
	f.metrics.flushes.Inc()
	f.metrics.flushChanges.Observe(float64(b.changes))
	f.metrics.pending.Set(float64(f.pending.changes))
	return nil
}

// close stops the timer goroutine and flushes synchronously (drain).
func (f *flusher) close() error {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
	return f.flush()
}

// merge overlays the later batch next onto b.
func (b *batch) merge(next *batch) {
	for name, np := range next.keyspaces {
		p := b.keyspace(name)
		if np.dropped {
			*p = *np
			continue
		}
		if np.keyspace != nil {
			p.keyspace = np.keyspace
		}
		for f, objs := range np.objects {
			for name, v := range objs {
				p.set(family(f), name, v)
			}
		}
	}
	for id, rec := range next.requests {
		b.requests[id] = rec
	}
	if next.guardrails != nil {
		b.guardrails = next.guardrails
	}
	if next.keyspaceGuardrails != nil {
		b.keyspaceGuardrails = next.keyspaceGuardrails
	}
	if next.history != nil {
		b.history = next.history
	}
	b.records = append(b.records, next.records...)
	b.keep = max(b.keep, next.keep)
	b.changes += next.changes
	if next.index > b.index {
		b.index, b.epoch, b.digest = next.index, next.epoch, next.digest
	}
}

// Metrics are the schema store's Prometheus metrics.
type Metrics struct {
	flushes       prometheus.Counter
	flushFailures prometheus.Counter
	flushDuration prometheus.Histogram
	flushChanges  prometheus.Histogram
	pending       prometheus.Gauge
	snapshot      snapshotMetrics // see capture.go
	// Rebuilds counts the schema stores moved aside and rebuilt, by
	// the kind of damage found (boltcheck.Error.Kind).
	Rebuilds *prometheus.CounterVec
	// Corruptions counts the damages a scrub of the live store found.
	Corruptions prometheus.Counter
	scrubs      *prometheus.CounterVec // by result: clean, damaged, failed
	lastScrub   prometheus.Gauge       // Unix time of the last scrub that finished
}

// NewMetrics creates the metrics and registers them on reg; a nil reg
// leaves them unregistered.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		flushes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_schema_flushes_total",
			Help: "Transactions written to the schema store.",
		}),
		flushFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_schema_flush_failures_total",
			Help: "Schema store writes that failed (the changes stay pending; the raft log covers them).",
		}),
		flushDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_schema_flush_duration_seconds",
			Help:    "Time to write and fsync one schema store transaction.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		flushChanges: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "metalog_schema_flush_changes",
			Help:    "Schema changes merged into one schema store transaction.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 9),
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metalog_schema_flush_pending_changes",
			Help: "Schema changes applied but not yet written to the schema store.",
		}),
		snapshot: newSnapshotMetrics(),
		Rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metalog_store_rebuilds_total",
			Help: "Schema stores found damaged, moved aside and rebuilt, by the kind of damage (pages, checksum, record, digest, read).",
		}, []string{"reason"}),
		Corruptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "metalog_store_corruptions_total",
			Help: "Damages a scrub of the live schema store found (a value that does not match its checksum or a schema that does not match the digest of its index).",
		}),
		scrubs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metalog_store_scrubs_total",
			Help: "Scrubs of the live schema store, by result: clean, damaged (a damage found), failed (not finished: stopped, or the store closed).",
		}, []string{"result"}),
		lastScrub: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "metalog_store_last_scrub_timestamp_seconds",
			Help: "Unix time at which the last scrub of the live schema store finished (clean or damaged); 0 before the first.",
		}),
	}
	for _, r := range []string{"clean", "damaged", "failed"} {
		m.scrubs.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.flushes, m.flushFailures, m.flushDuration, m.flushChanges, m.pending, m.Rebuilds, m.Corruptions, m.scrubs, m.lastScrub)
		reg.MustRegister(m.snapshot.collectors()...)
	}
	return m
}
