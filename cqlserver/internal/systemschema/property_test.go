package systemschema_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"pgregory.net/rapid"
)

// TestColumnsProperty checks, on random schemas, that each table and view
// has exactly its columns in columns, with kinds and positions that agree
// with its keys, that the tables and views rows name each object once,
// and that pages of a drawn size concatenate to the scan.
func TestColumnsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := schematest.Schema(t, schematest.SmallPool, 1, nil)
		byTable := map[[2]string][]map[string]any{}
		for _, r := range rows(s, systemschema.Columns, systemschema.Query{}) {
			key := [2]string{r["keyspace_name"].(string), r["table_name"].(string)}
			byTable[key] = append(byTable[key], r)
		}
		objects := 0
		for _, k := range s.Keyspaces() {
			for _, tb := range k.Tables() {
				objects++
				checkColumns(t, tb, byTable[[2]string{k.Name, tb.Name}])
				delete(byTable, [2]string{k.Name, tb.Name})
			}
		}
		if len(byTable) != 0 {
			t.Fatalf("columns rows of no table: %v", byTable)
		}
		named := len(rows(s, systemschema.Tables, systemschema.Query{})) + len(rows(s, systemschema.Views, systemschema.Query{}))
		if named != objects {
			t.Fatalf("%d tables and views rows for %d tables and views", named, objects)
		}
		tbl := rapid.SampledFrom(systemschema.All()).Draw(t, "table")
		k := rapid.IntRange(1, 9).Draw(t, "page")
		var got []systemschema.Row
		q := systemschema.Query{}
		for more := true; more; {
			var page []systemschema.Row
			page, q.After, more = tbl.Page(s, q, k)
			got = append(got, page...)
		}
		if d := cmp.Diff(all(s, tbl, systemschema.Query{}), got); d != "" {
			t.Fatalf("%s in pages of %d (-scan +pages):\n%s", tbl.Name, k, d)
		}
	})
}

// checkColumns checks the columns rows of tb.
func checkColumns(t *rapid.T, tb *schema.Table, got []map[string]any) {
	if len(got) != len(tb.Columns) {
		t.Fatalf("%s: %d columns rows for %d columns", tb.QualifiedName(), len(got), len(tb.Columns))
	}
	for i, r := range got {
		name := r["column_name"].(string)
		if i > 0 && got[i-1]["column_name"].(string) >= name {
			t.Fatalf("%s: column %q after %q", tb.QualifiedName(), name, got[i-1]["column_name"])
		}
		c, ok := tb.Column(name)
		if !ok {
			t.Fatalf("%s: row for no column %q", tb.QualifiedName(), name)
		}
		pos, kind, order := r["position"].(int32), r["kind"].(string), r["clustering_order"].(string)
		want := int32(-1)
		switch c.Kind {
		case schema.PartitionKey:
			want = int32(slices.Index(tb.PartitionKey, name))
		case schema.Clustering:
			want = int32(slices.IndexFunc(tb.Clustering, func(cc schema.ClusteringColumn) bool { return cc.Name == name }))
			if wantOrder := map[schema.Order]string{schema.Asc: "asc", schema.Desc: "desc"}[tb.Clustering[want].Order]; order != wantOrder {
				t.Fatalf("%s.%s: clustering_order %q, want %q", tb.QualifiedName(), name, order, wantOrder)
			}
		}
		if c.Kind != schema.Clustering && order != "none" {
			t.Fatalf("%s.%s: clustering_order %q of a %s column", tb.QualifiedName(), name, order, c.Kind)
		}
		if pos != want || (c.Kind == schema.PartitionKey || c.Kind == schema.Clustering) && pos < 0 || kind != c.Kind.String() {
			t.Fatalf("%s.%s: kind %s position %d, want %s %d", tb.QualifiedName(), name, kind, pos, c.Kind, want)
		}
	}
}
