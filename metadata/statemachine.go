package metadata

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/clip"
)

// ErrStateMachineClosed is returned by waits on a closed StateMachine.
var ErrStateMachineClosed = errors.New("metadata: state machine closed")

// Entry is one committed log entry handed to Apply.
type Entry struct {
	// Index is the entry's raft log index.
	Index uint64
	// Data is an encoded Command. Apply does not keep it.
	Data []byte
}

// Result is the outcome of applying one Entry.
type Result struct {
	// Outcome is set when the command applied (fully, or partly for a
	// non-atomic command that failed part-way; then Err is set too).
	Outcome Outcome
	// Err is the reason the command (or part of it) did not apply.
	Err error
}

// Config configures a StateMachine.
type Config struct {
	// Dir is the data directory that holds schema.db. Required.
	Dir string
	// Logger receives the state machine's logs; nil discards them.
	Logger *slog.Logger
	// FlushWindow is how long schema changes may wait to be merged into one
	// store transaction (schema_flush_coalescing_window). 0, the zero
	// value, writes them before Apply returns, i.e. before the client's
	// answer. Safe to be large: the raft log covers what is not flushed.
	FlushWindow time.Duration
	// MaxPendingChanges forces a flush when this many changes wait.
	// Default DefaultMaxPendingChanges.
	MaxPendingChanges int
	// Metrics receives the store metrics; nil means unregistered ones.
	Metrics *Metrics
	// MaxSnapshotBytes is the largest snapshot Capture produces, in bytes
	// (max_mutation_size); a warning is logged when a snapshot reaches 75%
	// of it. Default DefaultMaxSnapshotBytes (16 MiB).
	MaxSnapshotBytes int
	// HistoryRetention is how many epochs of history to keep
	// (history_retention_epochs); older records are deleted as new ones
	// are flushed. Default DefaultHistoryRetention.
	HistoryRetention uint64
	// HistoryCache is how many flushed records stay in memory for
	// watchers and at-epoch reads. Default DefaultHistoryCache.
	HistoryCache int
	// OnFlushError, if not nil, is called (from the flushing goroutine)
	// with the error of each schema store write that failed and will be
	// tried again, after it is logged: the member raises its NOSPACE
	// alarm on ENOSPC. It must not block.
	OnFlushError func(error)
	// Expected, if not nil, holds the commands this member prepared
	// (ClusterMetadata.Prepare) and proposed: Apply takes the prepared
	// result of a command that applies on the state it was prepared on,
	// instead of executing it again.
	Expected *Expected
}

func (c *Config) validate() error {
	if c.Dir == "" {
		return errors.New("metadata: config: data dir is required")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.FlushWindow < 0 {
		return fmt.Errorf("metadata: config: flush window must not be negative, got %v", c.FlushWindow)
	}
	if c.MaxPendingChanges < 0 {
		return fmt.Errorf("metadata: config: max pending changes must not be negative, got %d", c.MaxPendingChanges)
	}
	if c.MaxPendingChanges == 0 {
		c.MaxPendingChanges = DefaultMaxPendingChanges
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	if c.HistoryRetention == 0 {
		c.HistoryRetention = DefaultHistoryRetention
	}
	if c.HistoryCache < 0 {
		return fmt.Errorf("metadata: config: history cache must not be negative, got %d", c.HistoryCache)
	}
	if c.HistoryCache == 0 {
		c.HistoryCache = DefaultHistoryCache
	}
	return c.validateSnapshot()
}

// StateMachine applies committed commands in log order and publishes each
// new ClusterMetadata atomically. Apply may be called from one goroutine
// only (the raft loop); Current and WaitEpoch from any.
type StateMachine struct {
	store   *Store
	flusher *flusher
	logger  *slog.Logger
	encoder *snapshotEncoder
	current atomic.Pointer[ClusterMetadata] // what readers see
	// expected is Config.Expected.
	expected *Expected

	// working is the state the next Apply builds on: current, except
	// while a rebuild holds publication (BeginRebuild). It and held are
	// owned by the applying goroutine.
	working *ClusterMetadata
	held    bool

	// digests are the (epoch, digest) pairs published last, for the
	// agreement check; history is the change log (records, retention).
	digests digestRing
	history *historyLog

	mu      sync.Mutex    // guards changed and closed
	changed chan struct{} // closed and replaced on every publish
	closed  bool

	// gapSignal receives (without blocking: it holds one) at a publish
	// that leaves a history gap, so that the goroutine filling gaps sleeps
	// through the publishes of every DDL instead of waking at each.
	gapSignal chan struct{}
}

// Open loads the store in cfg.Dir and returns a state machine positioned at
// the log index the store covers (see Current().Index).
func Open(cfg Config) (*StateMachine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	store, err := OpenStore(cfg.Dir)
	if err != nil {
		return nil, err
	}
	m, err := store.Load()
	if err != nil {
		store.Close()
		return nil, err
	}
	hist, err := newHistoryLog(store, m.Epoch, cfg.HistoryRetention, cfg.HistoryCache)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("metadata: load history of %s: %w", store.path, err)
	}
	sm := &StateMachine{
		store:     store,
		flusher:   newFlusher(store, hist, &cfg),
		logger:    cfg.Logger,
		encoder:   newSnapshotEncoder(cfg),
		changed:   make(chan struct{}),
		gapSignal: make(chan struct{}, 1),
		history:   hist,
		expected:  cfg.Expected,
	}
	sm.working = m
	sm.current.Store(m)
	sm.digests.add(m)
	// What the flusher was last handed: the loaded state (repairStore
	// relies on it matching Current).
	sm.flusher.mu.Lock()
	sm.flusher.pending.index, sm.flusher.pending.epoch, sm.flusher.pending.digest = m.Index, m.Epoch, m.Schema.Digest()
	sm.flusher.mu.Unlock()
	cfg.Logger.Info("schema store loaded", "epoch", m.Epoch, "index", m.Index,
		"keyspaces", m.Schema.KeyspaceCount(), "tables", m.Schema.TableCount())
	return sm, nil
}

// Current returns the latest published metadata. It never blocks.
func (sm *StateMachine) Current() *ClusterMetadata { return sm.current.Load() }

// Apply applies entries in order, publishes the result and hands the
// changes of the whole batch to the store's flusher (which writes them
// before returning when the flush window is 0). It returns one Result per
// entry. An error means the changes could not be made durable with a zero
// window; the caller must not acknowledge them and should stop the node.
func (sm *StateMachine) Apply(entries []Entry) ([]Result, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	cur := sm.working
	results := make([]Result, len(entries))
	var u update
	var reqs []requestChange
	// The debug lines of a batch are built only when they are logged: their
	// arguments cost allocations on every DDL with a warning otherwise.
	debug := sm.logger.Enabled(context.Background(), slog.LevelDebug)
	for i, e := range entries {
		if e.Index <= cur.Index {
			// Already covered by the store (replay after restart).
			results[i].Err = fmt.Errorf("metadata: entry %d already applied (store covers %d)", e.Index, cur.Index)
			continue
		}
		cmd, err := UnmarshalCommand(e.Data)
		if err != nil {
			sm.logger.Error("skipping undecodable log entry", "index", e.Index, "err", err)
			results[i].Err = err
			cur = cur.withIndex(e.Index)
			continue
		}
		if res, ok := cur.Requests.Answer(cmd); ok {
			// A retry of a request that already applied gets the first
			// result; a request reusing another one's id, or with an id too
			// long to remember, is refused. Either way nothing changes, and
			// nothing is remembered.
			results[i] = res
			cur = cur.withIndex(e.Index)
			continue
		}
		next, eff, out, err := sm.expected.execute(cur, cmd, e.Index, e.Data)
		results[i] = Result{Outcome: out, Err: err}
		u.changes = appendShared(u.changes, eff.Changes)
		u.records = appendShared(u.records, eff.Records)
		u.settingsOf(sm.logger, cur, next, cmd, e.Index)
		if debug {
			for _, w := range out.Warnings {
				sm.logger.Debug("guardrail warning", "request_id", clip.String(cmd.RequestID), "epoch", next.Epoch, "guardrail", w.Guardrail, "warning", w.Message)
			}
		}
		cur = next.withIndex(e.Index)
		if cmd.RequestID != "" {
			// cur is not published yet (withIndex copied it if Apply
			// returned the previous state), so it may be changed in place.
			rec := RequestRecord{Index: e.Index, Outcome: withoutTexts(out), Err: err, Fingerprint: cmd.Fingerprint()}
			var evicted string
			cur.Requests, evicted = cur.Requests.Remember(cmd.RequestID, rec)
			reqs = append(reqs, requestChange{ID: cmd.RequestID, Record: &rec})
			if evicted != "" {
				reqs = append(reqs, requestChange{ID: evicted})
			}
		}
		if err != nil && debug {
			sm.logger.Debug("command refused", "request_id", clip.String(cmd.RequestID), "index", e.Index, "epoch", cur.Epoch, "err", err)
		}
	}
	// Readers of the published metadata find the records of its epochs.
	sm.history.add(u.records)
	sm.publish(cur)
	u.reqs, u.index, u.epoch, u.digest, u.keep = reqs, cur.Index, cur.Epoch, cur.Schema.Digest(), sm.history.pruneBefore(cur.Epoch)
	if err := sm.flusher.stage(u); err != nil {
		return nil, err
	}
	return results, nil
}

// settingsOf stages in u the settings next changed from cur, applying
// cmd at index: the guardrails, the per-keyspace overrides, the history
// name; it logs each change, on every member.
func (u *update) settingsOf(logger *slog.Logger, cur, next *ClusterMetadata, cmd Command, index uint64) {
	if next.GuardrailsSet != cur.GuardrailsSet || next.Guardrails != cur.Guardrails {
		g := next.Guardrails
		u.guardrails = &g
		logger.Info("guardrails changed", "request_id", clip.String(cmd.RequestID), "index", index, "epoch", next.Epoch,
			"set", changedSettings(cur.Guardrails, next.Guardrails))
	}
	if next.KeyspaceGuardrails != cur.KeyspaceGuardrails {
		ov := next.KeyspaceGuardrails
		u.keyspaceGuardrails = &ov
		o, _ := ov.Get(cmd.Keyspace)
		logger.Info("keyspace guardrails changed", "request_id", clip.String(cmd.RequestID), "index", index, "epoch", next.Epoch,
			"scope", cmd.Keyspace, "override", o.String())
	}
	if next.History != cur.History {
		h := next.History
		u.history = &h
		logger.Info("history named", "index", index, "epoch", next.Epoch,
			"cluster", fmt.Sprintf("%016x", h.Cluster), "nonce", fmt.Sprintf("%016x", h.Nonce))
	}
}

// changedSettings lists the guardrails that differ between before and
// after, as "name=value" separated by spaces, for the one log line of a
// guardrail change.
func changedSettings(before, after guardrails.Settings) string {
	old := before.Values()
	var parts []string
	for i, v := range after.Values() {
		if v.Value != old[i].Value {
			parts = append(parts, v.Name+"="+v.Value)
		}
	}
	return strings.Join(parts, " ")
}

func (m *ClusterMetadata) withIndex(index uint64) *ClusterMetadata {
	if m.Index == index {
		return m
	}
	c := *m
	c.Index = index
	return &c
}

// publish makes m the state the next Apply builds on and, unless a
// rebuild holds publication, the one readers see.
func (sm *StateMachine) publish(m *ClusterMetadata) {
	sm.working = m
	sm.digests.add(m)
	if sm.held {
		return
	}
	sm.current.Store(m)
	sm.mu.Lock()
	close(sm.changed)
	sm.changed = make(chan struct{})
	sm.mu.Unlock()
	if _, to := sm.HistoryGap(); to != 0 {
		select {
		case sm.gapSignal <- struct{}{}:
		default: // one is pending already
		}
	}
}

// BeginRebuild keeps readers on the metadata published now while the
// state is rebuilt (raftlog.Rebuilder): Restore or Reset, then the replay
// of the log, go on building state that Current does not show, so that
// nobody reads an older epoch or a half-replayed schema. EndRebuild
// publishes the result. Both run on the applying goroutine.
func (sm *StateMachine) BeginRebuild() { sm.held = true }

// EndRebuild publishes the state rebuilt since BeginRebuild.
func (sm *StateMachine) EndRebuild() {
	sm.held = false
	sm.publish(sm.working)
}

// WaitEpoch blocks until the published epoch is at least epoch or ctx ends,
// and returns the metadata it saw.
func (sm *StateMachine) WaitEpoch(ctx context.Context, epoch uint64) (*ClusterMetadata, error) {
	for {
		sm.mu.Lock()
		ch, closed := sm.changed, sm.closed
		sm.mu.Unlock()
		m := sm.current.Load()
		if m.Epoch >= epoch {
			return m, nil
		}
		if closed {
			return m, ErrStateMachineClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return m, fmt.Errorf("waiting for epoch %d (at %d): %w", epoch, m.Epoch, ctx.Err())
		}
	}
}

// Close flushes pending changes synchronously (drain) and closes the
// store. Apply must not be called afterwards.
func (sm *StateMachine) Close() error {
	sm.mu.Lock()
	if sm.closed {
		sm.mu.Unlock()
		return nil
	}
	sm.closed = true
	close(sm.changed)
	sm.changed = make(chan struct{})
	sm.mu.Unlock()
	return errors.Join(sm.flusher.close(), sm.store.Close())
}

// maxRememberedWarnings caps the warnings a remembered request keeps.
const maxRememberedWarnings = 8

// withoutTexts returns out without the statements' source texts, and with
// at most maxRememberedWarnings warnings (the last one saying how many were
// left out): the client that retries has the texts, and a remembered
// request must stay small (snapshots hold up to MaxRememberedRequests of
// them).
func withoutTexts(out Outcome) Outcome {
	if n := len(out.Warnings); n > maxRememberedWarnings {
		w := append([]guardrails.Warning(nil), out.Warnings[:maxRememberedWarnings-1]...)
		out.Warnings = append(w, guardrails.Warning{Guardrail: out.Warnings[n-1].Guardrail,
			Message: fmt.Sprintf("... and %d more guardrail warnings", n-maxRememberedWarnings+1)})
	}
	if len(out.Results) == 0 {
		return out
	}
	results := make([]StatementResult, len(out.Results))
	for i, r := range out.Results {
		r.Text = ""
		results[i] = r
	}
	out.Results = results
	return out
}
