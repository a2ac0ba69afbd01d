// Package heapfloor keeps the Go garbage collector from running often
// while the live heap is small.
//
// With GOGC=100 the collector runs each time the heap doubles. A metalog
// member with a few thousand tables has a live heap of a few MiB, and every
// DDL allocates tens of KiB (gRPC frames, the parse, the persistent maps'
// copied paths), so it collects every few hundred DDLs, and each cycle
// takes CPU from the requests in flight. A floor on the heap goal fixes
// that without touching large heaps: after every cycle, GOGC is set so
// that the next goal is max(2 × live heap, floor). From a live heap of
// floor/2 up, that is GOGC=100, the runtime's default.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// maxPercent bounds the GOGC this package sets, for a nearly empty heap.
const maxPercent = 2000

// Percent returns the GOGC that puts the next heap goal at max(2 × live,
// floor): 100 once live reaches floor/2, more below it, at most maxPercent.
func Percent(live, floor uint64) int {
	if live == 0 || live >= floor/2 {
		return 100
	}
	return int(min(uint64(maxPercent), (floor-live)*100/live))
}

// Tuner adjusts GOGC after every garbage collection cycle.
type Tuner struct {
	floor  uint64
	cycles atomic.Int64 // adjustments made after a cycle
	last   atomic.Int64 // GOGC set by the last adjustment

	mu      sync.Mutex // serialises adjust and Stop
	stopped bool
	sample  []metrics.Sample
}

// Start begins tuning with a heap floor of floor bytes and returns the
// Tuner; Stop restores GOGC=100.
func Start(floor uint64) *Tuner {
	t := &Tuner{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.adjust()
	t.arm()
	return t
}

// arm leaves an unreachable object whose finalizer runs once the next
// cycle has found it: it adjusts GOGC and arms again.
func (t *Tuner) arm() {
	s := new([16]byte)
	runtime.SetFinalizer(s, func(*[16]byte) {
		if t.adjust() {
			t.cycles.Add(1)
			t.arm()
		}
	})
}

// adjust sets GOGC for the live heap now; it reports false once stopped.
func (t *Tuner) adjust() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample)
	var live uint64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	p := Percent(live, t.floor)
	if int64(p) != t.last.Load() {
		debug.SetGCPercent(p)
		t.last.Store(int64(p))
	}
	return true
}

// GCPercent returns the GOGC the tuner set last.
func (t *Tuner) GCPercent() int { return int(t.last.Load()) }

// Stop ends tuning and restores GOGC=100.
func (t *Tuner) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.stopped {
		t.stopped = true
		debug.SetGCPercent(100)
	}
}
