package metadata

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/schema"
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
// table map per table (as putting them one at a time does) allocates more
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

// TestStoreLoadNamesABadTable: a stored table that does not decode, or
// decodes into one the schema refuses, fails the load with an error that
// names it, wherever it is among the decoded batches (and the reading
// goroutine stops: TestMain checks for leaks).
func TestStoreLoadNamesABadTable(t *testing.T) {
	ghost := &schema.Table{Keyspace: "ghost", Name: "t_1500", ID: schema.TableID(1, 0),
		Columns: []schema.Column{{Name: "id", Type: schema.TypeInt, Kind: schema.PartitionKey}}, PartitionKey: []string{"id"}}
	for _, c := range []struct {
		name, table string
		value       []byte
		want        string
	}{
		{"undecodable", "t_10", []byte("not a table"), "tables shop.t_10: "},
		{"undecodable late", "t_1500", []byte("not a table"), "tables shop.t_1500: "},
		{"unknown keyspace", "t_1500", schema.AppendTable(nil, ghost), "tables ghost.t_1500: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			sm, _ := loadedSM(t, 2000)
			err := sm.store.db.Update(func(tx *bolt.Tx) error {
				var a arena
				return sealed(tx, familyBuckets[familyTables], []byte("shop")).putBytes(&a, []byte(c.table), c.value)
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sm.store.Load(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, c.want)
			}
		})
	}
}
