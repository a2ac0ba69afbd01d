package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// viewFrom is the current schema of the view tests: a base with a SELECT
// * view, a view with properties, one the desired schema changes, one it
// lacks, and a base whose column the desired schema drops.
const viewFrom = ksHead + `CREATE TABLE ks.t (k int, c int, v text, w int, PRIMARY KEY (k, c));
CREATE MATERIALIZED VIEW ks.all_v AS SELECT * FROM ks.t WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c);
CREATE MATERIALIZED VIEW ks.props AS SELECT k, c, w FROM ks.t WHERE w IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (w, k, c) WITH comment = 'old' AND gc_grace_seconds = 100;
CREATE MATERIALIZED VIEW ks.changed AS SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k);
CREATE MATERIALIZED VIEW ks.extra AS SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c > 0 PRIMARY KEY (k, c);
CREATE TABLE ks.d (k int PRIMARY KEY, gone text, v text);
CREATE MATERIALIZED VIEW ks.d_by_v AS SELECT k, v FROM ks.d WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k);`

// viewTo is the desired schema: ks.t gains a column (which its SELECT *
// view gains too), props changes properties, changed its clustering
// order, extra is gone, the views' relations come in another order, a
// new view is on a new table, and ks.d drops a column.
const viewTo = ksHead + `CREATE TABLE ks.t (k int, c int, v text, w int, x int, PRIMARY KEY (k, c));
CREATE MATERIALIZED VIEW ks.all_v AS SELECT * FROM ks.t WHERE c IS NOT NULL AND k IS NOT NULL AND v IS NOT NULL PRIMARY KEY (v, k, c);
CREATE MATERIALIZED VIEW ks.props AS SELECT k, c, w FROM ks.t WHERE w IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (w, k, c) WITH comment = 'new';
CREATE MATERIALIZED VIEW ks.changed AS SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (k DESC);
CREATE TABLE ks.n (k int PRIMARY KEY, v text);
CREATE MATERIALIZED VIEW ks.n_by_v AS SELECT k, v FROM ks.n WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k);
CREATE TABLE ks.d (k int PRIMARY KEY, v text);
CREATE MATERIALIZED VIEW ks.d_by_v AS SELECT k, v FROM ks.d WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k);`

// TestViewChanges checks the planning of materialized views: a new one
// created after its new base, properties changed with ALTER MATERIALIZED
// VIEW, a changed definition dropped and created again with a note, one
// the desired schema lacks kept (or dropped with Prune), the views of a
// base that drops a column (DropColumns) dropped before the column and
// created again,
// a SELECT * view left alone when its base gains a column, and relations
// in another order taken as the same; the plan applies to what is
// desired, and planning again gives nothing.
func TestViewChanges(t *testing.T) {
	from, to := mustLoad(t, viewFrom), mustLoad(t, viewTo)
	p, err := Diff(from, to, Options{DropColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"DROP MATERIALIZED VIEW ks.changed",
		"DROP MATERIALIZED VIEW ks.d_by_v",
		"ALTER TABLE ks.d DROP gone",
		"CREATE TABLE ks.n (\n    k int PRIMARY KEY,\n    v text\n)",
		"ALTER TABLE ks.t ADD x int",
		"CREATE MATERIALIZED VIEW ks.changed AS\n    SELECT c, k\n    FROM ks.t\n    WHERE k IS NOT NULL AND c IS NOT NULL\n    PRIMARY KEY (c, k)\n WITH CLUSTERING ORDER BY (k DESC)",
		"CREATE MATERIALIZED VIEW ks.d_by_v AS\n    SELECT v, k\n    FROM ks.d\n    WHERE v IS NOT NULL AND k IS NOT NULL\n    PRIMARY KEY (v, k)\n WITH CLUSTERING ORDER BY (k ASC)",
		"CREATE MATERIALIZED VIEW ks.n_by_v AS\n    SELECT v, k\n    FROM ks.n\n    WHERE v IS NOT NULL AND k IS NOT NULL\n    PRIMARY KEY (v, k)\n WITH CLUSTERING ORDER BY (k ASC)",
		"ALTER MATERIALIZED VIEW ks.props WITH comment = 'new' AND gc_grace_seconds = 864000",
	})
	for _, w := range []string{
		"materialized view ks.changed changes from (SELECT c, k FROM ks.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (k ASC)) to (SELECT c, k FROM ks.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (k DESC)): it is dropped and created again, which rebuilds it from its base table's data (" + ruleViewDefinition + ")",
		"materialized view ks.d_by_v is dropped and created again, which rebuilds it from its base table's data: its base table ks.d drops columns, and " + ruleViewBaseColumn,
		"materialized view ks.extra is not in the desired schema: kept (--prune drops it)",
	} {
		if !slices.Contains(p.Notes, w) {
			t.Errorf("no note %q in\n%s", w, strings.Join(p.Notes, "\n"))
		}
	}
	for _, st := range p.Statements {
		if st.Destructive != strings.HasPrefix(st.CQL, "ALTER TABLE ks.d DROP") {
			t.Errorf("%s: destructive %v", st.CQL, st.Destructive)
		}
	}
	got := applyPlan(t, from, p)
	if _, ok := got.Table("ks", "extra"); !ok {
		t.Errorf("without Prune the view extra is dropped")
	}
	if again, err := Diff(got, to, Options{}); err != nil || !again.Empty() {
		t.Errorf("planning again gives %v:\n%s", err, planText(again))
	}

	p, err = Diff(from, to, Options{Prune: true, DropColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(statementTexts(p), "DROP MATERIALIZED VIEW ks.extra") {
		t.Errorf("Prune does not drop the view extra:\n%s", planText(p))
	}
	got = applyPlan(t, from, p)
	checkEquivalent(t, got, to, from, &equivalence{}, p)
	if again, err := Diff(got, to, Options{Prune: true}); err != nil || !again.Empty() {
		t.Errorf("planning again gives %v:\n%s", err, planText(again))
	}
	if back, err := Diff(got, from, Options{Prune: true, DropColumns: true}); err != nil {
		t.Errorf("planning back: %v", err)
	} else {
		checkEquivalent(t, applyPlan(t, got, back), from, got, &equivalence{}, back)
	}
}

// TestViewsOfGoingTables checks that the views of a table the plan drops
// (pruned) or recreates (AllowRecreate) are dropped before it, with a
// warning when the desired schema lacks them although Prune is off, and
// created again after it when the desired schema has them; and that a
// view whose type is recreated goes with its base.
func TestViewsOfGoingTables(t *testing.T) {
	from := mustLoad(t, ksHead+`CREATE TYPE ks.pt (x int);
CREATE TABLE ks.r (k int, c int, p frozen<pt>, PRIMARY KEY (k, c));
CREATE MATERIALIZED VIEW ks.r_kept AS SELECT k, c, p FROM ks.r WHERE k IS NOT NULL AND c IS NOT NULL AND p IS NOT NULL PRIMARY KEY (p, k, c);
CREATE MATERIALIZED VIEW ks.r_gone AS SELECT k, c FROM ks.r WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k);
CREATE TABLE ks.pruned (k int PRIMARY KEY, v text);
CREATE MATERIALIZED VIEW ks.pruned_v AS SELECT k, v FROM ks.pruned WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k);`)
	to := mustLoad(t, ksHead+`CREATE TYPE ks.pt (y text);
CREATE TABLE ks.r (k int, c int, p frozen<pt>, PRIMARY KEY (k, c));
CREATE MATERIALIZED VIEW ks.r_kept AS SELECT k, c, p FROM ks.r WHERE k IS NOT NULL AND c IS NOT NULL AND p IS NOT NULL PRIMARY KEY (p, k, c);`)
	if _, err := Diff(from, to, Options{Prune: true}); !errors.As(err, new(*ImpossibleError)) {
		t.Fatalf("without AllowRecreate: %v", err)
	}
	p, err := Diff(from, to, Options{AllowRecreate: true})
	if err != nil {
		t.Fatal(err)
	}
	texts := statementTexts(p)
	want := []string{"DROP MATERIALIZED VIEW ks.r_gone", "DROP MATERIALIZED VIEW ks.r_kept", "DROP TABLE ks.r", "DROP TYPE ks.pt"}
	if !slices.Equal(texts[:4], want) || !strings.HasPrefix(texts[len(texts)-1], "CREATE MATERIALIZED VIEW ks.r_kept AS") {
		t.Errorf("plan:\n%s", planText(p))
	}
	if w := "materialized view ks.r_gone is not in the desired schema and is dropped although Prune is off: its base table ks.r is recreated"; !slices.Contains(p.Warnings, w) {
		t.Errorf("no warning %q in\n%s", w, strings.Join(p.Warnings, "\n"))
	}
	for _, n := range []string{
		"materialized view ks.r_kept is dropped and created again, which rebuilds it from its base table's data: its base table ks.r is recreated",
		"materialized view ks.pruned_v is not in the desired schema: kept (--prune drops it)",
	} {
		if !slices.Contains(p.Notes, n) {
			t.Errorf("no note %q in\n%s", n, strings.Join(p.Notes, "\n"))
		}
	}
	applyPlan(t, from, p)

	p, err = Diff(from, to, Options{AllowRecreate: true, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	texts = statementTexts(p)
	iv, it := slices.Index(texts, "DROP MATERIALIZED VIEW ks.pruned_v"), slices.Index(texts, "DROP TABLE ks.pruned")
	if iv < 0 || it < iv {
		t.Errorf("the pruned table's view is not dropped before it:\n%s", planText(p))
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
}

// TestViewNameClashes checks a name that is a view on one side and a
// table on the other: a view becoming a table is dropped (not
// destructive) before the table is created; a table becoming a view
// cannot change in place, and with AllowRecreate is dropped (destructive)
// before the view is created.
func TestViewNameClashes(t *testing.T) {
	base := ksHead + "CREATE TABLE ks.t (k int PRIMARY KEY, v text);\n"
	asView := mustLoad(t, base+"CREATE MATERIALIZED VIEW ks.x AS SELECT k, v FROM ks.t WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k);")
	asTable := mustLoad(t, base+"CREATE TABLE ks.x (k int PRIMARY KEY);")
	p, err := Diff(asView, asTable, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP MATERIALIZED VIEW ks.x", "CREATE TABLE ks.x (\n    k int PRIMARY KEY\n)"})
	if !slices.Contains(p.Warnings, "materialized view ks.x is dropped although Prune is off: the desired schema has a table of that name") || p.Destructive {
		t.Errorf("warnings %q, destructive %v", p.Warnings, p.Destructive)
	}
	checkEquivalent(t, applyPlan(t, asView, p), asTable, asView, &equivalence{}, p)

	var imp *ImpossibleError
	if _, err := Diff(asTable, asView, Options{}); !errors.As(err, &imp) || !strings.Contains(imp.Error(), ruleTableToView) {
		t.Fatalf("a table becoming a view: %v", err)
	}
	p, err = Diff(asTable, asView, Options{AllowRecreate: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP TABLE ks.x", "CREATE MATERIALIZED VIEW ks.x AS\n    SELECT v, k\n    FROM ks.t\n    WHERE v IS NOT NULL AND k IS NOT NULL\n    PRIMARY KEY (v, k)\n WITH CLUSTERING ORDER BY (k ASC)"})
	if !p.Statements[0].Destructive {
		t.Errorf("DROP TABLE is not destructive")
	}
	checkEquivalent(t, applyPlan(t, asTable, p), asView, asTable, &equivalence{}, p)
}

// TestViewGraceAndIDs checks the changes a view cannot stay through:
// gc_grace_seconds 0 on a view (it is recreated) or on the base of views
// (they are dropped, then created again), and a static column added to
// the base of a SELECT * view (it is dropped); and that a
// view the plan creates keeps the id the desired schema gives it, unless
// it replaces the view of that id.
func TestViewGraceAndIDs(t *testing.T) {
	const id = "5a1c395e-b41f-11e5-9f22-ba0be0483c18"
	base := ksHead + "CREATE TABLE ks.t (k int PRIMARY KEY, v text);\n"
	view := "CREATE MATERIALIZED VIEW ks.x AS SELECT k, v FROM ks.t WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)"
	from := mustLoad(t, base+view+" WITH ID = "+id+";")
	to := mustLoad(t, base+view+" WITH gc_grace_seconds = 0;")
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if texts := statementTexts(p); len(texts) != 2 || texts[0] != "DROP MATERIALIZED VIEW ks.x" || !strings.HasSuffix(texts[1], " WITH CLUSTERING ORDER BY (k ASC)\n    AND gc_grace_seconds = 0") {
		t.Errorf("plan:\n%s", planText(p))
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)

	noGrace := mustLoad(t, ksHead+"CREATE TABLE ks.t (k int PRIMARY KEY, v text) WITH gc_grace_seconds = 0;")
	p, err = Diff(from, noGrace, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP MATERIALIZED VIEW ks.x", "ALTER TABLE ks.t WITH gc_grace_seconds = 0"})

	// A SELECT * view goes before its base gains a static column.
	star := mustLoad(t, ksHead+"CREATE TABLE ks.w (k int, c int, PRIMARY KEY (k, c)); CREATE MATERIALIZED VIEW ks.ws AS SELECT * FROM ks.w WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k);")
	p, err = Diff(star, mustLoad(t, ksHead+"CREATE TABLE ks.w (k int, c int, s int static, PRIMARY KEY (k, c));"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP MATERIALIZED VIEW ks.ws", "ALTER TABLE ks.w ADD s int static"})
	if !slices.Contains(p.Warnings, "materialized view ks.ws is not in the desired schema and is dropped although Prune is off: its base table ks.w gains a static column, and "+ruleViewStatic) {
		t.Errorf("warnings %q", p.Warnings)
	}

	withID := mustLoad(t, base+view+" WITH ID = "+id+" AND comment = 'c';")
	p, err = Diff(mustLoad(t, base), withID, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := applyPlan(t, mustLoad(t, base), p).Table("ks", "x"); got.ID.String() != id {
		t.Errorf("the desired id is not kept: %s\n%s", got.ID, planText(p))
	}
	redefined := mustLoad(t, base+"CREATE MATERIALIZED VIEW ks.x AS SELECT k, v FROM ks.t WHERE v IS NOT NULL AND k IN (1, 2) PRIMARY KEY (v, k) WITH ID = "+id+";")
	p, err = Diff(from, redefined, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := applyPlan(t, from, p).Table("ks", "x"); got.ID.String() == id || !slices.ContainsFunc(p.Notes, func(w string) bool { return strings.Contains(w, "is created again without its id") }) {
		t.Errorf("a recreated view keeps its id %s:\n%s", got.ID, planText(p))
	}
}
