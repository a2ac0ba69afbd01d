package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
)

// TestTableIDs checks how the planner treats table ids: a desired table
// without one (Load's unassigned ids) is created without WITH ID; one
// with an id is created with it, unless a table keeps it or it is the
// id of the table it recreates; and a table of both sides keeps its id,
// with a warning when the desired one differs.
func TestTableIDs(t *testing.T) {
	const id1, id2 = "5a1c0c36-8c8e-4d2e-9a40-000000000001", "5a1c0c36-8c8e-4d2e-9a40-000000000002"
	empty := mustLoad(t, ksHead)
	noID := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY)")
	tbl, _ := noID.Table("ks", "t")
	if !UnassignedID(tbl.ID) || UnassignedID(mustUUID(t, id1)) || UnassignedID(schema.TableID(1, 0)) {
		t.Fatalf("UnassignedID(%s) false or true for an assigned id", tbl.ID)
	}
	p, err := Diff(empty, noID, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"CREATE TABLE ks.t (\n    id int PRIMARY KEY\n)"})

	withID := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY) WITH ID = "+id1+" AND comment = 'c'")
	p, err = Diff(empty, withID, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"CREATE TABLE ks.t (\n    id int PRIMARY KEY\n) WITH ID = " + id1 + "\n    AND comment = 'c'"})
	if got, _ := applyPlan(t, empty, p).Table("ks", "t"); got.ID.String() != id1 {
		t.Errorf("created with id %s, want %s", got.ID, id1)
	}

	// In place: the current id stays.
	other := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY, v text) WITH ID = "+id2)
	p, err = Diff(withID, other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"ALTER TABLE ks.t ADD v text", "ALTER TABLE ks.t WITH comment = ''"})
	if !slices.ContainsFunc(p.Notes, func(w string) bool {
		return strings.HasPrefix(w, "table ks.t keeps its id "+id1+", not the desired "+id2+": a table's id cannot be altered")
	}) || len(p.Warnings) > 0 {
		t.Errorf("no note about the id: %q (warnings %q)", p.Notes, p.Warnings)
	}
	if _, err := Diff(withID, noID, Options{}); err != nil {
		t.Fatal(err)
	} else if p, _ := Diff(withID, noID, Options{}); len(p.Warnings)+len(p.Notes) > 0 {
		t.Errorf("an unassigned desired id is no difference: %q %q", p.Warnings, p.Notes)
	}

	// Recreated with the id of the table it replaces: left to the cluster.
	rekeyed := mustLoad(t, ksHead+"CREATE TABLE ks.t (id bigint PRIMARY KEY) WITH ID = "+id1)
	p, err = Diff(withID, rekeyed, Options{AllowRecreate: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP TABLE ks.t", "CREATE TABLE ks.t (\n    id bigint PRIMARY KEY\n)"})

	// Another table keeps the desired id: left to the cluster.
	taken := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY) WITH ID = "+id1+" AND comment = 'c'; CREATE TABLE ks.u (id int PRIMARY KEY) WITH ID = "+id1)
	p, err = Diff(withID, taken, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"CREATE TABLE ks.u (\n    id int PRIMARY KEY\n)"})
	if !slices.Contains(p.Notes, "table ks.u is created without its id "+id1+", which table ks.t has: the cluster gives it a new id") {
		t.Errorf("notes: %q", p.Notes)
	}
}
