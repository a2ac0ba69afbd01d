package schema_test

import (
	"bytes"
	"maps"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
)

// extraSchema has a table with properties, a dropped column, a trigger
// and a SELECT * view (t, mv), and one with properties and a dropped
// column but no view, so that more columns can be dropped (u).
const extraSchema = `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.t (k int, c int, v text, gone int, PRIMARY KEY (k, c)) WITH comment = 'x';
ALTER TABLE ks.t DROP gone;
CREATE TRIGGER tr1 ON ks.t USING 'org.example.Trigger';
CREATE MATERIALIZED VIEW ks.mv AS SELECT * FROM ks.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k) WITH comment = 'v';
CREATE TABLE ks.u (k int PRIMARY KEY, a int, b int, gone int) WITH comment = 'x';
ALTER TABLE ks.u DROP gone;`

// TestExtraCopyOnWrite applies each statement that changes a table's
// properties, dropped columns, triggers or view definition to a schema
// that is then still held, and checks that every table of that schema
// encodes (properties, dropped columns, triggers and view included) as
// before: the statement changed copies, never the Extra the old tables
// share. Each statement must change some table, or it would test nothing.
func TestExtraCopyOnWrite(t *testing.T) {
	for _, stmt := range []string{
		"ALTER TABLE ks.t WITH comment = 'y'",
		"ALTER TABLE ks.t WITH gc_grace_seconds = 10",
		"ALTER TABLE ks.u DROP a",
		"ALTER TABLE ks.u DROP a; ALTER TABLE ks.u ADD a int",
		"ALTER TABLE ks.u ADD gone int; ALTER TABLE ks.u DROP gone",
		"ALTER TABLE ks.u DROP a, b",
		"CREATE TRIGGER tr0 ON ks.t USING 'org.example.Trigger'",
		"CREATE TRIGGER tr2 ON ks.t USING 'org.example.Trigger'",
		"DROP TRIGGER tr1 ON ks.t",
		"ALTER MATERIALIZED VIEW ks.mv WITH comment = 'z'",
		"ALTER TABLE ks.t ADD x int",
		"ALTER TABLE ks.t RENAME c TO cc",
		"CREATE TABLE ks.copy LIKE ks.t WITH comment = 'copy'",
		"DROP MATERIALIZED VIEW ks.mv",
	} {
		t.Run(stmt, func(t *testing.T) {
			old := schemakit.Build(t, extraSchema)
			before := encodeTables(old)
			next, _ := schemakit.Apply(t, old, stmt, schemakit.EpochEach(100))
			if after := encodeTables(old); !maps.EqualFunc(before, after, bytes.Equal) {
				t.Fatalf("%s changed the schema it was applied to", stmt)
			}
			if maps.EqualFunc(before, encodeTables(next), bytes.Equal) {
				t.Fatalf("%s changed no table", stmt)
			}
		})
	}
}

// encodeTables returns the encoding of every table and view of s, by
// qualified name.
func encodeTables(s schema.Schema) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range s.Keyspaces() {
		for _, tb := range k.Tables() {
			out[tb.QualifiedName()] = schema.AppendTable(nil, tb)
		}
	}
	return out
}

// TestTableExtraSetters checks each setter on a copy of a table that has
// all four rare parts: the copy gets the new value and an Extra of its
// own, the original keeps its Extra and values, and a copy whose parts are
// all emptied has no Extra at all; emptying allocates nothing, and setting
// a part allocates the new Extra alone.
func TestTableExtraSetters(t *testing.T) {
	s := schemakit.Build(t, extraSchema)
	k, _ := s.Keyspace("ks")
	tb, _ := k.Table("t")
	full := *tb
	full.SetView(&schema.View{Base: "other", AllColumns: true})
	want := schema.AppendTable(nil, &full)
	for _, tc := range []struct {
		name  string
		set   func(*schema.Table)
		check func(*schema.Table) bool
	}{
		{"options", func(c *schema.Table) { c.SetOptions(map[string]string{"comment": "'new'"}) },
			func(c *schema.Table) bool { return c.Options()["comment"] == "'new'" }},
		{"dropped columns", func(c *schema.Table) {
			c.SetDroppedColumns([]schema.DroppedColumn{{Name: "z", Type: schema.TypeInt, Epoch: 9}})
		},
			func(c *schema.Table) bool {
				d, ok := c.DroppedColumn("z")
				return ok && d.Epoch == 9 && len(c.DroppedColumns()) == 1
			}},
		{"triggers", func(c *schema.Table) { c.SetTriggers([]schema.Trigger{{Name: "new", Class: "a.B"}}) },
			func(c *schema.Table) bool { _, ok := c.Trigger("new"); return ok && len(c.Triggers()) == 1 }},
		{"view", func(c *schema.Table) { c.SetView(nil) },
			func(c *schema.Table) bool { return !c.IsView() }},
	} {
		c := full
		tc.set(&c)
		if !tc.check(&c) {
			t.Errorf("%s: the copy does not have the new value", tc.name)
		}
		if c.Extra == full.Extra {
			t.Errorf("%s: the copy shares the original's Extra", tc.name)
		}
		if got := schema.AppendTable(nil, &full); !bytes.Equal(got, want) {
			t.Errorf("%s: setting it on a copy changed the original", tc.name)
		}
	}
	empty := full
	empty.SetOptions(nil)
	empty.SetDroppedColumns(nil)
	empty.SetTriggers(nil)
	empty.SetView(nil)
	if empty.Extra != nil || full.Extra == nil {
		t.Errorf("emptied copy's Extra %+v, original's %+v; want nil and set", empty.Extra, full.Extra)
	}
	// CREATE TABLE sets the properties of every new table, mostly none.
	opts := map[string]string{"comment": "'x'"}
	if n := testing.AllocsPerRun(100, func() { empty.SetOptions(nil) }); n != 0 {
		t.Errorf("setting no properties on a table without any: %.0f allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { c := empty; c.SetOptions(opts) }); n != 1 {
		t.Errorf("setting properties: %.0f allocations, want 1 (the Extra)", n)
	}
}
