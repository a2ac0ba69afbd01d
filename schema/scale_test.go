package schema

import (
	"strconv"
	"testing"
)

// schemaWithTables returns a schema with one keyspace holding n tables and
// 10 other keyspaces, built with PutTable as a loaded store would.
func schemaWithTables(t testing.TB, n int) Schema {
	s := mustApply(t, Schema{}, simpleKS("ks"))
	for i := range 10 {
		s = mustApply(t, s, simpleKS("other"+strconv.Itoa(i)))
	}
	proto := minimalTable(t)
	for i := range n {
		tbl := *proto
		tbl.Keyspace = "ks"
		tbl.Name = "t" + strconv.Itoa(i)
		tbl.ID = TableID(uint64(i+100), 0)
		var err error
		if s, err = s.PutTable(&tbl); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestApplyDoesNotWalkTables checks that one CREATE TABLE costs the same
// allocations into 100 tables as into 10,000 (up to the extra B+tree level),
// so nothing on the apply path is proportional to the number of tables.
func TestApplyDoesNotWalkTables(t *testing.T) {
	st := simpleTable("ks", "new_table")
	allocs := func(n int) float64 {
		s := schemaWithTables(t, n)
		return testing.AllocsPerRun(100, func() {
			if _, _, _, err := Apply(s, st, Env{Epoch: 1}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(10_000)
	t.Logf("allocations per CREATE TABLE: %v with 100 tables, %v with 10,000", small, large)
	// The only difference allowed is the B+tree's depth: 10,000 entries
	// need one more level than 100 (fan-out 32), and copying a level costs
	// a node, its child slice and, when it splits, a sibling.
	const perLevel = 6
	if large > small+perLevel {
		t.Fatalf("CREATE TABLE allocates %v with 10,000 tables vs %v with 100", large, small)
	}
	drop := &DropTable{Keyspace: "ks", Name: "t5"}
	dropAllocs := func(n int) float64 {
		s := schemaWithTables(t, n)
		return testing.AllocsPerRun(100, func() { Apply(s, drop, Env{}) })
	}
	if small, large := dropAllocs(100), dropAllocs(10_000); large > small+perLevel {
		t.Fatalf("DROP TABLE allocates %v with 10,000 tables vs %v with 100", large, small)
	}
}

func BenchmarkApplyCreateTable(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(strconv.Itoa(n)+"tables", func(b *testing.B) {
			s := schemaWithTables(b, n)
			st := simpleTable("ks", "new_table")
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, err := Apply(s, st, Env{Epoch: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
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
