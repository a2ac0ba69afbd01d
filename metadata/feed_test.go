package metadata

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/schema"
)

// feedLine is an event of the feed as the tests compare it: kind, object,
// the cause's kind ("" for a statement's event), whether it has a
// statement, and the first line of its before and after images.
type feedLine struct {
	Kind, Object, Cause string
	Statement           bool
	Before, After       string
}

func feedLines(events []Event) []feedLine {
	out := make([]feedLine, len(events))
	for i := range events {
		e := &events[i]
		l := feedLine{Kind: e.Kind, Object: objectOf(e), Statement: e.Statement != "",
			Before: firstLine(e.Before()), After: firstLine(e.After())}
		if e.Cause != nil {
			l.Cause = e.Cause.Kind
		}
		out[i] = l
	}
	return out
}

// objectOf names an event's object: ks, ks.table or ks.name/table.
func objectOf(e *Event) string {
	switch {
	case e.Name != "" && e.Table != "":
		return e.Keyspace + "." + e.Name + "/" + e.Table
	case e.Name != "":
		return e.Keyspace + "." + e.Name
	case e.Table != "":
		return e.Keyspace + "." + e.Table
	}
	return e.Keyspace
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// feedSetup is the schema the feed tests change: a table with two indexes
// and a trigger, a view of it, a type a column uses, a function and an
// aggregate.
const feedSetup = ksDDL + `;
	CREATE TYPE shop.addr (street text);
	CREATE TABLE shop.t (id int PRIMARY KEY, v text, w int, a frozen<addr>);
	CREATE INDEX ON shop.t (v);
	CREATE INDEX wi ON shop.t (w);
	CREATE TRIGGER audit ON shop.t USING 'org.example.Audit';
	CREATE MATERIALIZED VIEW shop.mv AS SELECT * FROM shop.t WHERE v IS NOT NULL AND id IS NOT NULL PRIMARY KEY (v, id);
	CREATE FUNCTION shop.plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;';
	CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int INITCOND 0`

// lastFeed applies text on sm and returns the feed's events of its epoch.
func lastFeed(t *testing.T, a *applier, text string) []Event {
	t.Helper()
	r := a.apply(Command{Text: text})
	if r[0].Err != nil {
		t.Fatalf("%s: %v", text, r[0].Err)
	}
	epoch := a.sm.Current().Epoch
	recs, err := a.sm.History(epoch-1, epoch, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("history of epoch %d: %d records, %v", epoch, len(recs), err)
	}
	return recs[0].Feed().Events
}

// TestFeedDerivedEvents checks the events of the statements that change
// more than the object they name: the statement's own event first, with
// its text, then one event per further object, with its kind, object,
// before and after images and the statement that caused it; and the
// event of ALTER TYPE, whose columns refer to the type by name, alone.
func TestFeedDerivedEvents(t *testing.T) {
	const (
		table = "CREATE TABLE shop.t ("
		view  = "CREATE MATERIALIZED VIEW shop.mv AS"
	)
	for _, tc := range []struct {
		name, text string
		want       []feedLine
	}{
		{"like with indexes", "CREATE TABLE shop.c LIKE shop.t WITH INDEXES", []feedLine{
			{Kind: "CREATE TABLE", Object: "shop.c", Statement: true, After: "CREATE TABLE shop.c ("},
			{Kind: "CREATE INDEX", Object: "shop.c_v_idx/c", Cause: "CREATE TABLE", After: "CREATE INDEX c_v_idx ON shop.c (v);"},
			{Kind: "CREATE INDEX", Object: "shop.wi_1/c", Cause: "CREATE TABLE", After: "CREATE INDEX wi_1 ON shop.c (w);"},
		}},
		{"alter table reaching a view", "ALTER TABLE shop.t ADD x int", []feedLine{
			{Kind: "ALTER TABLE", Object: "shop.t", Statement: true, Before: table, After: table},
			{Kind: "ALTER MATERIALIZED VIEW", Object: "shop.mv", Cause: "ALTER TABLE", Before: view, After: view},
		}},
		{"alter type used by a column", "ALTER TYPE shop.addr ADD zip text", []feedLine{
			{Kind: "ALTER TYPE", Object: "shop.addr", Statement: true, Before: "CREATE TYPE shop.addr (", After: "CREATE TYPE shop.addr ("},
		}},
		{"drop keyspace", "DROP KEYSPACE shop", []feedLine{
			{Kind: "DROP KEYSPACE", Object: "shop", Statement: true, Before: "CREATE KEYSPACE shop WITH replication = {'class': 'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'} AND durable_writes = true;"},
			{Kind: "DROP INDEX", Object: "shop.t_v_idx/t", Cause: "DROP KEYSPACE", Before: "CREATE INDEX t_v_idx ON shop.t (v);"},
			{Kind: "DROP INDEX", Object: "shop.wi/t", Cause: "DROP KEYSPACE", Before: "CREATE INDEX wi ON shop.t (w);"},
			{Kind: "DROP MATERIALIZED VIEW", Object: "shop.mv", Cause: "DROP KEYSPACE", Before: view},
			{Kind: "DROP TABLE", Object: "shop.t", Cause: "DROP KEYSPACE", Before: table},
			{Kind: "DROP AGGREGATE", Object: "shop.total(int)", Cause: "DROP KEYSPACE", Before: "CREATE AGGREGATE shop.total(int)"},
			{Kind: "DROP FUNCTION", Object: "shop.plus(int,int)", Cause: "DROP KEYSPACE", Before: "CREATE FUNCTION shop.plus(s int, a int)"},
			{Kind: "DROP TYPE", Object: "shop.addr", Cause: "DROP KEYSPACE", Before: "CREATE TYPE shop.addr ("},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm := openSM(t, t.TempDir())
			defer sm.Close()
			a := &applier{t: t, sm: sm}
			if r := a.apply(featureGuardrails(t), Command{Text: feedSetup}); r[1].Err != nil {
				t.Fatal(r[1].Err)
			}
			if diff := cmp.Diff(tc.want, feedLines(lastFeed(t, a, tc.text))); diff != "" {
				t.Errorf("%s: events (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// TestFeedDropTableCascade checks DROP TABLE's events: the table's (with
// its trigger in its before image), then a DROP INDEX per index, and
// that the history still rebuilds the schema before it (the derived
// events repeat changes that undo must not take back twice).
func TestFeedDropTableCascade(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	if r := a.apply(featureGuardrails(t), Command{Text: feedSetup + "; DROP MATERIALIZED VIEW shop.mv"}); r[1].Err != nil {
		t.Fatal(r[1].Err)
	}
	before := sm.Current()
	events := lastFeed(t, a, "DROP TABLE shop.t")
	want := []feedLine{
		{Kind: "DROP TABLE", Object: "shop.t", Statement: true, Before: "CREATE TABLE shop.t ("},
		{Kind: "DROP INDEX", Object: "shop.t_v_idx/t", Cause: "DROP TABLE", Before: "CREATE INDEX t_v_idx ON shop.t (v);"},
		{Kind: "DROP INDEX", Object: "shop.wi/t", Cause: "DROP TABLE", Before: "CREATE INDEX wi ON shop.t (w);"},
	}
	if diff := cmp.Diff(want, feedLines(events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if b := events[0].Before(); !strings.Contains(b, "CREATE TRIGGER audit ON shop.t USING 'org.example.Audit';") {
		t.Errorf("the dropped table's before image lacks its trigger:\n%s", b)
	}
	if ix, ok := events[1].BeforeObject().(*schema.Index); !ok || ix.Name != "t_v_idx" || events[1].AfterObject() != nil {
		t.Errorf("derived DROP INDEX objects: before %#v, after %#v", events[1].BeforeObject(), events[1].AfterObject())
	}
	at, err := sm.SchemaAt(sm.Current(), before.Epoch)
	if err != nil || at.Digest() != before.Schema.Digest() {
		t.Errorf("the schema before DROP TABLE is not rebuilt from the history: %v", err)
	}
}

// TestFeedFiltersSeeDerivedEvents checks that the history's filters look
// at derived events one by one: a table's feed gets the DROP TABLE and
// DROP INDEX events of a DROP KEYSPACE, not the keyspace's own event, and
// the index events of a LIKE that copied its indexes to it; and that the
// record of a feed is one *Record for every reader, so that its
// conversion is shared.
func TestFeedFiltersSeeDerivedEvents(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	if r := a.apply(featureGuardrails(t), Command{Text: feedSetup}); r[1].Err != nil {
		t.Fatal(r[1].Err)
	}
	from := sm.Current().Epoch
	a.apply(Command{Text: "CREATE TABLE shop.c LIKE shop.t WITH INDEXES"}, Command{Text: "DROP KEYSPACE shop"})
	recs, err := sm.History(from, sm.Current().Epoch, 0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	var got []feedLine
	for _, r := range recs {
		if f, ok := r.Filter(EventFilter{Keyspace: "shop", Table: "c"}); ok {
			got = append(got, feedLines(f.Events)...)
		}
	}
	want := []feedLine{
		{Kind: "CREATE TABLE", Object: "shop.c", Statement: true, After: "CREATE TABLE shop.c ("},
		{Kind: "CREATE INDEX", Object: "shop.c_v_idx/c", Cause: "CREATE TABLE", After: "CREATE INDEX c_v_idx ON shop.c (v);"},
		{Kind: "CREATE INDEX", Object: "shop.wi_1/c", Cause: "CREATE TABLE", After: "CREATE INDEX wi_1 ON shop.c (w);"},
		{Kind: "DROP INDEX", Object: "shop.c_v_idx/c", Cause: "DROP KEYSPACE", Before: "CREATE INDEX c_v_idx ON shop.c (v);"},
		{Kind: "DROP INDEX", Object: "shop.wi_1/c", Cause: "DROP KEYSPACE", Before: "CREATE INDEX wi_1 ON shop.c (w);"},
		{Kind: "DROP TABLE", Object: "shop.c", Cause: "DROP KEYSPACE", Before: "CREATE TABLE shop.c ("},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the feed of shop.c (-want +got):\n%s", diff)
	}
	r := recs[1]
	if f, _ := r.Filter(EventFilter{}); f != r.Feed() || r.Feed() != r.Feed() || f == r {
		t.Errorf("the feed's record of a DROP KEYSPACE is not one *Record for every reader")
	}
	if f := r.Feed(); f.Feed() != f || len(f.Events) != 1+2+2+1+1+1+1+1+1 {
		t.Errorf("the feed of a feed's record changed it: %d events", len(f.Feed().Events))
	}
}
