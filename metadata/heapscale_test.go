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
// which takes tens of seconds and about a GB.
var heapScale = flag.Bool("heapscale", false, "run TestHeapScale: the heap that loading 100,000 and 1,000,000 tables keeps")

// TestHeapScale reports what a member keeps on the heap once it holds n
// tables, loaded the two ways a member loads them: from its store (a
// restart) and from a snapshot (a new member). The tables are minimal
// (100,000 and 1,000,000), or of as many shapes as tables, with columns
// whose names and types repeat across them (100,000). For each it
// reports the live heap per table after a forced collection, the
// scannable heap (/gc/scan/heap:bytes, what marking has to walk) and the
// mark CPU time of that one collection. Run it with GODEBUG=gctrace=1 to
// see the collection's trace line: a "heapscale:" line on stderr comes
// right before it. It only reports; it checks nothing but the table
// count.
func TestHeapScale(t *testing.T) {
	if !*heapScale {
		t.Skip("set -heapscale to run")
	}
	for _, c := range []struct {
		name  string
		n     int
		table func(i int) *schema.Table
	}{
		{"minimal", 100_000, minimalTable},
		{"minimal", 1_000_000, minimalTable},
		{"varied", 100_000, variedTable},
	} {
		t.Run(fmt.Sprintf("%s/%d", c.name, c.n), func(t *testing.T) {
			store, snap := heapScaleSources(t, c.n, c.table)
			what := fmt.Sprintf("%s %s", c.name, "tables")
			measureLoad(t, "store", what, c.n, func() (*ClusterMetadata, error) { return store.Load() })
			measureLoad(t, "snapshot", what, c.n, func() (*ClusterMetadata, error) { return decodeSnapshot(snap, 1) })
			// The snapshot is part of both baselines: it must not die
			// during a measurement.
			runtime.KeepAlive(snap)
		})
	}
}

// minimalTable is the i-th table CREATE TABLE shop.t_i (id int PRIMARY
// KEY) makes.
func minimalTable(i int) *schema.Table {
	return &schema.Table{Keyspace: "shop", Name: fmt.Sprintf("t_%d", i), ID: schema.TableID(uint64(i+2), 0),
		Columns: []schema.Column{{Name: "id", Type: schema.TypeInt, Kind: schema.PartitionKey}}, PartitionKey: []string{"id"}}
}

// variedTable is the i-th table CREATE TABLE shop.t_i (id int, at
// timestamp, name text, tags set<text>, home frozen<address>, v_i int,
// PRIMARY KEY (id, at)) makes: a shape of its own, each name and type
// but v_i's shared with the other tables.
func variedTable(i int) *schema.Table {
	return &schema.Table{Keyspace: "shop", Name: fmt.Sprintf("t_%d", i), ID: schema.TableID(uint64(i+2), 0),
		Columns: []schema.Column{
			{Name: "id", Type: schema.TypeInt, Kind: schema.PartitionKey},
			{Name: "at", Type: schema.TypeTimestamp, Kind: schema.Clustering},
			{Name: "name", Type: schema.TypeText},
			{Name: "tags", Type: schema.SetType{Elem: schema.TypeText}},
			{Name: "home", Type: schema.FrozenType{Inner: schema.UserTypeRef{Name: "address"}}},
			{Name: fmt.Sprintf("v_%d", i), Type: schema.TypeInt},
		},
		PartitionKey: []string{"id"}, Clustering: []schema.ClusteringColumn{{Name: "at"}}}
}

// heapScaleSources writes n tables, table(i) for each i, of keyspace
// shop (which has a user type address) to a store in a temporary
// directory and encodes them as a snapshot at log index 1; the tables
// themselves are garbage when it returns.
func heapScaleSources(t *testing.T, n int, table func(int) *schema.Table) (*Store, []byte) {
	var b schema.Builder
	b.PutKeyspace(&schema.Keyspace{Name: "shop", DurableWrites: true,
		Replication: schema.Replication{Class: schema.SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}})
	err := b.PutUserType(&schema.UserType{Keyspace: "shop", Name: "address", Fields: []schema.Field{{Name: "street", Type: schema.TypeText}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := b.PutTable(table(i)); err != nil {
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
func measureLoad(t *testing.T, how, what string, n int, load func() (*ClusterMetadata, error)) {
	settleGC()
	before := readGC()
	m, err := load()
	if err != nil {
		t.Fatal(err)
	}
	settleGC()
	settled := readGC()
	fmt.Fprintf(os.Stderr, "heapscale: %s load of %d %s, forced collection next\n", how, n, what)
	runtime.GC()
	after := readGC()
	if got := m.Schema.TableCount(); got != n {
		t.Fatalf("%s: loaded %d tables, want %d", how, got, n)
	}
	runtime.KeepAlive(m)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	t.Logf("%s load of %d %s: live heap %.1f B per table (%d B in all), scannable heap %.1f B per table (%d B in all), heap objects %.2f per table; the forced collection's mark CPU %.3f s",
		how, n, what, per(after.live, before.live), after.live, per(after.scan, before.scan), after.scan,
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
