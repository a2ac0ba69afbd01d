package schema_test

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
)

// TestTableDecoderEqualsDecodeTable decodes every table of random schemas
// (tables of several keyspaces, in keyspace order as the loads read them:
// views, triggers, dropped columns, masks and user types among them) with
// one TableDecoder, and checks each against DecodeTable: equal values
// that encode alike, the decoder's keyspace name being the keyspace's.
func TestTableDecoderEqualsDecodeTable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := schematest.Schema(t, schematest.SmallPool, 1, nil)
		td := schema.NewTableDecoder(s)
		for _, k := range s.Keyspaces() {
			for _, tb := range k.Tables() {
				rec := schema.AppendTable(nil, tb)
				want, err := schema.DecodeTable(rec)
				if err != nil {
					t.Fatalf("DecodeTable %s: %v", tb.QualifiedName(), err)
				}
				got, err := td.Decode(rec)
				if err != nil {
					t.Fatalf("TableDecoder.Decode %s: %v", tb.QualifiedName(), err)
				}
				if d := cmp.Diff(want, got, tableOpts); d != "" {
					t.Fatalf("%s (-DecodeTable +TableDecoder):\n%s", tb.QualifiedName(), d)
				}
				if !bytes.Equal(schema.AppendTable(nil, got), rec) {
					t.Fatalf("%s encodes differently once decoded", tb.QualifiedName())
				}
				if unsafe.StringData(got.Keyspace) != unsafe.StringData(k.Name) {
					t.Fatalf("%s does not share its keyspace's name", tb.QualifiedName())
				}
			}
		}
	})
}

// sharingTables are tables of different shapes whose names and types
// repeat: the first two share every column but their last, in keyspace
// ks, the third is in keyspace other. They are values that no statement
// made, so that the shape cache (which shares the columns of tables of
// one shape) does not hold their shapes before they are decoded.
func sharingTables(t *testing.T) (schema.Schema, [][]byte) {
	var b schema.Builder
	for _, ks := range []string{"ks", "other"} {
		b.PutKeyspace(&schema.Keyspace{Name: ks, Replication: schema.Replication{Class: schema.SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}})
	}
	if err := b.PutUserType(&schema.UserType{Keyspace: "ks", Name: "address", Fields: []schema.Field{{Name: "street", Type: schema.TypeText}}}); err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for i, name := range []string{"ks.t1.a", "ks.t2.b", "other.t3.c"} {
		ks, rest, _ := strings.Cut(name, ".")
		tb, last, _ := strings.Cut(rest, ".")
		recs = append(recs, schema.AppendTable(nil, &schema.Table{Keyspace: ks, Name: tb, ID: schema.TableID(uint64(i+1), 0),
			Columns: []schema.Column{
				{Name: "shared_id", Type: schema.TypeInt, Kind: schema.PartitionKey},
				{Name: "shared_at", Type: schema.TypeTimestamp, Kind: schema.Clustering},
				{Name: "shared_tags", Type: schema.SetType{Elem: schema.TypeText}},
				{Name: "shared_home", Type: schema.FrozenType{Inner: schema.UserTypeRef{Name: "address"}}},
				{Name: "own_" + last, Type: schema.TypeInt},
			},
			PartitionKey: []string{"shared_id"}, Clustering: []schema.ClusteringColumn{{Name: "shared_at"}}}))
	}
	return b.Schema(), recs
}

// TestTableDecoderShares checks what a TableDecoder shares between the
// tables of a keyspace: the keyspace's name, and the column names and
// non-native types an earlier table had, which the key's names share too;
// and that the next keyspace's tables share nothing with the previous
// one's. Decoding a table after one that has those names and types
// allocates less than DecodeTable.
func TestTableDecoderShares(t *testing.T) {
	s, recs := sharingTables(t)
	td := schema.NewTableDecoder(s)
	var tables []*schema.Table
	for _, rec := range recs {
		tb, err := td.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	t1, t2, t3 := tables[0], tables[1], tables[2]
	for i := range 4 {
		a, b := t1.Columns[i], t2.Columns[i]
		if unsafe.StringData(a.Name) != unsafe.StringData(b.Name) {
			t.Errorf("column %s: the two tables have names of their own", a.Name)
		}
		if i >= 2 && !sameValue(a.Type, b.Type) {
			t.Errorf("column %s: the two tables have types of their own", a.Name)
		}
	}
	if unsafe.StringData(t2.PartitionKey[0]) != unsafe.StringData(t2.Columns[0].Name) || unsafe.StringData(t2.Clustering[0].Name) != unsafe.StringData(t2.Columns[1].Name) {
		t.Error("t2's key does not share its columns' names")
	}
	other, _ := s.Keyspace("other")
	if unsafe.StringData(t3.Keyspace) != unsafe.StringData(other.Name) || unsafe.StringData(t3.Columns[0].Name) == unsafe.StringData(t1.Columns[0].Name) {
		t.Error("a table of the next keyspace does not have its keyspace's name, or shares a name with the previous keyspace's")
	}
	td = schema.NewTableDecoder(s)
	if _, err := td.Decode(recs[0]); err != nil {
		t.Fatal(err)
	}
	shared := testing.AllocsPerRun(100, func() { _, _ = td.Decode(recs[1]) })
	alone := testing.AllocsPerRun(100, func() { _, _ = schema.DecodeTable(recs[1]) })
	t.Logf("decoding t2: %.0f allocations after t1, %.0f alone", shared, alone)
	if shared >= alone {
		t.Errorf("decoding t2 after t1 allocates %.0f times, DecodeTable %.0f: nothing shared", shared, alone)
	}
}

// sameValue reports whether two interface values of one type point at
// the same data (the same boxed value, not merely an equal one).
func sameValue(a, b schema.Type) bool {
	type iface struct{ typ, data unsafe.Pointer }
	return (*iface)(unsafe.Pointer(&a)).data == (*iface)(unsafe.Pointer(&b)).data
}
