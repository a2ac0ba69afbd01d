package cql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/internal/schematest"
	"pgregory.net/rapid"
)

// flatten lists the keyspaces and tables of s for comparison.
func flatten(s schema.Schema) (ks []*schema.Keyspace, tables []*schema.Table) {
	for _, k := range s.Keyspaces() {
		ks = append(ks, k)
		tables = append(tables, k.Tables()...)
	}
	return ks, tables
}

// TestDescribeParseApply checks that DESCRIBE output of a random schema
// parses and applies to the same schema.
func TestDescribeParseApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s schema.Schema
		epoch := uint64(0)
		for range rapid.IntRange(1, 3).Draw(t, "keyspaces") {
			epoch++
			ck := schematest.CreateKeyspace(t)
			ns, _, _, err := schema.Apply(s, ck, schema.Env{Epoch: epoch})
			if err != nil {
				continue // a duplicate name
			}
			s = ns
			for range rapid.IntRange(0, 4).Draw(t, "tables") {
				epoch++
				if ns, _, _, err := schema.Apply(s, schematest.CreateTable(t, ck.Name), schema.Env{Epoch: epoch}); err == nil {
					s = ns
				}
			}
		}
		text := schema.DescribeSchema(s)
		parsed, err := Parse(text)
		if err != nil {
			t.Fatalf("DESCRIBE output does not parse: %v\n%s", err, text)
		}
		var got schema.Schema
		for i, p := range parsed {
			// A different epoch: ids must come from WITH ID.
			if got, _, _, err = schema.Apply(got, p.Statement, schema.Env{Epoch: 1000 + uint64(i)}); err != nil {
				t.Fatalf("apply %q: %v", p.Text, err)
			}
		}
		if again := schema.DescribeSchema(got); again != text {
			t.Fatalf("DESCRIBE differs after the round trip:\n%s\n---\n%s", text, again)
		}
		wantKS, wantTables := flatten(s)
		gotKS, gotTables := flatten(got)
		opts := cmp.Options{cmpopts.IgnoreUnexported(schema.Keyspace{}), cmpopts.EquateEmpty()}
		if d := cmp.Diff(wantKS, gotKS, opts); d != "" {
			t.Fatalf("keyspaces differ (-want +got):\n%s", d)
		}
		if d := cmp.Diff(wantTables, gotTables, opts); d != "" {
			t.Fatalf("tables differ (-want +got):\n%s", d)
		}
		if got.TableCount() != s.TableCount() || got.KeyspaceCount() != s.KeyspaceCount() {
			t.Fatalf("counts differ")
		}
	})
}
