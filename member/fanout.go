package member

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/metalog/metalog/metadata"
)

// fanoutCacheSize is how many batches the fan-out keeps: enough for the
// distinct filters and positions of the feeds of a few epochs.
const fanoutCacheSize = 512

// fanout shares the work of a member's feeds. The feeds woken by one
// publish (StateMachine.Changed, one channel closed per applied epoch)
// that stand at the same epoch with the same filter ask for the same
// batch: it is read from the history and filtered once, and every one of
// them is handed the same WatchMessage, whose Shared encoding the API
// fills once for all of them. A feed that is behind asks for a batch of
// its own, as before.
type fanout struct {
	mu    sync.Mutex // guards byKey, ring and next
	byKey map[batchKey]*sharedBatch
	ring  [fanoutCacheSize]batchKey
	next  int
}

// batchKey names a batch: the filter (Scope standing for Visible) and the
// epochs (from, to] a feed asks for.
type batchKey struct {
	keyspace, table, scope string
	from, to               uint64
}

// sharedBatch is one batch, read once (once) by the first feed that asks.
type sharedBatch struct {
	once   sync.Once
	msg    WatchMessage // Records empty when nothing matched
	last   uint64       // the last epoch the batch covers
	events int
	err    error
}

// batch returns the batch of the epochs after from up to to (at most
// watchBatch of them) that q keeps, reading it once for every feed that
// asks for the same one; a query whose Visible has no Scope reads its
// own. The error is the history's (metadata.ErrHistoryPruned, ...).
func (f *fanout) batch(sm *metadata.StateMachine, q *WatchQuery, from, to uint64) (*sharedBatch, error) {
	if q.Visible != nil && q.Scope == "" {
		b := new(sharedBatch)
		b.read(sm, q, from, to)
		return b, b.err
	}
	k := batchKey{keyspace: q.Keyspace, table: q.Table, scope: q.Scope, from: from, to: to}
	f.mu.Lock()
	b, ok := f.byKey[k]
	if !ok {
		b = new(sharedBatch)
		f.addLocked(k, b)
	}
	f.mu.Unlock()
	b.once.Do(func() { b.read(sm, q, from, to) })
	return b, b.err
}

// addLocked keeps b under k, forgetting the oldest batch kept.
func (f *fanout) addLocked(k batchKey, b *sharedBatch) {
	if f.byKey == nil {
		f.byKey = make(map[batchKey]*sharedBatch, fanoutCacheSize)
	}
	if old := f.ring[f.next]; f.byKey[old] != nil {
		delete(f.byKey, old)
	}
	f.ring[f.next] = k
	f.next = (f.next + 1) % fanoutCacheSize
	f.byKey[k] = b
}

// read fills b with the records of (from, to] that q keeps.
func (b *sharedBatch) read(sm *metadata.StateMachine, q *WatchQuery, from, to uint64) {
	recs, err := sm.History(from, to, watchBatch)
	if err != nil {
		b.err = err
		return
	}
	if len(recs) == 0 {
		b.err = fmt.Errorf("watch: no history after epoch %d although the member is at %d", from, to)
		return
	}
	b.msg = WatchMessage{Type: WatchEvents, Shared: new(SharedEncoding)}
	filter := q.filter()
	for _, r := range recs {
		if fr, ok := r.Filter(filter); ok {
			b.msg.Records = append(b.msg.Records, fr)
			b.events += len(fr.Events)
		}
	}
	b.last = recs[len(recs)-1].Epoch
	b.msg.Epoch = b.last
}

// SharedEncoding is the encoding of a WatchMessage that several feeds are
// sent: the sender that encodes it first keeps the bytes, and the others
// send the same ones. The bytes must not be modified.
type SharedEncoding struct {
	mu  sync.Mutex // serializes encodings
	enc atomic.Pointer[sharedBytes]
}

// sharedBytes is one encoding and what it was made for.
type sharedBytes struct {
	key any
	b   []byte
}

// Bytes returns the encoding made for key (what else the bytes depend
// on, such as the identity a response is stamped with, compared with
// ==), calling encode only when there is none for key yet. On a nil
// SharedEncoding it calls encode.
func (s *SharedEncoding) Bytes(key any, encode func() ([]byte, error)) ([]byte, error) {
	if s == nil {
		return encode()
	}
	if e := s.enc.Load(); e != nil && e.key == key {
		return e.b, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.enc.Load(); e != nil && e.key == key {
		return e.b, nil
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	s.enc.Store(&sharedBytes{key: key, b: b})
	return b, nil
}

// WatchLaggingError ends a feed that was sending at the member's epoch
// and then fell more than Config.WatchMaxLag epochs behind it: a
// consumer that slow cannot share the messages of the feeds that keep
// up. It matches ErrUnavailable, so that client.Watch resumes it from
// Resume, the last epoch it was sent, on the next member (the API's
// reason is WATCH_LAGGING).
type WatchLaggingError struct {
	// Resume is the last epoch the feed covered: the from_epoch to
	// resume with.
	Resume uint64
	// Epoch is the member's epoch when it cut the feed, and MaxLag the
	// bound.
	Epoch, MaxLag uint64
}

// Error says how far behind the feed was and where to resume.
func (e *WatchLaggingError) Error() string {
	return fmt.Sprintf("watch: the feed was %d epochs behind this member (at epoch %d), more than watch_max_lag_epochs %d: "+
		"resume from epoch %d", e.Epoch-e.Resume, e.Epoch, e.MaxLag, e.Resume)
}

// Is matches ErrUnavailable.
func (e *WatchLaggingError) Is(target error) bool { return target == ErrUnavailable }
