package metadata

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/describe"
)

// viewDDL creates a base table with an index and two materialized views
// of it, one of every column; a view is a table record with a view
// section (schema.Table.View).
const viewDDL = viewBaseDDL + `;
	CREATE MATERIALIZED VIEW shop.t_by_v AS SELECT * FROM shop.t WHERE v IS NOT NULL AND id IS NOT NULL AND at IS NOT NULL PRIMARY KEY (v, id, at);
	CREATE MATERIALIZED VIEW shop.t_by_at AS SELECT id, at FROM shop.t WHERE at IS NOT NULL AND id IS NOT NULL PRIMARY KEY (at, id) WITH comment = 'by at'`

// viewBaseDDL is the keyspace, the base table and its index of viewDDL.
const viewBaseDDL = ksDDL + `;
	CREATE TABLE shop.t (id int, at int, v text, PRIMARY KEY (id, at));
	CREATE INDEX by_v ON shop.t (v)`

// viewsOf returns the names of the views of shop.t in m.
func viewsOf(m *ClusterMetadata) string {
	k, ok := m.Schema.Keyspace("shop")
	if !ok {
		return ""
	}
	var names []string
	for _, v := range k.Views("t") {
		names = append(names, v.Name)
	}
	return strings.Join(names, " ")
}

// TestViewsNeedTheGuardrail checks that CREATE MATERIALIZED VIEW is
// refused while materialized_views_enabled is false (the default), with a
// message naming the setting and how to set it, and applies once it is
// set through the log.
func TestViewsNeedTheGuardrail(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	const view = "CREATE MATERIALIZED VIEW shop.t_by_at AS SELECT id, at FROM shop.t WHERE at IS NOT NULL AND id IS NOT NULL PRIMARY KEY (at, id)"
	r := a.apply(Command{Text: viewBaseDDL}, Command{Text: view})
	if r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	r = r[1:]
	if !errors.Is(r[0].Err, guardrails.ErrFailed) || !strings.Contains(r[0].Err.Error(), "Guardrail materialized_views_enabled violated: Materialized views are disabled") ||
		!strings.Contains(r[0].Err.Error(), "metalog guardrails set materialized_views_enabled=true") {
		t.Fatalf("with the defaults: %v", r[0].Err)
	}
	if viewsOf(sm.Current()) != "" {
		t.Fatalf("a refused view was created")
	}
	if r := a.apply(setGuardrails(t, "materialized_views_enabled", "true"), Command{Text: view}); r[0].Err != nil || r[1].Err != nil {
		t.Fatalf("enabled: %v %v", r[0].Err, r[1].Err)
	}
	if got := viewsOf(sm.Current()); got != "t_by_at" {
		t.Fatalf("views %q", got)
	}
	// The per-table thresholds: the warning, then the refusal.
	r = a.apply(setGuardrails(t, "materialized_views_enabled", "true", "materialized_views_per_table_warn_threshold", "1", "materialized_views_per_table_fail_threshold", "2"),
		Command{Text: "CREATE MATERIALIZED VIEW shop.third AS SELECT id, at FROM shop.t WHERE at IS NOT NULL AND id IS NOT NULL PRIMARY KEY (at, id)"},
		Command{Text: "CREATE MATERIALIZED VIEW shop.fourth AS SELECT id, at FROM shop.t WHERE at IS NOT NULL AND id IS NOT NULL PRIMARY KEY (at, id)"})
	if r[1].Err != nil || len(r[1].Outcome.Warnings) != 1 ||
		r[1].Outcome.Warnings[0].Message != "Guardrail materialized_views_per_table_warn_threshold violated: Creating materialized view third on table t, current number of views 2 exceeds warning threshold of 1." {
		t.Errorf("third view: %v %+v", r[1].Err, r[1].Outcome.Warnings)
	}
	if r[2].Err == nil || !strings.Contains(r[2].Err.Error(), "Guardrail materialized_views_per_table_fail_threshold violated: Tables cannot have more than 2 materialized views, aborting the creation of materialized view fourth on table t") {
		t.Errorf("fourth view: %v", r[2].Err)
	}
}

// TestViewSurvivesStoreAndSnapshot checks that views are flushed to the
// store and read back by a reopened node (their base index rebuilt), and
// that a snapshot carries them to another node, digest included.
func TestViewSurvivesStoreAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	if r := a.apply(setGuardrails(t, "materialized_views_enabled", "true"), Command{Text: viewDDL}); r[1].Err != nil {
		t.Fatal(r[1].Err)
	}
	want := sm.Current()
	data, err := sm.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	defer re.Close()
	sameMetadata(t, want, re.Current())
	if got := viewsOf(re.Current()); got != "t_by_at t_by_v" || re.Current().Schema.ViewCount() != 2 || re.Current().Schema.TableCount() != 1 {
		t.Fatalf("the reopened store has views %q, %d views %d tables", got, re.Current().Schema.ViewCount(), re.Current().Schema.TableCount())
	}
	// The reopened node enforces the view rules: its base index is there.
	ra := &applier{t: t, sm: re, index: a.index}
	if r := ra.apply(Command{Text: "DROP TABLE shop.t"}); r[0].Err == nil || !strings.Contains(r[0].Err.Error(), "materialized views still depend on it (t_by_at, t_by_v)") {
		t.Errorf("DROP TABLE of the base after a reopen: %v", r[0].Err)
	}

	dst, _ := openWith(t, Config{Dir: t.TempDir()})
	defer dst.Close()
	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	sameMetadata(t, want, dst.Current())
	if got := viewsOf(dst.Current()); got != "t_by_at t_by_v" {
		t.Fatalf("the restored snapshot has views %q", got)
	}
}

// TestViewHistoryEvents checks the change feed of views: CREATE, ALTER
// and DROP MATERIALIZED VIEW record an event about the view whose Before
// and After are the view's DESCRIBE; ALTER TABLE ADD on a base with a
// SELECT * view records the view's change and the table's, the event
// showing the table; and the history's schema at each epoch is the one
// the node had then (Undo of the views' priors).
func TestViewHistoryEvents(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(setGuardrails(t, "materialized_views_enabled", "true"), Command{Text: viewDDL})
	created := sm.Current()
	for _, text := range []string{
		"ALTER MATERIALIZED VIEW shop.t_by_at WITH comment = 'new'",
		"ALTER TABLE shop.t ADD w int",
		"DROP MATERIALIZED VIEW shop.t_by_at",
	} {
		if r := a.apply(Command{Text: text}); r[0].Err != nil {
			t.Fatalf("%s: %v", text, r[0].Err)
		}
	}
	cur := sm.Current()
	recs, err := sm.History(0, cur.Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]*Event{}
	for _, r := range recs {
		for i := range r.Events {
			e := &r.Events[i]
			events[e.Kind+" "+e.Table] = e
		}
	}
	createView, alterView, add, drop := events["CREATE MATERIALIZED VIEW t_by_at"], events["ALTER MATERIALIZED VIEW t_by_at"], events["ALTER TABLE t"], events["DROP MATERIALIZED VIEW t_by_at"]
	if createView == nil || alterView == nil || add == nil || drop == nil {
		t.Fatalf("events %v", events)
	}
	head := "CREATE MATERIALIZED VIEW shop.t_by_at AS\n    SELECT at, id\n    FROM shop.t\n"
	if createView.Before() != "" || !strings.HasPrefix(createView.After(), head) || !strings.Contains(createView.After(), "AND comment = 'by at';\n") || !createView.Matches("shop", "t_by_at") {
		t.Errorf("CREATE event:\nbefore:\n%s\nafter:\n%s", createView.Before(), createView.After())
	}
	v, _ := created.Schema.Table("shop", "t_by_at")
	if createView.After() != describe.View(v) {
		t.Errorf("the CREATE event's text is not the view's DESCRIBE:\n%s", createView.After())
	}
	if !strings.Contains(alterView.Before(), "'by at'") || !strings.Contains(alterView.After(), "comment = 'new'") {
		t.Errorf("ALTER event:\nbefore:\n%s\nafter:\n%s", alterView.Before(), alterView.After())
	}
	if len(add.Changes) != 2 || add.Changes[0].Table != "t_by_v" || add.Changes[1].Table != "t" || !strings.HasPrefix(add.After(), "CREATE TABLE shop.t (") || !strings.Contains(add.After(), "    w int,\n") {
		t.Errorf("ALTER TABLE ADD event: %d changes, after:\n%s", len(add.Changes), add.After())
	}
	if !strings.HasPrefix(drop.Before(), head) || drop.After() != "" {
		t.Errorf("DROP event:\nbefore:\n%s\nafter:\n%s", drop.Before(), drop.After())
	}
	at, err := sm.SchemaAt(cur, created.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	if at.Digest() != created.Schema.Digest() || at.ViewCount() != 2 {
		t.Errorf("the schema at epoch %d differs from the one the node had", created.Epoch)
	}
}
