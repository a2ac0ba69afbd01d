package plan

import (
	"testing"

	"github.com/metalog/metalog/schema"
)

// nested has two types whose dependency order is not their name order
// (a_outer uses z_inner), a table using them with an index, and a second
// table with an index.
const nested = ksHead + `CREATE TYPE ks.z_inner (v int);
CREATE TYPE ks.a_outer (i frozen<z_inner>);
CREATE TABLE ks.t1 (id int PRIMARY KEY, o frozen<a_outer>, v text);
CREATE INDEX t1_v ON ks.t1 (v);
CREATE TABLE ks.t2 (id int PRIMARY KEY, w text);
CREATE INDEX t2_w ON ks.t2 (w)`

// TestCreationOrder checks that creations follow the dependencies: the
// keyspace, then the types (each after the types it uses), the tables,
// and the indexes.
func TestCreationOrder(t *testing.T) {
	to := mustLoad(t, nested)
	p, err := Diff(schema.Schema{}, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'} AND durable_writes = true",
		"CREATE TYPE ks.z_inner (\n    v int\n)",
		"CREATE TYPE ks.a_outer (\n    i frozen<z_inner>\n)",
		"CREATE TABLE ks.t1 (\n    id int PRIMARY KEY,\n    o frozen<a_outer>,\n    v text\n)",
		"CREATE TABLE ks.t2 (\n    id int PRIMARY KEY,\n    w text\n)",
		"CREATE INDEX t1_v ON ks.t1 (v)",
		"CREATE INDEX t2_w ON ks.t2 (w)",
	})
	if p.Destructive || len(p.Warnings) > 0 {
		t.Errorf("creating is not destructive: %+v", p)
	}
	checkEquivalent(t, applyPlan(t, schema.Schema{}, p), to, schema.Schema{}, &equivalence{}, p)
}

// TestDropOrder checks that drops go in reverse dependency order: indexes,
// tables (whose own indexes go with them), types with their users first;
// and that a whole keyspace is dropped with one statement.
func TestDropOrder(t *testing.T) {
	from := mustLoad(t, nested)
	to := mustLoad(t, ksHead+"CREATE TABLE ks.t2 (id int PRIMARY KEY, w text)")
	p, err := Diff(from, to, Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP INDEX ks.t2_w", "DROP TABLE ks.t1", "DROP TYPE ks.a_outer", "DROP TYPE ks.z_inner"})
	if !p.Destructive || len(p.Warnings) != 1 || p.Warnings[0] != "DROP TABLE ks.t1 drops the table and its data" {
		t.Errorf("want one destructive statement with its warning: %+v", p)
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)

	p, err = Diff(from, schema.Schema{}, Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP KEYSPACE ks"})
	if !p.Statements[0].Destructive || p.Warnings[0] != "DROP KEYSPACE ks drops the keyspace with its 2 tables and their data" {
		t.Errorf("DROP KEYSPACE: %+v", p)
	}
}

// TestDropsBeforeCreations checks a plan that both drops and creates:
// drops first (so that an index name or a type can be reused), then
// creations in dependency order, with a type gaining a field of a new
// type after that type is created.
func TestDropsBeforeCreations(t *testing.T) {
	from := mustLoad(t, ksHead+`CREATE TYPE ks.addr (street text);
CREATE TABLE ks.a (id int PRIMARY KEY, v text, gone text);
CREATE INDEX idx ON ks.a (v)`)
	to := mustLoad(t, ksHead+`CREATE TYPE ks.zip (code text);
CREATE TYPE ks.addr (street text, zip frozen<zip>);
CREATE TABLE ks.a (id int PRIMARY KEY, v text, home frozen<addr>);
CREATE TABLE ks.b (id int PRIMARY KEY, w text);
CREATE INDEX idx ON ks.b (w)`)
	p, err := Diff(from, to, Options{DropColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"DROP INDEX ks.idx",
		"ALTER TABLE ks.a DROP gone",
		"CREATE TYPE ks.zip (\n    code text\n)",
		"ALTER TYPE ks.addr ADD zip frozen<zip>",
		"ALTER TABLE ks.a ADD home frozen<addr>",
		"CREATE TABLE ks.b (\n    id int PRIMARY KEY,\n    w text\n)",
		"CREATE INDEX idx ON ks.b (w)",
	})
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
}
