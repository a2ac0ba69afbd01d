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

// TestDecodeReusesTheLastShape: records of tables of one shape decode to
// the tables they encode, the later ones sharing the first one's values
// without decoding them again (fewer allocations); a record of another
// shape, one with masks, or one with trailing bytes decodes, or fails, as
// it would alone.
func TestDecodeReusesTheLastShape(t *testing.T) {
	s, _ := schemakit.Apply(t, schema.Schema{}, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		CREATE TABLE ks.a (id int PRIMARY KEY, v text) WITH comment = 'x';
		CREATE TABLE ks.b (id int PRIMARY KEY, v text) WITH comment = 'x';
		CREATE TABLE ks.c (id int PRIMARY KEY, v text MASKED WITH mask_default());
		CREATE TABLE ks.d (id int PRIMARY KEY, v int)`, schemakit.OneEpoch(1))
	k, _ := s.Keyspace("ks")
	enc := map[string][]byte{}
	for _, tb := range k.Tables() {
		enc[tb.Name] = schema.AppendTable(nil, tb)
	}
	decode := func(b []byte) *schema.Table {
		t.Helper()
		tb, err := schema.DecodeTable(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := schema.AppendTable(nil, tb); string(got) != string(b) {
			t.Fatalf("%s decodes to another table", tb.Name)
		}
		return tb
	}
	a := decode(enc["a"])
	b := decode(enc["b"])
	if &a.Columns[0] != &b.Columns[0] {
		t.Fatal("the second table of the shape does not share the first one's columns")
	}
	// The Table and its name; validation allocates more.
	td := schema.NewTableDecoder(s)
	if n := testing.AllocsPerRun(20, func() { _, _ = td.DecodeUnchecked(enc["b"]) }); n > 2 {
		t.Fatalf("%v allocations to decode a table of the last shape", n)
	}
	for _, name := range []string{"c", "d", "a", "c"} {
		decode(enc[name])
	}
	if _, err := schema.DecodeTable(append(enc["a"], 0)); err == nil {
		t.Fatal("a record of the last shape with a trailing byte decoded")
	}
}
