package schema

import (
	"errors"
	"strings"
	"testing"
)

func minimalTable(t testing.TB) *Table {
	s := mustApply(t, Schema{}, simpleKS("ks"), simpleTable("ks", "t_1"))
	tbl, _ := s.Table("ks", "t_1")
	return tbl
}

func TestEncodingSize(t *testing.T) {
	b := AppendTable(nil, minimalTable(t))
	if len(b) >= 64 {
		t.Errorf("minimal table encodes to %d bytes, want well under 100", len(b))
	}
	t.Logf("minimal table: %d bytes", len(b))
	k, _ := mustApply(t, Schema{}, simpleKS("ks")).Keyspace("ks")
	if kb := AppendKeyspace(nil, k); len(kb) > 32 {
		t.Errorf("simple keyspace encodes to %d bytes", len(kb))
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := AppendTable(nil, minimalTable(t))
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "unexpected end of input"},
		{"version", mutate(func(b []byte) []byte { b[0] = 9; return b }), "unsupported format version 9"},
		{"record kind", mutate(func(b []byte) []byte { b[1] = 'K'; return b }), "record kind"},
		{"flags", mutate(func(b []byte) []byte { b[2] = 0x80; return b }), "unknown table flags"},
		{"truncated", good[:len(good)-3], "exceeds the remaining input"},
		{"truncated id", good[:12], "unexpected end of input"},
		{"trailing", append(append([]byte(nil), good...), 0), "1 trailing bytes"},
		{"bad name", mutate(func(b []byte) []byte { b[4] = '-'; return b }), `keyspace name "-s" is invalid`},
		{"huge count", append(append([]byte(nil), good[:3]...), 0xff, 0xff, 0xff, 0xff, 0x0f), "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTable(tt.in)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
	k := &Keyspace{Name: "ks", Replication: Replication{Class: SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}}
	kb := AppendKeyspace(nil, k)
	if _, err := DecodeKeyspace(kb[:len(kb)-1]); !errors.Is(err, ErrInvalid) {
		t.Fatalf("truncated keyspace: %v", err)
	}
	if _, err := DecodeKeyspace(good); !errors.Is(err, ErrInvalid) {
		t.Fatalf("table bytes decoded as keyspace: %v", err)
	}
}

func FuzzDecodeTable(f *testing.F) {
	f.Add(AppendTable(nil, minimalTable(f)))
	s := mustApply(f, Schema{}, simpleKS("ks"), &CreateTable{Keyspace: "ks", Name: "t",
		Columns:      []ColumnDef{{Name: "a", Type: TypeInt}, {Name: "b", Type: FrozenType{Inner: MapType{Key: TypeText, Value: TupleType{Elems: []Type{TypeInt, TypeText}}}}}, {Name: "c", Type: VectorType{Elem: TypeFloat, Dimension: 4}}, {Name: "s", Type: SetType{Elem: TypeInt}, Static: true}},
		PartitionKey: []string{"a"}, Clustering: []string{"b"}, Options: map[string]string{"comment": "'x'"}})
	tbl, _ := s.Table("ks", "t")
	f.Add(AppendTable(nil, tbl))
	f.Add(AppendTable(nil, maskedTable(f)))
	_, dropped := droppedKindTable(f, CurrentRules)
	f.Add(AppendTable(nil, dropped))
	views := mustApply(f, viewKS(f), &CreateView{Keyspace: "ks", Name: "rel", Base: "b", Columns: []string{"k", "c"}, PartitionKey: []string{"c", "k"},
		Where: []ViewRelation{{Columns: []string{"k"}, Op: RelIn, Value: "(1, -2)"}, {Columns: []string{"c"}, Tuple: true, Op: ">=", Value: "(0)"}}},
		&CreateView{Keyspace: "ks", Name: "expr", Base: "b", Columns: []string{"k", "c"}, PartitionKey: []string{"c", "k"},
			Where: []ViewRelation{{Columns: []string{"k"}, Op: RelEQ, Value: "(int)1 + abs(-2) * 3"}, {Columns: []string{"c"}, Op: ">", Value: "-system.abs(1) % 2"}}})
	for _, name := range []string{"a_by_w", "b_by_v", "rel", "expr"} {
		v, _ := views.Table("ks", name)
		f.Add(AppendTable(nil, v))
	}
	f.Add([]byte{})
	f.Add([]byte{EncodingVersion, recordTable, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tbl, err := DecodeTable(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		// A table that decodes is valid: it re-encodes and decodes to the
		// same value, and can be put into a schema and described.
		b2 := AppendTable(nil, tbl)
		tbl2, err := DecodeTable(b2)
		if err != nil {
			t.Fatalf("re-encoded table does not decode: %v", err)
		}
		if DescribeTable(tbl) != DescribeTable(tbl2) || string(AppendTable(nil, tbl2)) != string(b2) {
			t.Fatalf("round trip changed the table")
		}
		var sb Builder
		sb.PutKeyspace(&Keyspace{Name: tbl.Keyspace})
		if err := sb.PutTable(tbl); err != nil {
			t.Fatalf("decoded table rejected by PutTable: %v", err)
		}
	})
}

func FuzzDecodeKeyspace(f *testing.F) {
	k, _ := mustApply(f, Schema{}, simpleKS("ks")).Keyspace("ks")
	f.Add(AppendKeyspace(nil, k))
	f.Add(AppendKeyspace(nil, &Keyspace{Name: "x", Replication: Replication{Class: "custom", Options: map[string]string{"a": "1", "b": "2"}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKeyspace(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		if _, err := DecodeKeyspace(AppendKeyspace(nil, k)); err != nil {
			t.Fatalf("re-encoded keyspace does not decode: %v", err)
		}
	})
}

func sampleTypeAndIndex(t testing.TB) (*UserType, *Index, *Index) {
	s := mustApply(t, Schema{}, simpleKS("ks"),
		&CreateType{Keyspace: "ks", Name: "addr", Fields: []Field{{Name: "street", Type: TypeText}, {Name: "tags", Type: SetType{Elem: TypeText}}}},
		&CreateType{Keyspace: "ks", Name: "person", Fields: []Field{{Name: "home", Type: FrozenType{Inner: UserTypeRef{Name: "addr"}}}}},
		&CreateTable{Keyspace: "ks", Name: "t", Columns: []ColumnDef{{Name: "k", Type: TypeInt}, {Name: "c", Type: TypeInt}, {Name: "m", Type: MapType{Key: TypeText, Value: TypeInt}}}, PartitionKey: []string{"k"}, Clustering: []string{"c"}},
		&CreateIndex{Keyspace: "ks", Table: "t", Target: IndexTarget{Column: "m", Kind: TargetKeys}},
		&CreateIndex{Keyspace: "ks", Table: "t", Name: "sai", Target: IndexTarget{Column: "c"}, Custom: true, Class: "sai", Options: map[string]string{"a": "b"}})
	k, _ := s.Keyspace("ks")
	ut, _ := k.UserType("person")
	ix1, _ := k.Index("t_m_idx")
	ix2, _ := k.Index("sai")
	return ut, ix1, ix2
}

func TestEncodeTypesAndIndexes(t *testing.T) {
	ut, ix1, ix2 := sampleTypeAndIndex(t)
	b := AppendUserType(nil, ut)
	got, err := DecodeUserType(b)
	if err != nil || DescribeUserType(got) != DescribeUserType(ut) || string(AppendUserType(nil, got)) != string(b) {
		t.Fatalf("user type round trip: %v\n%s", err, DescribeUserType(got))
	}
	for _, ix := range []*Index{ix1, ix2} {
		b := AppendIndex(nil, ix)
		got, err := DecodeIndex(b)
		if err != nil || DescribeIndex(got) != DescribeIndex(ix) || string(AppendIndex(nil, got)) != string(b) {
			t.Fatalf("index round trip: %v\n%s", err, DescribeIndex(got))
		}
	}
	if _, err := DecodeIndex(AppendUserType(nil, ut)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("type bytes decoded as an index: %v", err)
	}
	if _, err := DecodeUserType(b[:len(b)-1]); !errors.Is(err, ErrInvalid) {
		t.Fatalf("truncated type: %v", err)
	}
	// A table with dropped columns round-trips; the flag is only set when
	// there are some, so old encodings stay valid.
	tbl := *minimalTable(t)
	tbl.SetDroppedColumns([]DroppedColumn{{Name: "gone", Type: TupleType{Elems: []Type{TypeInt}}, Epoch: 1 << 40}})
	tb := AppendTable(nil, &tbl)
	got2, err := DecodeTable(tb)
	if err != nil || len(got2.DroppedColumns()) != 1 || got2.DroppedColumns()[0].Epoch != 1<<40 {
		t.Fatalf("dropped columns round trip: %v %+v", err, got2)
	}
	bad := tbl
	bad.SetDroppedColumns([]DroppedColumn{{Name: "gone", Type: UserTypeRef{Name: "addr"}}})
	if _, err := DecodeTable(AppendTable(nil, &bad)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("dropped column with a user type: %v", err)
	}
}

func FuzzDecodeUserType(f *testing.F) {
	ut, _, _ := sampleTypeAndIndex(f)
	f.Add(AppendUserType(nil, ut))
	f.Add([]byte{EncodingVersion, recordType})
	f.Fuzz(func(t *testing.T, b []byte) {
		ut, err := DecodeUserType(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		b2 := AppendUserType(nil, ut)
		ut2, err := DecodeUserType(b2)
		if err != nil || string(AppendUserType(nil, ut2)) != string(b2) || DescribeUserType(ut) != DescribeUserType(ut2) {
			t.Fatalf("round trip changed the type: %v", err)
		}
		var sb Builder
		sb.PutKeyspace(&Keyspace{Name: ut.Keyspace})
		if err := sb.PutUserType(ut); err != nil {
			t.Fatalf("decoded type rejected by PutUserType: %v", err)
		}
	})
}

func FuzzDecodeIndex(f *testing.F) {
	_, ix1, ix2 := sampleTypeAndIndex(f)
	f.Add(AppendIndex(nil, ix1))
	f.Add(AppendIndex(nil, ix2))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := DecodeIndex(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		b2 := AppendIndex(nil, ix)
		ix2, err := DecodeIndex(b2)
		if err != nil || string(AppendIndex(nil, ix2)) != string(b2) || DescribeIndex(ix) != DescribeIndex(ix2) {
			t.Fatalf("round trip changed the index: %v", err)
		}
	})
}

// TestDecodeTextID: a table holds its id as 16 bytes and encodes it so; a
// record holding the id as text (flagTextID) decodes when the text is
// lowercase UUID text, to the same table, and is refused otherwise, as
// validation refused such an id when tables held text.
func TestDecodeTextID(t *testing.T) {
	tbl := minimalTable(t)
	good := AppendTable(nil, tbl)
	idAt := 3 + 1 + len(tbl.Keyspace) + 1 + len(tbl.Name)
	if got := UUID(good[idAt : idAt+16]); got != tbl.ID {
		t.Fatalf("id bytes at %d are %s, want %s", idAt, got, tbl.ID)
	}
	withText := func(id string) []byte {
		b := append([]byte(nil), good[:idAt]...)
		b[2] |= flagTextID
		b = appendString(b, id)
		return append(b, good[idAt+16:]...)
	}
	got, err := DecodeTable(withText(tbl.ID.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != tbl.ID || string(AppendTable(nil, got)) != string(good) {
		t.Errorf("text id decodes to %s encoding as %x, want %s encoding as %x", got.ID, AppendTable(nil, got), tbl.ID, good)
	}
	for _, id := range []string{strings.ToUpper(tbl.ID.String()), "not-a-uuid", ""} {
		if _, err := DecodeTable(withText(id)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not lowercase UUID text") {
			t.Errorf("text id %q: err = %v, want ErrInvalid saying it is not lowercase UUID text", id, err)
		}
	}
}
