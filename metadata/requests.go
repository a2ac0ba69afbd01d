package metadata

import (
	"encoding/binary"
	"slices"
	"sync"

	"github.com/benbjohnson/immutable"
)

// MaxRememberedRequests is how many of the most recent request ids the
// cluster remembers for exactly-once retries. It is a constant, not a
// setting, because every node must evict the same ids at the same index.
const MaxRememberedRequests = 10000

// RequestRecord is the remembered result of a command that carried a
// request id.
type RequestRecord struct {
	// Index is the log index the command applied at.
	Index uint64
	// Outcome is what it did.
	Outcome Outcome
	// Err is why it (or part of it) did not apply; nil on success.
	Err error
	// Fingerprint is the command's (Command.Fingerprint), which a retry
	// must match; zero (unknown) in records written before fingerprints
	// existed.
	Fingerprint Fingerprint
}

// Requests remembers the results of the most recent commands that carried
// a request id, so that a retry is answered with the first result instead
// of applying twice. Like ClusterMetadata it is immutable; Remember returns
// a new value sharing structure with the old one. The zero value is empty.
type Requests struct {
	byID *immutable.Map[string, RequestRecord]
	// order is the ids oldest first, for eviction: a window of an array
	// that the values before and after this one share (see orderArray).
	order []string
	arr   *orderArray // the array order is a window of; nil when empty
	bytes int64       // encodedSize of every remembered record
}

// orderArray is the array that the order windows of a chain of Requests
// share. Remembering an id at the end of the latest window writes the next
// element in place, past the end of every other window, so earlier values
// (which readers may hold) never see it; an older value remembering again
// copies its window instead. Evicting moves a window's start. So
// Remember allocates nothing for the order, except a new array, twice the
// window, once the old one is full: amortized one copied id per id.
type orderArray struct {
	size int // the array's capacity
	used int // elements of the array some window has written
}

// appendOrder returns the order with id appended and the array it is a
// window of.
func (r Requests) appendOrder(id string) ([]string, *orderArray) {
	n := len(r.order)
	if r.arr != nil && n < cap(r.order) && r.arr.size-cap(r.order)+n == r.arr.used {
		r.arr.used++
		return append(r.order, id), r.arr
	}
	order := make([]string, n, 2*n+16)
	copy(order, r.order)
	return append(order, id), &orderArray{size: cap(order), used: n + 1}
}

// Bytes bounds what the remembered requests take in a snapshot.
func (r Requests) Bytes() int64 { return r.bytes }

// encodedSize bounds what one remembered request takes in a snapshot: its
// id and record with their length prefixes. The record is encoded into a
// pooled buffer: records of many statements (a restore remembers
// MaxRememberedRequests of them) do not each grow a buffer of their own.
func encodedSize(id string, rec RequestRecord) int64 {
	buf := sizeBuffers.Get().(*[]byte)
	*buf = AppendRequestRecord((*buf)[:0], rec)
	n := len(*buf)
	sizeBuffers.Put(buf)
	return int64(len(id) + n + 2*binary.MaxVarintLen32)
}

// sizeBuffers hold the buffers encodedSize encodes into.
var sizeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Len returns the number of remembered requests.
func (r Requests) Len() int {
	if r.byID == nil {
		return 0
	}
	return r.byID.Len()
}

// Get returns the record of request id.
func (r Requests) Get(id string) (RequestRecord, bool) {
	if r.byID == nil || id == "" {
		return RequestRecord{}, false
	}
	return r.byID.Get(id)
}

// Oldest returns the oldest remembered request id and its record: the
// one the next Remember past MaxRememberedRequests forgets. Ids are
// remembered in log order, so every id applied after rec.Index that is
// not remembered was never applied (or was a retry answered with a first
// result). ok is false when none is remembered.
func (r Requests) Oldest() (id string, rec RequestRecord, ok bool) {
	if len(r.order) == 0 {
		return "", RequestRecord{}, false
	}
	id = r.order[0]
	rec, ok = r.byID.Get(id)
	return id, rec, ok
}

// Remember records rec for id, forgetting the oldest id once more than
// MaxRememberedRequests are held; it returns the forgotten id, if any. Its
// cost is O(log n). Ids must be remembered in log order.
func (r Requests) Remember(id string, rec RequestRecord) (Requests, string) {
	if r.byID == nil {
		r = Requests{byID: immutable.NewMap[string, RequestRecord](nil)}
	}
	if _, ok := r.byID.Get(id); ok {
		return r, ""
	}
	r.byID = r.byID.Set(id, rec)
	r.order, r.arr = r.appendOrder(id)
	r.bytes += encodedSize(id, rec)
	var evicted string
	if len(r.order) > MaxRememberedRequests {
		evicted = r.order[0]
		old, _ := r.byID.Get(evicted)
		r.bytes -= encodedSize(evicted, old)
		r.byID = r.byID.Delete(evicted)
		r.order = r.order[1:]
	}
	return r, evicted
}

// IDs returns the remembered ids, oldest first (for snapshots).
func (r Requests) IDs() []string {
	if len(r.order) == 0 {
		return nil
	}
	return slices.Clone(r.order)
}
