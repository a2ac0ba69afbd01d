package plan

import (
	"slices"
	"testing"
)

// TestIndexChanges checks that an index whose definition differs is
// dropped and created again (not destructive: its content is rebuilt from
// the table, said in a note), that an index moving to another table
// is too, and that without Prune a current index a desired one
// duplicates goes (Cassandra refuses duplicate indexes).
func TestIndexChanges(t *testing.T) {
	from := mustLoad(t, ksHead+`CREATE TABLE ks.t (id int PRIMARY KEY, v text, m map<text, int>);
CREATE TABLE ks.u (id int PRIMARY KEY, w text);
CREATE INDEX by_v ON ks.t (v);
CREATE INDEX by_m ON ks.t (keys(m));
CREATE INDEX moved ON ks.t (m);
CREATE INDEX old_w ON ks.u (w)`)
	to := mustLoad(t, ksHead+`CREATE TABLE ks.t (id int PRIMARY KEY, v text, m map<text, int>);
CREATE TABLE ks.u (id int PRIMARY KEY, w text);
CREATE CUSTOM INDEX by_v ON ks.t (v) USING 'sai' WITH OPTIONS = {'case_sensitive': 'false'};
CREATE INDEX by_m ON ks.t (entries(m));
CREATE INDEX moved ON ks.u (w)`)
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"DROP INDEX ks.by_m",
		"DROP INDEX ks.by_v",
		"DROP INDEX ks.moved",
		"DROP INDEX ks.old_w",
		"CREATE INDEX by_m ON ks.t (entries(m))",
		"CREATE CUSTOM INDEX by_v ON ks.t (v) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex' WITH OPTIONS = {'case_sensitive': 'false'}",
		"CREATE INDEX moved ON ks.u (w)",
	})
	want := []string{
		"index ks.by_m changes from (ks.t (keys(m))) to (ks.t (entries(m))): it is dropped and created again, which rebuilds it from its table's data",
		"index ks.by_v changes from (ks.t (v)) to (ks.t (v) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex' WITH OPTIONS = {'case_sensitive': 'false'}): it is dropped and created again, which rebuilds it from its table's data",
		"index ks.moved changes from (ks.t (values(m))) to (ks.u (w)): it is dropped and created again, which rebuilds it from its table's data",
		"index ks.old_w is not in the desired schema and is dropped although Prune is off: index ks.moved of the desired schema indexes the same, and Cassandra refuses duplicate indexes",
	}
	if p.Destructive || len(p.Warnings) > 0 || !slices.Equal(p.Notes, want) {
		t.Errorf("destructive %v, warnings %q, notes:\n%q\nwant:\n%q", p.Destructive, p.Warnings, p.Notes, want)
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
}
