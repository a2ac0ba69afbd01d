package metadata

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/describe"
)

// TestMasksThroughTheLog checks column masks end to end in the state
// machine: refused while dynamic_data_masking_enabled is off (DROP MASKED
// still applies), applied once it is on, kept by the store and carried by
// a snapshot, and recorded in history events whose Before and After show
// the mask.
func TestMasksThroughTheLog(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	if r := a.apply(Command{Text: ksDDL}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	create := "CREATE TABLE shop.u (id int PRIMARY KEY, email text MASKED WITH mask_inner(1, 4, '#'))"
	r := a.apply(Command{Text: create})
	if !errors.Is(r[0].Err, guardrails.ErrFailed) || !strings.Contains(r[0].Err.Error(), "dynamic_data_masking_enabled") {
		t.Fatalf("masked CREATE TABLE while off: %v", r[0].Err)
	}
	if r := a.apply(setGuardrails(t, "dynamic_data_masking_enabled", "true")); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if r := a.apply(Command{Text: create}, Command{Text: "ALTER TABLE shop.u ALTER id MASKED WITH DEFAULT"}); r[0].Err != nil || r[1].Err != nil {
		t.Fatalf("%v, %v", r[0].Err, r[1].Err)
	}
	if r := a.apply(setGuardrails(t, "dynamic_data_masking_enabled", "false")); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if r := a.apply(Command{Text: "ALTER TABLE shop.u ALTER id DROP MASKED"}); r[0].Err != nil {
		t.Fatalf("DROP MASKED while off: %v", r[0].Err)
	}
	want := sm.Current()
	tbl, _ := want.Schema.Table("shop", "u")
	if c, _ := tbl.Column("email"); c.Mask.String() != "system.mask_inner(1, 4, '#')" {
		t.Fatalf("email mask %v", c.Mask)
	}
	if c, _ := tbl.Column("id"); c.Mask != nil {
		t.Fatalf("id mask %v after DROP MASKED", c.Mask)
	}
	data, err := sm.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := sm.History(0, want.Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	var alter, drop *Event
	for _, rec := range recs {
		for i := range rec.Events {
			e := &rec.Events[i]
			switch {
			case strings.HasSuffix(e.Statement, "MASKED WITH DEFAULT"):
				alter = e
			case strings.HasSuffix(e.Statement, "DROP MASKED"):
				drop = e
			}
		}
	}
	if alter == nil || drop == nil {
		t.Fatalf("no mask events in %d records", len(recs))
	}
	const line = "id int MASKED WITH system.mask_default() PRIMARY KEY"
	if strings.Contains(alter.Before(), line) || !strings.Contains(alter.After(), line) || !strings.Contains(drop.Before(), line) || strings.Contains(drop.After(), line) {
		t.Errorf("events: alter before\n%s\nafter\n%s\ndrop before\n%s\nafter\n%s", alter.Before(), alter.After(), drop.Before(), drop.After())
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	defer re.Close()
	sameMetadata(t, want, re.Current())
	dst, _ := openWith(t, Config{Dir: t.TempDir()})
	defer dst.Close()
	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	sameMetadata(t, want, dst.Current())
}

// TestLikeWithIndexesEvent checks that CREATE TABLE ... LIKE ... WITH
// INDEXES records one event about the new table (its After is the table,
// not its last index), returns Cassandra's warning about the custom index
// it skipped, and that the history's schema before it is the one the node
// had.
func TestLikeWithIndexesEvent(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	if r := a.apply(Command{Text: ksDDL + `; CREATE TABLE shop.t (id int PRIMARY KEY, v text, w int);
		CREATE INDEX ON shop.t (v); CREATE CUSTOM INDEX lucene ON shop.t (w) USING 'com.example.Lucene'`}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	before := sm.Current()
	r := a.apply(Command{Text: "CREATE TABLE shop.c LIKE shop.t WITH INDEXES"})
	if r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	const warning = "Source table shop.t to copy indexes from to shop.c has custom indexes. These indexes were not copied: [lucene]"
	if w := r[0].Outcome.Warnings; len(w) != 1 || w[0].Message != warning || w[0].Guardrail != "" {
		t.Errorf("warnings %+v, want %q", w, warning)
	}
	cur := sm.Current()
	recs, err := sm.History(0, cur.Epoch, 0)
	if err != nil || len(recs) == 0 || len(recs[len(recs)-1].Events) != 1 {
		t.Fatalf("history %+v, %v", recs, err)
	}
	e := &recs[len(recs)-1].Events[0]
	if e.Kind != "CREATE TABLE" || e.Table != "c" || e.Before() != "" || !strings.HasPrefix(e.After(), "CREATE TABLE shop.c (") {
		t.Errorf("event %s %s: before %q after\n%s", e.Kind, e.Table, e.Before(), e.After())
	}
	at, err := sm.SchemaAt(cur, before.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	if at.Digest() != before.Schema.Digest() || describe.Schema(at) != describe.Schema(before.Schema) {
		t.Errorf("the schema before LIKE ... WITH INDEXES is not restored by the history")
	}
}
