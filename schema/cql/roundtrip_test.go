package cql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// flatten lists the keyspaces, tables, types and indexes of s for
// comparison.
func flatten(s schema.Schema) (ks []*schema.Keyspace, tables []*schema.Table, types []*schema.UserType, indexes []*schema.Index) {
	for _, k := range s.Keyspaces() {
		ks = append(ks, k)
		tables = append(tables, k.Tables()...)
		types = append(types, k.UserTypes()...)
		indexes = append(indexes, k.Indexes()...)
	}
	return ks, tables, types, indexes
}

// withoutDroppedColumns compares tables as if they had no dropped
// columns.
var withoutDroppedColumns = cmp.Transformer("withoutDroppedColumns", func(t *schema.Table) schema.Table {
	c := *t
	c.SetDroppedColumns(nil)
	return c
})

// TestDescribeParseApply checks that DESCRIBE output of a random schema
// with user types, indexes, altered tables and dropped columns parses and
// applies to the same schema, up to the order of a table's columns
// (DESCRIBE lists them in Cassandra's order), whose own round trip keeps
// its digest. Dropped-column records are not part of DESCRIBE (see
// describe.Schema), so they are left out of the comparison: the round
// trip has none.
func TestDescribeParseApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s schema.Schema
		epoch := uint64(0)
		apply := func(st schema.Statement) bool {
			epoch++
			ns, _, _, err := schema.Apply(s, st, schema.Env{Epoch: epoch})
			if err == nil {
				s = ns
			}
			return err == nil
		}
		for range rapid.IntRange(1, 3).Draw(t, "keyspaces") {
			ck := schematest.CreateKeyspace(t)
			if !apply(ck) {
				continue // a duplicate name
			}
			var types []string
			for range rapid.IntRange(0, 3).Draw(t, "types") {
				ct := schematest.CreateType(t, ck.Name, types)
				if apply(ct) {
					types = append(types, ct.Name)
				}
			}
			if len(types) > 0 && rapid.Bool().Draw(t, "alter type") {
				apply(&schema.AlterType{Keyspace: ck.Name, Name: types[0], Add: &schema.Field{Name: "added_field", Type: schema.TypeBigint}})
			}
			for range rapid.IntRange(0, 4).Draw(t, "tables") {
				ct := schematest.CreateTableWithTypes(t, ck.Name, types)
				if !apply(ct) {
					continue
				}
				k, _ := s.Keyspace(ck.Name)
				tbl, _ := k.Table(ct.Name)
				var regular []string
				for _, c := range tbl.Columns {
					if c.Kind == schema.Regular || c.Kind == schema.Static {
						regular = append(regular, c.Name)
					}
				}
				if len(regular) > 0 && rapid.Bool().Draw(t, "drop column") {
					apply(&schema.AlterTable{Keyspace: ck.Name, Name: ct.Name, Drop: []string{rapid.SampledFrom(regular).Draw(t, "dropped")}})
				}
				if rapid.Bool().Draw(t, "add column") {
					apply(&schema.AlterTable{Keyspace: ck.Name, Name: ct.Name, Add: []schema.ColumnDef{{Name: schematest.ColumnName(t, "added"), Type: schematest.RegularType(t, "added type")}}})
				}
				if rapid.Bool().Draw(t, "alter options") {
					name, v := schematest.Option(t)
					apply(&schema.AlterTable{Keyspace: ck.Name, Name: ct.Name, Options: map[string]string{name: v}})
				}
				for range rapid.IntRange(0, 2).Draw(t, "indexes") {
					k, _ := s.Keyspace(ck.Name)
					tbl, _ := k.Table(ct.Name)
					col := rapid.SampledFrom(tbl.Columns).Draw(t, "indexed")
					kind := rapid.SampledFrom([]schema.TargetKind{schema.TargetSimple, schema.TargetKeys, schema.TargetEntries, schema.TargetFull}).Draw(t, "target")
					name := ""
					if rapid.Bool().Draw(t, "named") {
						name = rapid.StringMatching(`[a-z][a-z0-9_]{0,10}`).Draw(t, "index name")
					}
					apply(&schema.CreateIndex{Keyspace: ck.Name, Table: ct.Name, Name: name, Target: schema.IndexTarget{Column: col.Name, Kind: kind}, Custom: rapid.Bool().Draw(t, "sai"), Class: "sai"})
				}
			}
		}
		text := describe.Schema(s)
		parsed, err := Parse(text)
		if err != nil {
			t.Fatalf("DESCRIBE output does not parse: %v\n%s", err, text)
		}
		var got schema.Schema
		for i, p := range parsed {
			// A different epoch: ids must come from WITH ID.
			if got, _, _, err = schema.Apply(got, p.Statement, schema.Env{Epoch: 1000 + uint64(i)}); err != nil {
				t.Fatalf("apply %q: %v\n%s", p.Text, err, text)
			}
		}
		if again := describe.Schema(got); again != text {
			t.Fatalf("DESCRIBE differs after the round trip:\n%s\n---\n%s", text, again)
		}
		wantKS, wantTables, wantTypes, wantIndexes := flatten(s)
		gotKS, gotTables, gotTypes, gotIndexes := flatten(got)
		opts := cmp.Options{cmpopts.IgnoreUnexported(schema.Keyspace{}), cmpopts.EquateEmpty(), withoutDroppedColumns, anyColumnOrder}
		if d := cmp.Diff(wantKS, gotKS, opts); d != "" {
			t.Fatalf("keyspaces differ (-want +got):\n%s", d)
		}
		if d := cmp.Diff(wantTables, gotTables, opts); d != "" {
			t.Fatalf("tables differ (-want +got):\n%s", d)
		}
		if d := cmp.Diff(wantTypes, gotTypes, opts); d != "" {
			t.Fatalf("types differ (-want +got):\n%s", d)
		}
		if d := cmp.Diff(wantIndexes, gotIndexes, opts); d != "" {
			t.Fatalf("indexes differ (-want +got):\n%s", d)
		}
		checkDigestFixed(t, got)
		if got.TableCount() != s.TableCount() || got.KeyspaceCount() != s.KeyspaceCount() {
			t.Fatalf("counts differ")
		}
	})
}
