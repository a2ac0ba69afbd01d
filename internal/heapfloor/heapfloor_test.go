package heapfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{live: 0, floor: 64 * mib, want: 100},             // nothing measured yet
		{live: 32 * mib, floor: 64 * mib, want: 100},      // 2 × live reaches the floor
		{live: 200 * mib, floor: 64 * mib, want: 100},     // large heaps as by default
		{live: 16 * mib, floor: 64 * mib, want: 300},      // goal 16 + 48 = 64 MiB
		{live: 8 * mib, floor: 64 * mib, want: 700},       // goal 64 MiB
		{live: 1 * mib / 64, floor: 64 * mib, want: 2000}, // capped
	} {
		if got := Percent(c.live, c.floor); got != c.want {
			t.Errorf("Percent(live %d, floor %d) = %d, want %d", c.live, c.floor, got, c.want)
		}
	}
}

// TestTunerFollowsCycles checks that the tuner sets a raised GOGC for a
// small heap and adjusts again after later cycles.
func TestTunerFollowsCycles(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tu := Start(1 << 30) // far above this test's heap
	defer tu.Stop()
	// Each cycle runs the sentinel's finalizer (on the finalizer
	// goroutine, a moment later), which adjusts and arms again.
	for i := 0; tu.cycles.Load() < 3; i++ {
		if i == 1000 {
			t.Fatalf("%d adjustments after %d collections, want 3", tu.cycles.Load(), i)
		}
		runtime.GC()
		runtime.Gosched()
	}
	if got := tu.GCPercent(); got <= 100 {
		t.Fatalf("GOGC %d with a small heap and a 1 GiB floor, want above 100", got)
	}
	if got := debug.SetGCPercent(-1); got != tu.GCPercent() {
		t.Errorf("runtime GOGC %d, tuner says %d", got, tu.GCPercent())
	}
	debug.SetGCPercent(tu.GCPercent())
	tu.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC after Stop = %d, want 100", got)
	}
}
