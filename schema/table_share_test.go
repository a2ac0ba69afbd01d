package schema_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// heapPerTableBound is the most heap a minimal table (two columns, no
// properties) may cost in the schema, in bytes: its Table value, its id
// (16 bytes in the Table, no text) and name, its entry in the keyspace's
// map and its share of the map's nodes. Its columns, key and statement
// text are shared or freed; without the shape cache a table costs about
// 500 bytes, with its id as 36-character text about 318, with its
// properties, dropped columns, triggers and view inline (a 184-byte Table
// instead of 128) about 270. It measures 206.
const heapPerTableBound = 215

// TestHeapPerTable checks what holding a minimal table costs: n tables
// created from parsed statements, as the state machine creates them, are
// measured as the heap they keep alive (a count of bytes, not a time).
func TestHeapPerTable(t *testing.T) {
	const n = 20000
	s, _ := schemakit.Apply(t, schema.Schema{}, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", schemakit.OneEpoch(1))
	before := liveHeap()
	for i := range n {
		s, _ = schemakit.Apply(t, s, fmt.Sprintf("CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)", i), schemakit.OneEpoch(uint64(i+2)))
	}
	per := float64(liveHeap()-before) / n
	runtime.KeepAlive(s)
	if k, _ := s.Keyspace("ks"); k.TableCount() != n {
		t.Fatalf("%d tables, want %d", k.TableCount(), n)
	}
	t.Logf("%.0f heap bytes per table", per)
	if per > heapPerTableBound {
		t.Errorf("a minimal table keeps %.0f heap bytes alive, want at most %d", per, heapPerTableBound)
	}
}

// TestSharedShapeIsCopiedOnChange checks that tables sharing a shape stay
// apart when one of them changes: adding a column, masking one, renaming
// a key column or setting a property in one leaves the others as they
// were.
func TestSharedShapeIsCopiedOnChange(t *testing.T) {
	s, _ := schemakit.Apply(t, schema.Schema{}, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", schemakit.OneEpoch(1))
	names := []string{"a", "b", "c", "d", "e"}
	for i, name := range names {
		s, _ = schemakit.Apply(t, s, "CREATE TABLE ks."+name+" (id int, c int, v text, PRIMARY KEY (id, c)) WITH comment = 'x'", schemakit.OneEpoch(uint64(i+2)))
	}
	before := describeAll(s, names)
	s, _ = schemakit.Apply(t, s, "ALTER TABLE ks.a ADD w int", schemakit.OneEpoch(10))
	s, _ = schemakit.Apply(t, s, "ALTER TABLE ks.b ALTER v MASKED WITH mask_default()", schemakit.OneEpoch(11))
	s, _ = schemakit.Apply(t, s, "ALTER TABLE ks.c RENAME c TO cc", schemakit.OneEpoch(12))
	s, _ = schemakit.Apply(t, s, "ALTER TABLE ks.d WITH comment = 'y'", schemakit.OneEpoch(13))
	after := describeAll(s, names)
	for i, name := range names {
		if changed := before[i] != after[i]; changed != (name != "e") {
			t.Errorf("ks.%s changed %v, want %v:\n%s\nthen\n%s", name, changed, name != "e", before[i], after[i])
		}
	}
}

// describeAll returns the DESCRIBE text of ks's tables names.
func describeAll(s schema.Schema, names []string) []string {
	k, _ := s.Keyspace("ks")
	out := make([]string, len(names))
	for i, name := range names {
		tb, _ := k.Table(name)
		out[i] = (describe.Options{OmitID: true}).Table(tb)
	}
	return out
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
