package plan

import (
	"slices"
	"testing"
)

// TestTriggerChanges checks the planning of triggers: a new one is
// created (on an existing table and after a new table), one whose class
// differs is dropped and created again with a warning, one the desired
// table lacks is kept with a warning, or dropped with Prune, and a
// recreated table gets its desired triggers back.
func TestTriggerChanges(t *testing.T) {
	from := mustLoad(t, ksHead+`CREATE TABLE ks.t (id int PRIMARY KEY, v text);
CREATE TRIGGER same ON ks.t USING 'S';
CREATE TRIGGER changed ON ks.t USING 'Old';
CREATE TRIGGER extra ON ks.t USING 'E';
CREATE TABLE ks.r (id int PRIMARY KEY);
CREATE TRIGGER on_r ON ks.r USING 'R'`)
	to := mustLoad(t, ksHead+`CREATE TABLE ks.t (id int PRIMARY KEY, v text);
CREATE INDEX by_v ON ks.t (v);
CREATE TRIGGER same ON ks.t USING 'S';
CREATE TRIGGER changed ON ks.t USING 'New';
CREATE TRIGGER "Added" ON ks.t USING 'it''s';
CREATE TABLE ks.n (id int PRIMARY KEY);
CREATE TRIGGER on_n ON ks.n USING 'N';
CREATE TABLE ks.r (id bigint PRIMARY KEY);
CREATE TRIGGER on_r ON ks.r USING 'R'`)
	p, err := Diff(from, to, Options{AllowRecreate: true})
	if err != nil {
		t.Fatal(err)
	}
	createN := "CREATE TABLE ks.n (\n    id int PRIMARY KEY\n)"
	createR := "CREATE TABLE ks.r (\n    id bigint PRIMARY KEY\n)"
	checkStatements(t, p, []string{
		"DROP TRIGGER changed ON ks.t",
		"DROP TABLE ks.r",
		createN, createR,
		"CREATE INDEX by_v ON ks.t (v)",
		`CREATE TRIGGER on_n ON ks.n USING 'N'`,
		`CREATE TRIGGER on_r ON ks.r USING 'R'`,
		`CREATE TRIGGER "Added" ON ks.t USING 'it''s'`,
		`CREATE TRIGGER changed ON ks.t USING 'New'`,
	})
	for _, w := range []string{
		"trigger changed on ks.t changes class from 'Old' to 'New': it is dropped and created again",
		"trigger extra on ks.t is not in the desired schema: kept (--prune drops it)",
	} {
		if !slices.Contains(p.Notes, w) {
			t.Errorf("no note %q in %q", w, p.Notes)
		}
	}
	for _, st := range p.Statements[:1] {
		if st.Destructive {
			t.Errorf("%s is destructive", st.CQL)
		}
	}
	got := applyPlan(t, from, p)
	if tbl, _ := got.Table("ks", "t"); len(tbl.Triggers()) != 4 {
		t.Errorf("without Prune ks.t has triggers %+v, want 4 (extra kept)", tbl.Triggers())
	}

	p, err = Diff(from, to, Options{AllowRecreate: true, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(statementTexts(p), "DROP TRIGGER extra ON ks.t") {
		t.Errorf("Prune does not drop trigger extra:\n%s", planText(p))
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
	if again, err := Diff(applyPlan(t, from, p), to, Options{Prune: true}); err != nil || !again.Empty() {
		t.Errorf("planning again gives %v:\n%s", err, planText(again))
	}
}

// statementTexts is the CQL of p's statements.
func statementTexts(p Plan) []string {
	out := make([]string, len(p.Statements))
	for i, st := range p.Statements {
		out[i] = st.CQL
	}
	return out
}
