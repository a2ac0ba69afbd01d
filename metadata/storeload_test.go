package metadata

import (
	"fmt"
	"runtime"
	"testing"
)

// loadCostPerTable returns the allocations and the bytes allocated per
// table of loading the store of a state machine holding n tables.
func loadCostPerTable(t testing.TB, n int) (allocs, bytes float64) {
	sm, _ := loadedSM(t, n)
	const runs = 3
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		m, err := sm.store.Load()
		if err != nil {
			t.Fatal(err)
		}
		if m.Schema.TableCount() != n {
			t.Fatalf("loaded %d tables, want %d", m.Schema.TableCount(), n)
		}
	}
	runtime.ReadMemStats(&after)
	per := float64(runs * n)
	return float64(after.Mallocs-before.Mallocs) / per, float64(after.TotalAlloc-before.TotalAlloc) / per
}

// TestStoreLoadCostPerTable compares the allocations and bytes per table
// of a restart's load at N and 8N tables: a load that copied a path of the
// table map per table (as one PutTable after another does) allocates more
// per table the more tables there are.
func TestStoreLoadCostPerTable(t *testing.T) {
	n := 1000
	smallAllocs, smallBytes := loadCostPerTable(t, n)
	largeAllocs, largeBytes := loadCostPerTable(t, 8*n)
	t.Logf("store load per table: %.2f allocations, %.0f bytes at %d tables; %.2f, %.0f at %d", smallAllocs, smallBytes, n, largeAllocs, largeBytes, 8*n)
	if ratio := largeAllocs / smallAllocs; ratio > 1.05 {
		t.Errorf("allocations per table grow with the table count: ratio %.3f > 1.05", ratio)
	}
	if ratio := largeBytes / smallBytes; ratio > 1.1 {
		t.Errorf("bytes allocated per table grow with the table count: ratio %.3f > 1.1", ratio)
	}
}

func BenchmarkStoreLoad(b *testing.B) {
	for _, size := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tables=%d", size), func(b *testing.B) {
			sm, _ := loadedSM(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := sm.store.Load(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
