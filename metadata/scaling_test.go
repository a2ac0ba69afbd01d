package metadata

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// loadedSM returns a state machine holding n tables in keyspace shop, with
// everything flushed, and an applier positioned after them.
func loadedSM(tb testing.TB, n int) (*StateMachine, *applier) {
	tb.Helper()
	sm, err := Open(Config{Dir: tb.TempDir(), FlushWindow: time.Hour, MaxPendingChanges: math.MaxInt32})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sm.Close() })
	a := &applier{t: tb, sm: sm}
	a.apply(Command{Text: ksDDL})
	const chunk = 500
	for i := 0; i < n; i += chunk {
		cmds := make([]Command, 0, chunk)
		for j := i; j < min(i+chunk, n); j++ {
			cmds = append(cmds, Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY, v text)", j)})
		}
		a.apply(cmds...)
	}
	if err := sm.flusher.flush(); err != nil {
		tb.Fatal(err)
	}
	return sm, a
}

// applyStep is the whole per-DDL apply step: decode, parse, validate,
// apply, publish, stage for the store.
func applyStep(sm *StateMachine, a *applier, i int) error {
	a.index++
	res, err := sm.Apply([]Entry{{Index: a.index, Data: Command{Text: fmt.Sprintf("CREATE TABLE shop.new_%d (id int PRIMARY KEY, v text)", i)}.Marshal(nil)}})
	if err != nil {
		return err
	}
	return res[0].Err
}

// maxApplyStepAllocs bounds the allocations of the whole apply step of one
// CREATE TABLE (the test's own command encoding included): 43 when the
// bound was set, 57 before the parser, the change lists and the debug
// lines stopped allocating per statement.
const maxApplyStepAllocs = 45

// TestApplyStepCostDoesNotGrowWithTables compares allocations of the whole
// apply step at N and 8N existing tables: nothing on it may walk all tables,
// and neither count may pass maxApplyStepAllocs.
func TestApplyStepCostDoesNotGrowWithTables(t *testing.T) {
	n := 1000
	allocs := map[int]float64{}
	for _, size := range []int{n, 8 * n} {
		sm, a := loadedSM(t, size)
		i := 0
		var err error
		allocs[size] = testing.AllocsPerRun(200, func() {
			if e := applyStep(sm, a, i); e != nil {
				err = e
			}
			i++
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for size, a := range allocs {
		if a > maxApplyStepAllocs {
			t.Errorf("apply step allocations at %d tables: %v, want at most %d", size, a, maxApplyStepAllocs)
		}
	}
	if ratio := allocs[8*n] / allocs[n]; ratio > 1.2 {
		t.Fatalf("apply step allocations: %v at %d tables, %v at %d (ratio %.2f > 1.2)", allocs[n], n, allocs[8*n], 8*n, ratio)
	}
	t.Logf("apply step allocations: %v at %d tables, %v at %d", allocs[n], n, allocs[8*n], 8*n)
}

func BenchmarkApplyStep(b *testing.B) {
	for _, size := range []int{1000, 8000} {
		b.Run(fmt.Sprintf("tables=%d", size), func(b *testing.B) {
			sm, a := loadedSM(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := applyStep(sm, a, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyStepWithRequestID is the apply step of a DDL that carries
// a request id, which the state machine remembers (and, once the limit is
// reached, evicts the oldest).
func BenchmarkApplyStepWithRequestID(b *testing.B) {
	sm, a := loadedSM(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		a.index++
		cmd := Command{RequestID: fmt.Sprintf("req-%d", i), Text: fmt.Sprintf("CREATE TABLE shop.new_%d (id int PRIMARY KEY, v text)", i)}
		res, err := sm.Apply([]Entry{{Index: a.index, Data: cmd.Marshal(nil)}})
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Err != nil {
			b.Fatal(res[0].Err)
		}
	}
}
