package schema

import (
	"fmt"
	"testing"
)

// TestTableDecoderIsBounded decodes more tables than maxShared, each with
// a column name and a column type of its own, and checks that the decoder
// remembers no more than maxShared of each.
func TestTableDecoderIsBounded(t *testing.T) {
	td := NewTableDecoder(Schema{})
	for i := range maxShared + 10 {
		rec := AppendTable(nil, &Table{Keyspace: "ks", Name: fmt.Sprintf("t_%d", i), ID: TableID(uint64(i+1), 0),
			Columns: []Column{
				{Name: "id", Type: TypeInt, Kind: PartitionKey},
				{Name: fmt.Sprintf("own_%d", i), Type: VectorType{Elem: TypeFloat, Dimension: i + 1}},
			},
			PartitionKey: []string{"id"}})
		if _, err := td.Decode(rec); err != nil {
			t.Fatal(err)
		}
	}
	if len(td.names) > maxShared || len(td.types) > maxShared {
		t.Errorf("the decoder remembers %d names and %d types, want at most %d of each", len(td.names), len(td.types), maxShared)
	}
}
