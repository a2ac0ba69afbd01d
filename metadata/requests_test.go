package metadata

import (
	"fmt"
	"slices"
	"testing"
)

// TestRequestsValuesStayImmutable remembers ids on a chain of values and
// on older values of it (branches), past the eviction limit, and checks
// that every value keeps the ids it had: the order windows share arrays,
// and a branch must copy rather than write into what a later value sees.
func TestRequestsValuesStayImmutable(t *testing.T) {
	var r Requests
	var want [][]string
	var vals []Requests
	ids := func(lo, hi int) []string {
		var out []string
		for i := max(lo, hi-MaxRememberedRequests); i < hi; i++ {
			out = append(out, fmt.Sprintf("id-%d", i))
		}
		return out
	}
	n := MaxRememberedRequests + 2500
	for i := range n {
		r, _ = r.Remember(fmt.Sprintf("id-%d", i), RequestRecord{Index: uint64(i + 1)})
		if i%997 == 0 {
			vals = append(vals, r)
			want = append(want, ids(0, i+1))
		}
	}
	// Branches from older values, which must not disturb the chain.
	for k, v := range vals {
		b, _ := v.Remember(fmt.Sprintf("branch-%d", k), RequestRecord{Index: uint64(n + k + 1)})
		got := b.IDs()
		if last := got[len(got)-1]; last != fmt.Sprintf("branch-%d", k) {
			t.Fatalf("branch %d ends with %s", k, last)
		}
	}
	for k, v := range vals {
		if got := v.IDs(); !slices.Equal(got, want[k]) {
			t.Fatalf("value %d: %d ids from %v, want %d from %v", k, len(got), got[:1], len(want[k]), want[k][:1])
		}
		if v.Len() != len(want[k]) {
			t.Fatalf("value %d: Len %d, want %d", k, v.Len(), len(want[k]))
		}
	}
	if got := r.IDs(); !slices.Equal(got, ids(0, n)) {
		t.Fatalf("latest value: %d ids, want %d", len(got), MaxRememberedRequests)
	}
}

// TestRememberAllocs bounds what Remember allocates per id once the
// limit is reached (the map's path copies; the order allocates only an
// array now and then).
func TestRememberAllocs(t *testing.T) {
	var r Requests
	for i := range MaxRememberedRequests {
		r, _ = r.Remember(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), RequestRecord{Index: uint64(i + 1)})
	}
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i+MaxRememberedRequests, i)
	}
	next := 0
	allocs := testing.AllocsPerRun(len(ids)-1, func() {
		r, _ = r.Remember(ids[next], RequestRecord{Index: uint64(MaxRememberedRequests + next + 1)})
		next++
	})
	t.Logf("Remember allocates %.1f per id", allocs)
	if raceEnabled {
		return // the race detector's sync.Pool drops buffers at random
	}
	if allocs > 14 {
		t.Fatalf("Remember allocates %.1f per id, want at most 14", allocs)
	}
}

// TestOldestIsTheNextToBeForgotten: Oldest is the first id remembered
// until the memory is full, then moves with every id remembered.
func TestOldestIsTheNextToBeForgotten(t *testing.T) {
	var r Requests
	if _, _, ok := r.Oldest(); ok {
		t.Fatal("Oldest of no request: ok")
	}
	for i := range MaxRememberedRequests + 3 {
		var evicted string
		r, evicted = r.Remember(fmt.Sprintf("id-%d", i), RequestRecord{Index: uint64(i + 1), Outcome: Outcome{Epoch: uint64(i)}})
		first := max(0, i+1-MaxRememberedRequests)
		id, rec, ok := r.Oldest()
		if !ok || id != fmt.Sprintf("id-%d", first) || rec.Index != uint64(first+1) {
			t.Fatalf("after id-%d: Oldest = %s (index %d, %v), want id-%d", i, id, rec.Index, ok, first)
		}
		if want := i >= MaxRememberedRequests; (evicted != "") != want {
			t.Fatalf("after id-%d: evicted %q", i, evicted)
		}
	}
}
