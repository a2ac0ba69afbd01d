package metadata

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

// heapScale turns TestHeapScale on: it writes and loads a million tables,
// which takes about a minute and a few hundred MB.
var heapScale = flag.Bool("heapscale", false, "run TestHeapScale: the heap that loading 100,000 and 1,000,000 minimal tables keeps")

// TestHeapScale reports what a member keeps on the heap once it holds n
// minimal tables, loaded the two ways a member loads them: from its store
// (a restart) and from a snapshot (a new member). For each it reports the
// live heap per table after a forced collection, the scannable heap
// (/gc/scan/heap:bytes, what marking has to walk) and the mark CPU time
// of that one collection. Run it with GODEBUG=gctrace=1 to see the
// collection's trace line: a "heapscale:" line on stderr comes right
// before it. It only reports; it checks nothing but the table count.
func TestHeapScale(t *testing.T) {
	if !*heapScale {
		t.Skip("set -heapscale to run")
	}
	for _, n := range []int{100_000, 1_000_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			store, snap := heapScaleSources(t, n)
			measureLoad(t, "store", n, func() (*ClusterMetadata, error) { return store.Load() })
			measureLoad(t, "snapshot", n, func() (*ClusterMetadata, error) { return decodeSnapshot(snap, 1) })
			// The snapshot is part of both baselines: it must not die
			// during a measurement.
			runtime.KeepAlive(snap)
		})
	}
}

// heapScaleSources writes n minimal tables (CREATE TABLE shop.t_N (id int
// PRIMARY KEY)) to a store in a temporary directory and encodes them as
// a snapshot at log index 1; the tables themselves are garbage when it
// returns.
func heapScaleSources(t *testing.T, n int) (*Store, []byte) {
	var b schema.Builder
	b.PutKeyspace(&schema.Keyspace{Name: "shop", DurableWrites: true,
		Replication: schema.Replication{Class: schema.SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}})
	for i := range n {
		err := b.PutTable(&schema.Table{Keyspace: "shop", Name: fmt.Sprintf("t_%d", i), ID: schema.TableID(uint64(i+2), 0),
			Columns: []schema.Column{{Name: "id", Type: schema.TypeInt, Kind: schema.PartitionKey}}, PartitionKey: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	m := &ClusterMetadata{Epoch: uint64(n + 1), Index: 1, Schema: b.Schema()}
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	noHistory := func(*bolt.Tx, *arena, *ClusterMetadata) error { return nil }
	if _, err := store.replaceAll(metadataObjects(m), func() (*ClusterMetadata, error) { return m, nil }, noHistory); err != nil {
		t.Fatal(err)
	}
	c := snapshotContents(m, 1)
	return store, snapshot.Encode(nil, &c)
}

// measureLoad runs load, which must return the n tables, and reports
// what the result keeps alive.
func measureLoad(t *testing.T, how string, n int, load func() (*ClusterMetadata, error)) {
	settleGC()
	before := readGC()
	m, err := load()
	if err != nil {
		t.Fatal(err)
	}
	settleGC()
	settled := readGC()
	fmt.Fprintf(os.Stderr, "heapscale: %s load of %d tables, forced collection next\n", how, n)
	runtime.GC()
	after := readGC()
	if got := m.Schema.TableCount(); got != n {
		t.Fatalf("%s: loaded %d tables, want %d", how, got, n)
	}
	runtime.KeepAlive(m)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	t.Logf("%s load of %d tables: live heap %.1f B per table (%d B in all), scannable heap %.1f B per table (%d B in all), heap objects %.2f per table; the forced collection's mark CPU %.3f s",
		how, n, per(after.live, before.live), after.live, per(after.scan, before.scan), after.scan,
		per(after.objects, before.objects), after.markCPU-settled.markCPU)
}

// settleGC collects twice, so that what sync.Pools held is gone too.
func settleGC() {
	runtime.GC()
	runtime.GC()
}

// gcStats is what readGC reads.
type gcStats struct {
	live, scan, objects uint64  // bytes, bytes, objects, as of the last collection
	markCPU             float64 // seconds, all mark CPU since the start
}

// readGC reads the live heap, the scannable heap and the heap objects as
// of the last collection, and the mark CPU time spent so far.
func readGC() gcStats {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}, {Name: "/gc/heap/objects:objects"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}}
	metrics.Read(s)
	return gcStats{live: s[0].Value.Uint64(), scan: s[1].Value.Uint64(), objects: s[2].Value.Uint64(),
		markCPU: s[3].Value.Float64() + s[4].Value.Float64() + s[5].Value.Float64()}
}
