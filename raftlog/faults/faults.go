package faults

import (
	"sync"
	"time"
)

// Injector injects network faults between transports. The zero value
// injects none; its methods are safe for concurrent use, and a nil
// *Injector injects none. It implements raftlog.Faults.
type Injector struct {
	mu      sync.RWMutex // guards drop, delay and corrupt
	drop    map[[2]uint64]bool
	delay   map[uint64]time.Duration
	corrupt map[uint64]int
}

// Drop drops every message from member from to member to, checked when
// sending and when receiving.
func (f *Injector) Drop(from, to uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.drop == nil {
		f.drop = make(map[[2]uint64]bool)
	}
	f.drop[[2]uint64{from, to}] = true
}

// Partition drops every message between a member of a and a member of b,
// both ways.
func (f *Injector) Partition(a, b []uint64) {
	for _, x := range a {
		for _, y := range b {
			f.Drop(x, y)
			f.Drop(y, x)
		}
	}
}

// Delay holds every batch (and snapshot) sent to member to for d before
// sending it; zero removes the delay.
func (f *Injector) Delay(to uint64, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delay == nil {
		f.delay = make(map[uint64]time.Duration)
	}
	if d <= 0 {
		delete(f.delay, to)
		return
	}
	f.delay[to] = d
}

// CorruptSnapshots flips a byte in one data chunk of each of the next
// count snapshots sent to member to, so the receiver's checksum fails;
// zero removes the fault.
func (f *Injector) CorruptSnapshots(to uint64, count int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrupt == nil {
		f.corrupt = make(map[uint64]int)
	}
	if count <= 0 {
		delete(f.corrupt, to)
		return
	}
	f.corrupt[to] = count
}

// Heal removes every drop, delay and pending corruption.
func (f *Injector) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drop, f.delay, f.corrupt = nil, nil, nil
}

// Dropped implements raftlog.Faults: Drop or Partition set it.
func (f *Injector) Dropped(from, to uint64) bool {
	if f == nil {
		return false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.drop[[2]uint64{from, to}]
}

// DelayFor implements raftlog.Faults: what Delay set for member to.
func (f *Injector) DelayFor(to uint64) time.Duration {
	if f == nil {
		return 0
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.delay[to]
}

// CorruptNextSnapshot implements raftlog.Faults: it reports whether the
// snapshot being sent to member to is one CorruptSnapshots asked for, and
// counts it.
func (f *Injector) CorruptNextSnapshot(to uint64) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrupt[to] <= 0 {
		return false
	}
	f.corrupt[to]--
	return true
}
