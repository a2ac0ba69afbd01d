package systemschema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
)

// wide builds keyspaces a, b and c, each with n tables of three columns
// (one indexed), in one change.
func wide(t testing.TB, n int) schema.Schema {
	var b strings.Builder
	for _, ks := range []string{"a", "b", "c"} {
		fmt.Fprintf(&b, "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n", ks)
		for i := range n {
			fmt.Fprintf(&b, "CREATE TABLE %s.t%05d (k int, c int, v text, PRIMARY KEY (k, c));\n", ks, i)
			fmt.Fprintf(&b, "CREATE INDEX ON %s.t%05d (v);\n", ks, i)
		}
	}
	s, _ := schemakit.Apply(t, schema.Schema{}, b.String(), schemakit.OneEpoch(1))
	return s
}

// all returns every row of tbl that q selects, in one scan.
func all(s schema.Schema, tbl *systemschema.Table, q systemschema.Query) []systemschema.Row {
	var out []systemschema.Row
	for _, r := range tbl.Scan(s, q) {
		out = append(out, r)
	}
	return out
}

// paged returns the rows of tbl that q selects, read in pages of k.
func paged(t *testing.T, s schema.Schema, tbl *systemschema.Table, q systemschema.Query, k int) []systemschema.Row {
	var out []systemschema.Row
	for pages := 0; ; pages++ {
		if pages > 100000 {
			t.Fatalf("%s: paging does not end", tbl.Name)
		}
		rows, next, more := tbl.Page(s, q, k)
		if len(rows) > k || more && len(rows) != k {
			t.Fatalf("%s: page of %d rows (limit %d, more %v)", tbl.Name, len(rows), k, more)
		}
		out = append(out, rows...)
		if !more {
			return out
		}
		q.After = next
	}
}

func TestPagesConcatenate(t *testing.T) {
	s := wide(t, 7)
	s, _ = schemakit.Apply(t, s, everyCQL(), schemakit.EpochEach(10))
	queries := []systemschema.Query{{}, {Keyspace: "b"}, {Keyspace: "shop"}, {Keyspace: "shop", Name: "orders"}, {Keyspace: "a", Name: "t00003"}, {Keyspace: "nope"}}
	for _, tbl := range systemschema.All() {
		for _, q := range queries {
			want := all(s, tbl, q)
			for _, k := range []int{1, 2, 3, 5, 64} {
				got := paged(t, s, tbl, q, k)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%s %+v in pages of %d (-scan +pages):\n%s", tbl.Name, q, k, d)
				}
			}
		}
	}
	if n := len(all(s, systemschema.Columns, systemschema.Query{})); n < 3*7*3 {
		t.Errorf("%d columns rows, want at least %d", n, 3*7*3)
	}
}

// TestPageAllocations checks a page from the middle costs as many
// allocations with 8 times the tables: finding its start does not walk
// what comes before it.
func TestPageAllocations(t *testing.T) {
	const k = 10
	per := func(n int, tbl *systemschema.Table) float64 {
		s := wide(t, n)
		_, next, _ := tbl.Page(s, systemschema.Query{After: systemschema.Position{Keyspace: "b", Object: fmt.Sprintf("t%05d", n/2)}}, 1)
		q := systemschema.Query{After: next}
		return testing.AllocsPerRun(20, func() {
			if rows, _, _ := tbl.Page(s, q, k); len(rows) != k {
				t.Fatalf("%s: page of %d rows", tbl.Name, len(rows))
			}
		})
	}
	for _, tbl := range []*systemschema.Table{systemschema.Tables, systemschema.Columns, systemschema.Indexes} {
		small, large := per(100, tbl), per(800, tbl)
		t.Logf("%s: %v allocations per page at 100 tables, %v at 800", tbl.Name, small, large)
		if large > small {
			t.Errorf("%s: %v allocations per page of %d at 800 tables a keyspace, %v at 100", tbl.Name, large, k, small)
		}
	}
}

func TestVisibleHidesKeyspaces(t *testing.T) {
	s := build(t)
	hideGeo := func(ks string) bool { return ks != "geo" }
	got := rows(s, systemschema.Keyspaces, systemschema.Query{Visible: hideGeo})
	if len(got) != 1 || got[0]["keyspace_name"] != "shop" {
		t.Errorf("keyspaces with geo hidden: %v", got)
	}
	for _, tbl := range systemschema.All() {
		if got := rows(s, tbl, systemschema.Query{Keyspace: "geo", Visible: hideGeo}); len(got) != 0 {
			t.Errorf("%s of hidden geo: %v", tbl.Name, got)
		}
		hideShop := func(ks string) bool { return ks != "shop" }
		for _, r := range rows(s, tbl, systemschema.Query{Visible: hideShop}) {
			if r["keyspace_name"] == "shop" {
				t.Errorf("%s shows hidden shop: %v", tbl.Name, r)
			}
		}
		if tbl != systemschema.Keyspaces && len(rows(s, tbl, systemschema.Query{Keyspace: "shop"})) == 0 {
			t.Errorf("%s: no rows for shop, so hiding it proves nothing", tbl.Name)
		}
	}
}
