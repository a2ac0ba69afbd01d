package metadata

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// DefaultHistoryRetention is how many epochs of history a member keeps by
// default (history_retention_epochs).
const DefaultHistoryRetention = 1_000_000

// DefaultHistoryCache is how many of the newest records a member keeps in
// memory for watchers and at-epoch reads, besides those not yet flushed.
const DefaultHistoryCache = 4096

// ErrHistoryPruned is matched by the errors of reads that reach past the
// oldest epoch kept; errors.As gives a *PrunedError.
var ErrHistoryPruned = errors.New("metadata: history pruned")

// ErrHistoryIncomplete is matched by the errors of reads that reach
// epochs this member has not copied from a peer yet (it was rebuilt from a
// snapshot); another member can answer them.
var ErrHistoryIncomplete = errors.New("metadata: history incomplete")

// PrunedError says which epochs a read asked for that are no longer kept.
type PrunedError struct {
	// From is the epoch the read started after.
	From uint64
	// Oldest is the oldest epoch whose record is kept: history reaches back
	// to the schema at Oldest-1.
	Oldest uint64
	// Retention is history_retention_epochs.
	Retention uint64
}

func (e *PrunedError) Error() string {
	return fmt.Sprintf("the history after epoch %d is no longer kept: the oldest epoch kept is %d (history_retention_epochs is %d), so history and at-epoch reads reach back to epoch %d",
		e.From, e.Oldest, e.Retention, e.Oldest-1)
}

func (e *PrunedError) Is(target error) bool { return target == ErrHistoryPruned }

// IncompleteError says which epochs a member is still copying.
type IncompleteError struct {
	// From and To bound the missing epochs: (From, To].
	From, To uint64
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("this member is copying the history of epochs %d to %d from a peer (it was rebuilt from a snapshot); ask another member or retry", e.From+1, e.To)
}

func (e *IncompleteError) Is(target error) bool { return target == ErrHistoryIncomplete }

// historyLog is the state machine's history: every record kept is in the
// store's history bucket or, when newer than the last flush, in recent
// (which also keeps the newest flushed ones, for watchers). Records are
// kept for consecutive epochs from oldest to the newest applied, except a
// gap a rebuild from a snapshot leaves until a peer's records fill it.
type historyLog struct {
	store     *Store
	retention uint64
	cache     int

	mu sync.RWMutex // guards the fields below
	// recent are the newest records, consecutive and ascending: all the
	// records not flushed yet, and up to cache flushed ones before them.
	recent []*Record
	// flushed is the newest epoch whose record the store holds.
	flushed uint64
	// oldest is the oldest epoch whose record is kept; when no record is
	// kept, the epoch after the newest applied.
	oldest uint64
	// gap is the missing range (gap.from, gap.to]; gap.to == 0: none.
	gap epochRange
}

// epochRange is the epochs (from, to].
type epochRange struct{ from, to uint64 }

func (r epochRange) empty() bool { return r.to <= r.from }

// overlaps reports whether r and o share an epoch.
func (r epochRange) overlaps(o epochRange) bool {
	return !r.empty() && !o.empty() && r.from < o.to && o.from < r.to
}

// newHistoryLog opens the history of store, which covers epoch.
func newHistoryLog(store *Store, epoch uint64, retention uint64, cache int) (*historyLog, error) {
	oldest, gap, err := store.historyBounds()
	if err != nil {
		return nil, err
	}
	if oldest == 0 {
		oldest = epoch + 1
	}
	return &historyLog{store: store, retention: retention, cache: cache, flushed: epoch, oldest: oldest, gap: gap}, nil
}

// add appends the records of newly applied epochs. O(records).
func (h *historyLog) add(records []*Record) {
	if len(records) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.recent) == 0 && h.flushed+1 == h.oldest {
		// Nothing was kept before these records.
		h.oldest = records[0].Epoch
	}
	h.recent = append(h.recent, records...)
}

// pruneBefore is the oldest epoch to keep when the newest one is epoch;
// records before it are deleted at the next flush.
func (h *historyLog) pruneBefore(epoch uint64) uint64 {
	if epoch <= h.retention {
		return 0
	}
	return epoch - h.retention + 1
}

// flushedTo records that the store now holds the records up to epoch and
// none before keep, and trims recent to the cache size.
func (h *historyLog) flushedTo(epoch, keep uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if epoch > h.flushed {
		h.flushed = epoch
	}
	if keep > h.oldest {
		h.oldest = keep
	}
	// Drop flushed records beyond the cache, and pruned ones.
	drop := 0
	for drop < len(h.recent) && h.recent[drop].Epoch <= h.flushed &&
		(len(h.recent)-drop > h.cache || h.recent[drop].Epoch < h.oldest) {
		drop++
	}
	if drop > 0 && drop >= len(h.recent)/2 {
		// Copy, so the dropped records can be collected; readers keep
		// the slices they took.
		h.recent = append([]*Record(nil), h.recent[drop:]...)
	} else if drop > 0 {
		h.recent = h.recent[drop:len(h.recent):len(h.recent)]
	}
}

// historyRead is what a read sees of the history at one moment.
type historyRead struct {
	recent    []*Record
	oldest    uint64
	gap       epochRange
	retention uint64
}

// now returns the history as a read sees it at this moment.
func (h *historyLog) now() historyRead {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return historyRead{recent: h.recent, oldest: h.oldest, gap: h.gap, retention: h.retention}
}

// Oldest returns the oldest epoch whose record is kept.
func (h *historyLog) Oldest() uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.oldest
}

// read returns the records of the epochs in (from, to], oldest first, at
// most max of them when max > 0: the first ones.
func (h *historyLog) read(from, to uint64, max int) ([]*Record, error) {
	if to <= from {
		return nil, nil
	}
	v := h.now()
	if err := v.check(epochRange{from, to}); err != nil {
		return nil, err
	}
	var out []*Record
	memFrom := to + 1 // the first epoch recent has, if it reaches the range
	if len(v.recent) > 0 {
		memFrom = v.recent[0].Epoch
	}
	if from+1 < memFrom {
		n := max
		stored, err := h.store.readHistory(from, min(to, memFrom-1), n)
		if err != nil {
			return nil, err
		}
		if err := v.contiguous(from, stored); err != nil {
			return nil, err
		}
		out = stored
		if max > 0 && len(out) >= max {
			return out[:max], nil
		}
	}
	after := from
	if len(out) > 0 {
		after = out[len(out)-1].Epoch
	}
	// recent ascends: a feed reading the newest epochs starts near its
	// end without a walk of the whole cache.
	i, _ := slices.BinarySearchFunc(v.recent, after+1, func(r *Record, e uint64) int { return cmp.Compare(r.Epoch, e) })
	for _, r := range v.recent[i:] {
		if r.Epoch > to || (max > 0 && len(out) >= max) {
			break
		}
		out = append(out, r)
	}
	return out, nil
}

// encoded returns the records of the epochs in (from, to] encoded (as
// AppendRecord does), oldest first, for a backup: the flushed ones copied
// as the store holds them, without decoding, the newer ones encoded from
// memory. It refuses a range that reaches pruned or missing epochs, as
// read does.
func (h *historyLog) encoded(from, to uint64) ([][]byte, error) {
	if to <= from {
		return nil, nil
	}
	v := h.now()
	if err := v.check(epochRange{from, to}); err != nil {
		return nil, err
	}
	memFrom := to + 1 // the first epoch recent has, if it reaches the range
	if len(v.recent) > 0 {
		memFrom = v.recent[0].Epoch
	}
	var out [][]byte
	want := from + 1
	if want < memFrom {
		err := h.store.eachStoredRecord(from, min(to, memFrom-1), func(epoch uint64, b []byte) (bool, error) {
			if epoch != want {
				return false, &PrunedError{From: from, Oldest: max(v.oldest, epoch), Retention: v.retention}
			}
			out = append(out, bytes.Clone(b))
			want++
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		if end := min(memFrom-1, to); want <= end {
			return nil, fmt.Errorf("metadata: the history of epochs %d to %d is missing from the store (repair the member to rebuild it)", want, end)
		}
	}
	i, _ := slices.BinarySearchFunc(v.recent, want, func(r *Record, e uint64) int { return cmp.Compare(r.Epoch, e) })
	for _, r := range v.recent[i:] {
		if r.Epoch > to {
			break
		}
		out = append(out, AppendRecord(nil, r))
	}
	return out, nil
}

// check refuses a read of r that reaches pruned or missing epochs.
func (v historyRead) check(r epochRange) error {
	if r.from+1 < v.oldest {
		return &PrunedError{From: r.from, Oldest: v.oldest, Retention: v.retention}
	}
	if v.gap.overlaps(r) {
		return &IncompleteError{From: v.gap.from, To: v.gap.to}
	}
	return nil
}

// contiguous checks that stored starts right after from: a prune between
// the state read and the store read removed the epochs asked for otherwise.
func (v historyRead) contiguous(from uint64, stored []*Record) error {
	want := from + 1
	for _, r := range stored {
		if r.Epoch != want {
			return &PrunedError{From: from, Oldest: max(v.oldest, r.Epoch), Retention: v.retention}
		}
		want++
	}
	return nil
}

// walkBack hands fn the records of the epochs in (from, to], newest
// first, until fn returns false. It refuses a range that reaches pruned or
// missing epochs unless stopAtOldest is set; then the walk just ends at the
// oldest record kept or at the gap.
func (h *historyLog) walkBack(from, to uint64, stopAtOldest bool, fn func(*Record) bool) error {
	if to <= from {
		return nil
	}
	v := h.now()
	if stopAtOldest {
		from = max(from, v.oldest-1)
		if v.gap.overlaps(epochRange{from, to}) {
			if to <= v.gap.to {
				return &IncompleteError{From: v.gap.from, To: v.gap.to}
			}
			from = v.gap.to
		}
	} else if err := v.check(epochRange{from, to}); err != nil {
		return err
	}
	want := to // the next epoch fn must see
	stopped, broken := false, false
	visit := func(r *Record) bool {
		if r.Epoch > want {
			return true
		}
		if r.Epoch != want {
			broken = true
			return false
		}
		want--
		if !fn(r) {
			stopped = true
			return false
		}
		return want > from
	}
	going := func() bool { return !stopped && !broken && want > from }
	for i := len(v.recent) - 1; i >= 0 && going(); i-- {
		visit(v.recent[i])
	}
	if going() {
		if err := h.store.readHistoryBack(want, from+1, visit); err != nil {
			return err
		}
	}
	if !stopped && want > from && !stopAtOldest {
		// A prune or a rebuild removed records the state read had.
		return &PrunedError{From: from, Oldest: want + 1, Retention: v.retention}
	}
	return nil
}

// readBack returns the newest records up to epoch to, after filtering by
// keep (nil keeps all), until they hold at least n events, oldest first;
// it stops at the oldest record kept.
func (h *historyLog) readBack(to uint64, n int, keep func(*Record) (*Record, bool)) ([]*Record, error) {
	var back []*Record // newest first
	events := 0
	err := h.walkBack(0, to, true, func(r *Record) bool {
		if keep != nil {
			var ok bool
			if r, ok = keep(r); !ok {
				return true
			}
		}
		back = append(back, r)
		events += len(r.Events)
		return events < n
	})
	return reversed(back), err
}

func reversed(rs []*Record) []*Record {
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return rs
}

// historyState is what a rebuild leaves of the history, to install once
// its transaction committed.
type historyState struct {
	oldest, flushed uint64
	gap             epochRange
}

// replaceTx rewrites the stored history, in the transaction that replaces
// the whole store, for a state replaced by the one at epoch: the empty
// state (epoch 0, a reset) keeps no record; a snapshot's keeps the records
// up to it (and writes those not flushed yet) and marks the epochs it has
// no record of as a gap for a peer to fill. The log replayed afterwards
// adds the records of the epochs after it.
func (h *historyLog) replaceTx(tx *bolt.Tx, a *arena, epoch uint64) (historyState, error) {
	h.mu.RLock()
	recent := h.recent
	h.mu.RUnlock()
	st := historyState{flushed: epoch, oldest: epoch + 1}
	if epoch == 0 {
		if err := tx.DeleteBucket(bucketHistory); err != nil {
			return st, fmt.Errorf("clear history: %w", err)
		}
		_, err := tx.CreateBucket(bucketHistory)
		return st, err
	}
	cut := h.cut(epoch)
	hb := sealed(tx, bucketHistory)
	for _, r := range recent {
		if r.Epoch <= cut {
			if err := hb.put(a, epochKey(r.Epoch), func(b []byte) []byte { return AppendRecord(b, r) }); err != nil {
				return st, fmt.Errorf("history of epoch %d: %w", r.Epoch, err)
			}
		}
	}
	last, err := deleteHistoryAfter(hb.b, cut)
	if err != nil {
		return st, err
	}
	if k, _ := hb.b.Cursor().First(); len(k) == 8 {
		st.oldest = binary.BigEndian.Uint64(k)
	}
	if last < epoch {
		st.gap = epochRange{last, epoch}
	}
	return st, writeGap(sealed(tx, bucketMeta), a, st.gap)
}

// cut is the newest epoch whose record a rebuild to the state at epoch
// keeps: epoch, or the start of the gap there is.
func (h *historyLog) cut(epoch uint64) uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.gap.empty() {
		return epoch
	}
	// One gap at a time: the records after the old one go, a peer sends
	// them again.
	return min(epoch, h.gap.from)
}

// replaced installs the history state of a rebuild that committed.
func (h *historyLog) replaced(st historyState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recent, h.oldest, h.flushed, h.gap = nil, st.oldest, st.flushed, st.gap
}
