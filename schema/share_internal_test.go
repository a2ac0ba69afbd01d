package schema

import "testing"

// TestShareShapeAllocs checks that sharing the shape of a cached table
// allocates nothing (the hash and the equality check run on the stack),
// that the table then holds the cached values, and that a table of
// another shape does not.
func TestShareShapeAllocs(t *testing.T) {
	shaped := func(name string, value Type) *Table {
		return &Table{Keyspace: "ks", Name: name,
			Columns:      []Column{{Name: "id", Type: TypeInt, Kind: PartitionKey}, {Name: "v", Type: MapType{Key: TypeText, Value: value}}},
			PartitionKey: []string{"id"}, Extra: &TableExtra{Options: map[string]string{"comment": "'x'"}}}
	}
	first := shaped("a", TypeInt)
	shareShape(first, false)
	const runs = 100
	tables := make([]*Table, runs+1) // AllocsPerRun runs once more to warm up
	for i := range tables {
		tables[i] = shaped("b", TypeInt)
	}
	i := 0
	allocs := testing.AllocsPerRun(runs, func() {
		shareShape(tables[i], false)
		i++
	})
	if allocs != 0 {
		t.Errorf("shareShape on a cached shape: %.0f allocations, want 0", allocs)
	}
	for _, tb := range tables {
		if &tb.Columns[0] != &first.Columns[0] || &tb.PartitionKey[0] != &first.PartitionKey[0] {
			t.Fatal("a table of a cached shape does not share its columns and key")
		}
	}
	other := shaped("c", TypeBigint)
	shareShape(other, false)
	if &other.Columns[0] == &first.Columns[0] {
		t.Error("a table of another shape shares the cached columns")
	}
}
