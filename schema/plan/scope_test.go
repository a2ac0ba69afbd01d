package plan

import (
	"slices"
	"strings"
	"testing"
)

// twoKeyspaces has keyspaces a and b, each with a table and a type.
const twoKeyspaces = `CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE a.u (x int);
CREATE TABLE a.t (id int PRIMARY KEY, v text);
CREATE INDEX t_v ON a.t (v);
CREATE TYPE b.u (x int);
CREATE TABLE b.t (id int PRIMARY KEY, v text)`

// TestKeyspacesScoping checks Options.Keyspaces: objects of other
// keyspaces are never touched, on either side, and desired keyspaces left
// out are reported, and so is a keyspace in neither schema.
func TestKeyspacesScoping(t *testing.T) {
	from := mustLoad(t, twoKeyspaces)
	to := mustLoad(t, `CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3};
CREATE TABLE a.t (id int PRIMARY KEY, v text, w int);
CREATE KEYSPACE c WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE c.t (id int PRIMARY KEY)`)
	p, err := Diff(from, to, Options{Keyspaces: []string{"a"}, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"ALTER KEYSPACE a WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '3'}",
		"DROP INDEX a.t_v",
		"DROP TYPE a.u",
		"ALTER TABLE a.t ADD w int",
	})
	if !slices.Contains(p.Notes, "keyspace c of the desired schema is not among the keyspaces the plan covers: ignored") || len(p.Warnings) > 0 {
		t.Errorf("warnings %q, notes %q", p.Warnings, p.Notes)
	}
	got := applyPlan(t, from, p)
	if describeKS(got, "b") != describeKS(from, "b") || describeKS(got, "c") != "" {
		t.Errorf("keyspaces outside the plan changed:\n%s", describeKS(got, "b")+describeKS(got, "c"))
	}

	// Without Options.Keyspaces, the desired keyspaces are covered and the
	// current ones it lacks (b) are left alone, even with Prune.
	p, err = Diff(from, to, Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Statements {
		if strings.Contains(st.CQL, " b.") || strings.Contains(st.CQL, "KEYSPACE b") {
			t.Errorf("keyspace b is touched: %s", st.CQL)
		}
	}
	if got := normalize(t, applyPlan(t, from, p), to, from, &equivalence{}); describeKS(got, "c") != describeKS(to, "c") {
		t.Errorf("keyspace c is not created:\n%s", planText(p))
	}

	// A listed keyspace the desired schema lacks is dropped with Prune,
	// kept without.
	p, err = Diff(from, to, Options{Keyspaces: []string{"b"}, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP KEYSPACE b"})
	p, err = Diff(from, to, Options{Keyspaces: []string{"b"}})
	if err != nil || !p.Empty() || len(p.Warnings) > 0 || p.Notes[len(p.Notes)-1] != "keyspace b is not in the desired schema: kept (--prune drops it)" {
		t.Errorf("without Prune: %v %+v", err, p)
	}

	// Complete covers both sides; limited to keyspaces, it says nothing
	// of the others (a diff of one keyspace between two epochs).
	p, err = Diff(from, to, Options{Complete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Statements, func(st Statement) bool { return st.CQL == "DROP KEYSPACE b" }) {
		t.Errorf("Complete does not drop b:\n%s", planText(p))
	}
	p, err = Diff(from, to, Options{Complete: true, Keyspaces: []string{"b"}})
	if err != nil || len(p.Notes)+len(p.Warnings) != 1 || p.Warnings[0] != "DROP KEYSPACE b drops the keyspace with its table and its data" {
		t.Errorf("Complete, limited to b, speaks of others: %v\n%s", err, planText(p))
	}

	p, err = Diff(from, to, Options{Keyspaces: []string{"shp"}, Prune: true})
	if err != nil || !p.Empty() || !slices.Contains(p.Notes, "keyspace shp, named for the plan, is in neither schema: nothing to plan") {
		t.Errorf("a keyspace in neither schema: %v %+v", err, p)
	}
}

// TestPrune checks that without Prune the objects the desired schema
// lacks are kept, each with a note and no warning, and with Prune
// dropped, a table destructively.
func TestPrune(t *testing.T) {
	from := mustLoad(t, twoKeyspaces)
	to := mustLoad(t, `CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE a.other (id int PRIMARY KEY)`)
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"CREATE TABLE a.other (\n    id int PRIMARY KEY\n)"})
	wantNotes := []string{
		"type a.u is not in the desired schema: kept (--prune drops it)",
		"table a.t is not in the desired schema: kept (--prune drops it)",
		"index a.t_v is not in the desired schema: kept (--prune drops it)",
	}
	if !slices.Equal(p.Notes, wantNotes) || len(p.Warnings) > 0 || p.Destructive {
		t.Errorf("notes %q, warnings %q, destructive %v; want notes %q", p.Notes, p.Warnings, p.Destructive, wantNotes)
	}

	p, err = Diff(from, to, Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP TABLE a.t", "DROP TYPE a.u", "CREATE TABLE a.other (\n    id int PRIMARY KEY\n)"})
	if !p.Destructive || !p.Statements[0].Destructive || p.Statements[1].Destructive || !slices.Equal(p.Warnings, []string{"DROP TABLE a.t drops the table and its data"}) {
		t.Errorf("with Prune: %+v", p)
	}
}

// TestColumnsKeptWithoutDropColumns checks that a column the desired
// table lacks is kept, with a note and no warning, with or without Prune,
// and so are the types it uses, which Prune would drop; and that with
// DropColumns it is dropped, destructively, after an index on it, which
// goes even though Prune is off (with a warning: nothing asked for it).
func TestColumnsKeptWithoutDropColumns(t *testing.T) {
	from := mustLoad(t, ksHead+"CREATE TYPE ks.inner (x int); CREATE TYPE ks.outer (i frozen<inner>);"+
		"CREATE TABLE ks.t (id int PRIMARY KEY, a text, b frozen<outer>, c text); CREATE INDEX t_a ON ks.t (a)")
	to := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY, c text)")
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, nil)
	notes := []string{
		"type ks.inner is not in the desired schema: kept (--prune drops it)",
		"type ks.outer is not in the desired schema: kept (--prune drops it)",
		"table ks.t keeps columns a, b, which the desired table lacks (--drop-columns drops them)",
		"index ks.t_a is not in the desired schema: kept (--prune drops it)",
	}
	if p.Destructive || len(p.Warnings) > 0 || !slices.Equal(p.Notes, notes) {
		t.Errorf("warnings %q, notes %q; want notes %q", p.Warnings, p.Notes, notes)
	}

	p, err = Diff(from, to, Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP INDEX ks.t_a"})
	notes = []string{
		"table ks.t keeps columns a, b, which the desired table lacks (--drop-columns drops them)",
		"type ks.outer is not in the desired schema but is kept: column b of table ks.t, which is kept, uses it",
		"type ks.inner is not in the desired schema but is kept: type ks.outer, which is kept, uses it",
	}
	if p.Destructive || len(p.Warnings) > 0 || !slices.Equal(p.Notes, notes) {
		t.Errorf("with Prune: warnings %q, notes %q; want notes %q", p.Warnings, p.Notes, notes)
	}
	checkConverged(t, applyPlan(t, from, p), to, Options{Prune: true})

	p, err = Diff(from, to, Options{DropColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP INDEX ks.t_a", "ALTER TABLE ks.t DROP (a, b)"})
	want := []string{
		"ALTER TABLE ks.t DROP (a, b) drops the data of columns a, b",
		"index ks.t_a is not in the desired schema and is dropped although Prune is off: column a, which it indexes, is dropped",
	}
	if !p.Destructive || !slices.Equal(p.Warnings, want) {
		t.Errorf("warnings %q; want %q", p.Warnings, want)
	}
	p, err = Diff(from, to, Options{DropColumns: true, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
}
