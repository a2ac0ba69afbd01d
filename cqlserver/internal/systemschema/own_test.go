package systemschema_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
)

// TestOwnTables: Own holds a table for every table declared, with its
// columns in the declared kinds and types, and the ids Cassandra gives
// them (the values a Cassandra 4 or 5 node shows in system_schema.tables).
func TestOwnTables(t *testing.T) {
	own := systemschema.Own()
	decls := map[string][]*systemschema.Table{
		"system":        {systemschema.Local, systemschema.Peers, systemschema.PeersV2},
		"system_schema": systemschema.All(),
	}
	for ks, tables := range decls {
		k, ok := own.Keyspace(ks)
		if !ok || k.Replication.Class != "org.apache.cassandra.locator.LocalStrategy" {
			t.Fatalf("Own has no LocalStrategy keyspace %s: %+v", ks, k)
		}
		if got := len(k.Tables()); got != len(tables) {
			t.Errorf("%s has %d tables, %d declared", ks, got, len(tables))
		}
		for _, decl := range tables {
			tb, ok := own.Table(ks, decl.Name)
			if !ok {
				t.Errorf("Own has no table %s.%s", ks, decl.Name)
				continue
			}
			var got []string
			for _, c := range tb.Columns {
				got = append(got, c.Name+" "+systemschema.TypeText(c.Type))
			}
			var want []string
			for _, c := range decl.Columns {
				want = append(want, c.Name+" "+c.Type)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s.%s columns %q, declared %q", ks, decl.Name, got, want)
			}
		}
	}
	for name, want := range map[string]string{
		"system_schema.keyspaces": "abac5682-dea6-31c5-b535-b3d6cffd0fb6",
		"system_schema.tables":    "afddfb9d-bc1e-3068-8056-eed6c302ba09",
		"system.local":            "7ad54392-bcdd-35a6-8417-4e047860b377",
	} {
		ks, table, _ := strings.Cut(name, ".")
		tb, _ := own.Table(ks, table)
		if tb == nil || fmt.Sprint(tb.ID) != want {
			t.Errorf("%s id %v, want %s", name, tb, want)
		}
	}
}

// TestScanOwn: with Query.Own the keyspaces rows list Own's keyspaces
// among the schema's, in name order, to a reader who may see no keyspace
// of the schema; a keyspace of the schema named as one of Own's is left
// out; without it, only the schema's.
func TestScanOwn(t *testing.T) {
	s := schemakit.Build(t, `CREATE KEYSPACE alpha WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE zeta WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};`)
	b := schema.NewBuilder(s)
	b.PutKeyspace(&schema.Keyspace{Name: "system", Replication: schema.Replication{Class: schema.SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}})
	s = b.Schema()
	names := func(q systemschema.Query) []string {
		var out []string
		for _, r := range systemschema.Keyspaces.Scan(s, q) {
			out = append(out, fmt.Sprintf("%s:%v", r[0], r[2].(map[string]string)["class"]))
		}
		return out
	}
	local, simple := "org.apache.cassandra.locator.LocalStrategy", schema.SimpleStrategy
	want := []string{"alpha:" + simple, "system:" + local, "system_schema:" + local, "zeta:" + simple}
	if got := names(systemschema.Query{Own: true}); !slices.Equal(got, want) {
		t.Errorf("with Own: %q, want %q", got, want)
	}
	if got := names(systemschema.Query{Own: true, Visible: func(string) bool { return false }}); !slices.Equal(got, want[1:3]) {
		t.Errorf("with Own, seeing nothing: %q, want %q", got, want[1:3])
	}
	want = []string{"alpha:" + simple, "system:" + simple, "zeta:" + simple}
	if got := names(systemschema.Query{}); !slices.Equal(got, want) {
		t.Errorf("without Own: %q, want %q", got, want)
	}
	var pages []string
	for _, k := range []int{1, 2, 3} {
		pages = pages[:0]
		q := systemschema.Query{Own: true}
		for {
			rows, next, more := systemschema.Keyspaces.Page(s, q, k)
			for _, r := range rows {
				pages = append(pages, r[0].(string))
			}
			if !more {
				break
			}
			q.After = next
		}
		if !slices.Equal(pages, []string{"alpha", "system", "system_schema", "zeta"}) {
			t.Errorf("pages of %d: %q", k, pages)
		}
	}
}
