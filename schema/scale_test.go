package schema

import (
	"runtime"
	"strconv"
	"testing"
)

// schemaWithTables returns a schema with one keyspace holding n tables and
// 10 other keyspaces, its tables put one at a time (as a schema grown by
// DDL has them, each put copying a path of the table map).
func schemaWithTables(t testing.TB, n int) Schema {
	s := mustApply(t, Schema{}, simpleKS("ks"))
	for i := range 10 {
		s = mustApply(t, s, simpleKS("other"+strconv.Itoa(i)))
	}
	proto := minimalTable(t)
	b := NewBuilder(s)
	for i := range n {
		tbl := *proto
		tbl.Keyspace = "ks"
		tbl.Name = "t" + strconv.Itoa(i)
		tbl.ID = TableID(uint64(i+100), 0)
		if err := b.putTableAlone(&tbl); err != nil {
			t.Fatal(err)
		}
	}
	return b.Schema()
}

// scaleStatements are the per-DDL statements whose cost must not depend on
// the number of tables (schemaWithTables has ks.t0 .. ks.t<n-1>).
func scaleStatements() []struct {
	name string
	st   Statement
} {
	return []struct {
		name string
		st   Statement
	}{
		{"CreateTable", simpleTable("ks", "new_table")},
		{"CreateTableLike", &CreateTableLike{Keyspace: "ks", Name: "new_table", SourceKeyspace: "ks", Source: "t5", Options: map[string]string{"comment": "'copy'"}}},
		{"AlterTableAdd", &AlterTable{Keyspace: "ks", Name: "t5", Add: []ColumnDef{{Name: "added", Type: TypeBigint}}}},
		{"AlterTableAddMasked", &AlterTable{Keyspace: "ks", Name: "t5", Add: []ColumnDef{{Name: "added", Type: TypeText, Mask: &MaskDef{Function: "mask_inner", Args: []Literal{{Kind: LitInt, Text: "1"}, {Kind: LitInt, Text: "2"}}}}}}},
		{"AlterTableMask", &AlterTable{Keyspace: "ks", Name: "t5", Mask: &AlterMask{Column: "v", Mask: &MaskDef{Function: "mask_replace", Args: []Literal{{Kind: LitString, Text: "redacted"}}}}}},
		{"CreateTableLikeWithIndexes", &CreateTableLike{Keyspace: "ks", Name: "new_table", SourceKeyspace: "ks", Source: "t5", Indexes: true}},
		{"CreateIndex", &CreateIndex{Keyspace: "ks", Table: "t5", Target: IndexTarget{Column: "v"}}},
		{"CreateType", &CreateType{Keyspace: "ks", Name: "new_type", Fields: []Field{{Name: "a", Type: TypeInt}, {Name: "b", Type: TypeText}}}},
		{"DropTable", &DropTable{Keyspace: "ks", Name: "t5"}},
	}
}

// TestApplyDoesNotWalkTables checks that a DDL costs the same allocations
// with 1,000 tables as with 8,000 (within 1.2x, which leaves room for the
// B+tree's extra level), so nothing on the apply path is proportional to
// the number of tables.
func TestApplyDoesNotWalkTables(t *testing.T) {
	const n = 1000
	small, large := schemaWithTables(t, n), schemaWithTables(t, 8*n)
	for _, tt := range scaleStatements() {
		allocs := func(s Schema) float64 {
			return testing.AllocsPerRun(100, func() {
				if _, _, _, err := Apply(s, tt.st, Env{Epoch: 1}); err != nil {
					t.Fatal(err)
				}
			})
		}
		a, b := allocs(small), allocs(large)
		t.Logf("%s: %v allocations with %d tables, %v with %d", tt.name, a, n, b, 8*n)
		if b > 1.2*a {
			t.Errorf("%s allocates %v with %d tables vs %v with %d", tt.name, b, 8*n, a, n)
		}
	}
}

func BenchmarkApply(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		s := schemaWithTables(b, n)
		for _, tt := range scaleStatements() {
			b.Run(tt.name+"/"+strconv.Itoa(n)+"tables", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, _, err := Apply(s, tt.st, Env{Epoch: 1}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAppendTable(b *testing.B) {
	tbl := minimalTable(b)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTable(buf[:0], tbl)
	}
}

func BenchmarkDecodeTable(b *testing.B) {
	enc := AppendTable(nil, minimalTable(b))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTable(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAdmitChangeDoesNotWalkTables checks that the admission rules that
// depend on the change (AdmitChange) allocate the same bytes with 1,000
// tables as with 8,000, for ALTER TYPE ADD of a type a table uses (which
// looks for the partition keys that use it). Bytes, not allocations: a
// walk of the tables costs one allocation whatever their number.
func TestAdmitChangeDoesNotWalkTables(t *testing.T) {
	const n = 1000
	setup := func(n int) Schema {
		s := mustApply(t, schemaWithTables(t, n), &CreateType{Keyspace: "ks", Name: "u", Fields: []Field{{Name: "a", Type: TypeInt}}})
		return mustApply(t, s, &AlterTable{Keyspace: "ks", Name: "t5", Add: []ColumnDef{{Name: "w", Type: FrozenType{Inner: UserTypeRef{Name: "u"}}}}})
	}
	st := &AlterType{Keyspace: "ks", Name: "u", Add: &Field{Name: "b", Type: TypeText}}
	bytes := func(s Schema) uint64 {
		after, _, res, err := Apply(s, st, Env{Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		return bytesPerRun(100, func() {
			if err := AdmitChange(s, after, st, res); err != nil {
				t.Fatal(err)
			}
		})
	}
	a, b := bytes(setup(n)), bytes(setup(8*n))
	t.Logf("AdmitChange of ALTER TYPE ADD: %d bytes with %d tables, %d with %d", a, n, b, 8*n)
	if float64(b) > 1.2*float64(a)+64 {
		t.Errorf("AdmitChange allocates %d bytes with %d tables vs %d with %d", b, 8*n, a, n)
	}
}

// bytesPerRun returns the bytes f allocates per call, averaged over runs.
func bytesPerRun(runs int, f func()) uint64 {
	f() // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}
