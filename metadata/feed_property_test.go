package metadata

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/ddlgen"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// mirrorKey names one object as a consumer's mirror of the feed keys it:
// its family ("keyspace", "table" for tables and views, which share
// their keyspace's names, "type", "index" or "function"), keyspace and
// name (a function's signature; empty for a keyspace).
type mirrorKey struct{ family, keyspace, name string }

func (k mirrorKey) String() string { return k.family + " " + k.keyspace + "." + k.name }

// mirrorEntry is an object as a mirror holds it: its key, its encoding
// (schema's canonical one: equal objects, equal bytes) and, for an index,
// its table.
type mirrorEntry struct {
	key   mirrorKey
	value string
	table string
}

// mirrorObject is the entry of v, a value Event.BeforeObject returns;
// false for nil.
func mirrorObject(v any) (mirrorEntry, bool) {
	switch v := v.(type) {
	case *schema.Keyspace:
		if v != nil {
			return mirrorEntry{key: mirrorKey{"keyspace", v.Name, ""}, value: string(schema.AppendKeyspace(nil, v))}, true
		}
	case *schema.Table:
		if v != nil {
			return mirrorEntry{key: mirrorKey{"table", v.Keyspace, v.Name}, value: string(schema.AppendTable(nil, v)), table: v.Name}, true
		}
	case *schema.UserType:
		if v != nil {
			return mirrorEntry{key: mirrorKey{"type", v.Keyspace, v.Name}, value: string(schema.AppendUserType(nil, v))}, true
		}
	case *schema.Index:
		if v != nil {
			return mirrorEntry{key: mirrorKey{"index", v.Keyspace, v.Name}, value: string(schema.AppendIndex(nil, v)), table: v.Table}, true
		}
	case *schema.Function:
		if v != nil {
			return mirrorEntry{key: mirrorKey{"function", v.Keyspace, v.Signature()}, value: string(schema.AppendFunction(nil, v))}, true
		}
	}
	return mirrorEntry{}, false
}

// feedScope is what a feed follows, as EventFilter's Keyspace and Table.
type feedScope struct{ keyspace, table string }

// holds reports whether a feed of scope sees object e: every object for
// no keyspace; the keyspace and its objects for a keyspace; the table (or
// view) and its indexes for a table.
func (sc feedScope) holds(e mirrorEntry) bool {
	switch {
	case sc.keyspace == "":
		return true
	case e.key.keyspace != sc.keyspace:
		return false
	case sc.table == "":
		return true
	}
	return (e.key.family == "table" || e.key.family == "index") && e.table == sc.table
}

// schemaObjects is every object of s that sc holds, by key: what a mirror
// kept from the feed must hold at s's epoch.
func schemaObjects(s schema.Schema, sc feedScope) map[mirrorKey]string {
	out := map[mirrorKey]string{}
	add := func(v any) {
		if e, ok := mirrorObject(v); ok && sc.holds(e) {
			out[e.key] = e.value
		}
	}
	for _, k := range s.Keyspaces() {
		add(k)
		for _, ut := range k.UserTypes() {
			add(ut)
		}
		for _, t := range k.Tables() {
			add(t)
		}
		for _, ix := range k.Indexes() {
			add(ix)
		}
		for _, f := range k.Functions() {
			add(f)
		}
	}
	return out
}

// replayFeed keeps a mirror from the events of recs (oldest first, from
// epoch 1), as events lists them, the way a consumer does: an event's
// before image must be what the mirror holds for its object (nothing
// before a create), and its after image replaces it (nothing after a
// drop). After each record the mirror must equal want[epoch]. It returns
// the first break.
func replayFeed(recs []*Record, events func(*Record) []Event, want []map[mirrorKey]string) error {
	mirror := map[mirrorKey]string{}
	for _, r := range recs {
		for _, e := range events(r) {
			if e.Guardrails != nil {
				continue
			}
			before, hadBefore := mirrorObject(e.BeforeObject())
			after, hasAfter := mirrorObject(e.AfterObject())
			key := before.key
			if !hadBefore {
				key = after.key
			}
			if !hadBefore && !hasAfter {
				return fmt.Errorf("epoch %d: event %s %s.%s %s has neither a before nor an after object", r.Epoch, e.Kind, e.Keyspace, e.Table, e.Name)
			}
			if hadBefore && hasAfter && before.key != after.key {
				return fmt.Errorf("epoch %d: event %s: before is %s, after is %s", r.Epoch, e.Kind, before.key, after.key)
			}
			if cur, ok := mirror[key]; ok != hadBefore || cur != before.value {
				return fmt.Errorf("epoch %d: event %s of %s: its before image is not what the events so far made of it (the mirror has it: %t, the event says it existed: %t)", r.Epoch, e.Kind, key, ok, hadBefore)
			}
			if hasAfter {
				mirror[key] = after.value
			} else {
				delete(mirror, key)
			}
		}
		if r.Epoch >= uint64(len(want)) {
			return fmt.Errorf("record of epoch %d past the %d epochs captured", r.Epoch, len(want)-1)
		}
		if diff := mirrorDiff(want[r.Epoch], mirror); diff != "" {
			return fmt.Errorf("epoch %d: the mirror kept from the feed differs from the schema: %s", r.Epoch, diff)
		}
	}
	return nil
}

// mirrorDiff names the objects that differ between want and got, "" when
// none does.
func mirrorDiff(want, got map[mirrorKey]string) string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			out = append(out, "missing "+k.String())
		} else if g != v {
			out = append(out, "other "+k.String())
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k.String())
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// feedEvents is the feed of scope: the events of each record that the
// history and the watch send.
func feedEvents(sc feedScope) func(*Record) []Event {
	return func(r *Record) []Event {
		f, ok := r.Filter(EventFilter{Keyspace: sc.keyspace, Table: sc.table})
		if !ok {
			return nil
		}
		return f.Events
	}
}

// feedScopes are the feeds the property follows: all, a keyspace, a table.
var feedScopes = []feedScope{{}, {"ks1", ""}, {"ks1", "t1"}}

// TestFeedRebuildsEverySchema: for random DDL histories over every
// statement kind (ddlgen.AnyStatement: LIKE ... WITH INDEXES, ALTER TABLE
// reaching views, ALTER TYPE of types that columns use, views, triggers,
// functions and aggregates, drops and their cascades), single or in
// atomic groups, between guardrail changes, a mirror kept from the feed
// from epoch 0 (every object's after image) equals the schema's objects at
// every epoch, and every event's before image is the mirror's value of its
// object: no change is missing and the before/after chain has no break.
// So do the mirrors of a keyspace's and of a table's feed, of that
// keyspace's or table's objects; live and from the store after a restart.
func TestFeedRebuildsEverySchema(t *testing.T) {
	kinds := map[string]int{} // events seen in the feed, by kind ("by" the cause's for derived ones)
	defer func() { t.Logf("events replayed: %v", kinds) }()
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		sm, err := Open(Config{Dir: dir, FlushWindow: time.Hour, HistoryCache: rapid.IntRange(1, 8).Draw(rt, "cache")})
		if err != nil {
			rt.Fatal(err)
		}
		want := make([][]map[mirrorKey]string, len(feedScopes)) // by scope, by epoch
		capture := func() {
			for i, sc := range feedScopes {
				want[i] = append(want[i], schemaObjects(sm.Current().Schema, sc))
			}
		}
		capture()
		a := &applier{t: t, sm: sm}
		var cmds []Command
		for i, text := range feedPreamble {
			if rapid.IntRange(0, 5).Draw(rt, fmt.Sprint("pre", i)) > 0 {
				cmds = append(cmds, Command{Text: text})
			}
		}
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			cmd := Command{Text: anyStatement(rt, fmt.Sprint("stmt", i)), Principal: "p", Time: int64(i + 1)}
			switch rapid.IntRange(0, 9).Draw(rt, fmt.Sprint("shape", i)) {
			case 0:
				cmd = featureGuardrails(t, "tables_warn_threshold", fmt.Sprint(rapid.IntRange(1, 5000).Draw(rt, fmt.Sprint("g", i))))
			case 1, 2:
				cmd.Text += "; " + anyStatement(rt, fmt.Sprint("more", i))
				cmd.Atomic = true
			}
			cmds = append(cmds, cmd)
		}
		for _, cmd := range append([]Command{featureGuardrails(t)}, cmds...) {
			before := sm.Current().Epoch
			a.apply(cmd)
			if e := sm.Current().Epoch; e != before {
				if e != before+1 {
					rt.Fatalf("one command made epochs %d to %d", before+1, e)
				}
				capture()
			}
		}
		check := func(sm *StateMachine, when string) {
			end := sm.Current().Epoch
			recs, err := sm.History(0, end, 0)
			if err != nil || uint64(len(recs)) != end {
				rt.Fatalf("%s: %d records of %d epochs, %v", when, len(recs), end, err)
			}
			for _, r := range recs {
				for _, e := range r.Feed().Events {
					if e.Cause != nil {
						kinds[e.Kind+" by "+e.Cause.Kind]++
					} else {
						kinds[e.Kind]++
					}
				}
			}
			for i, sc := range feedScopes {
				if err := replayFeed(recs, feedEvents(sc), want[i]); err != nil {
					rt.Fatalf("%s, feed of %+v: %v", when, sc, err)
				}
			}
		}
		check(sm, "live")
		if err := sm.Close(); err != nil {
			rt.Fatal(err)
		}
		sm = openSM(t, dir)
		defer sm.Close()
		check(sm, "after a restart")
	})
}

// feedPreamble are statements a run of TestFeedRebuildsEverySchema
// starts with, each most of the time, so that the random statements after
// them find objects to copy, alter and drop: the keyspaces, tables with
// indexes, a view and a trigger, types that columns use, a function and
// an aggregate.
var feedPreamble = []string{
	"CREATE KEYSPACE ks1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
	"CREATE KEYSPACE ks2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
	"CREATE TYPE ks1.u1 (f1 int, f2 text)",
	"CREATE TYPE ks1.u2 (f1 int, g frozen<u1>)",
	"CREATE TYPE ks2.u1 (f1 int, f2 text)",
	"CREATE TABLE ks1.t1 (k int, c int, v text, m map<text, int>, PRIMARY KEY (k, c))",
	"CREATE INDEX ON ks1.t1 (v)",
	"CREATE INDEX i1 ON ks1.t1 (keys(m))",
	"CREATE CUSTOM INDEX i2 ON ks1.t1 (c) USING 'StorageAttachedIndex'",
	"CREATE TABLE ks1.t2 (k int, c text, v int, l list<frozen<u1>>, PRIMARY KEY ((k, c)))",
	"CREATE TABLE ks2.t1 (k int, c int, s int static, v frozen<u2>, w u1, PRIMARY KEY (k, c))",
	"CREATE MATERIALIZED VIEW ks1.mv1 AS SELECT * FROM ks1.t1 WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)",
	"CREATE TRIGGER tr1 ON ks1.t1 USING 'org.example.Audit'",
	"CREATE FUNCTION ks1.plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;'",
	"CREATE AGGREGATE ks1.total(int) SFUNC plus STYPE int INITCOND 0",
}

// featureGuardrails is a guardrail change that sets kv (name, value, ...)
// and enables the features metalog's defaults leave off: materialized
// views, user-defined functions and masks.
func featureGuardrails(t *testing.T, kv ...string) Command {
	return setGuardrails(t, append([]string{"materialized_views_enabled", "true",
		"user_defined_functions_enabled", "true", "dynamic_data_masking_enabled", "true"}, kv...)...)
}

// anyStatement draws a statement of any kind, checking that it parses.
func anyStatement(rt *rapid.T, label string) string {
	text := ddlgen.AnyStatement(rt, label)
	if _, err := cql.Parse(text); err != nil {
		rt.Fatalf("ddlgen drew %q, which does not parse: %v", text, err)
	}
	return text
}

// TestFeedReplayCatchesMissingEvents checks that replayFeed, the check of
// TestFeedRebuildsEverySchema, fails on a feed that leaves out the
// indexes CREATE TABLE ... LIKE ... WITH INDEXES copies (the statements'
// events alone, as the feed had them before derived events), and on one
// that leaves out one derived event of a DROP KEYSPACE, and passes on the
// feed itself.
func TestFeedReplayCatchesMissingEvents(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	want := []map[mirrorKey]string{schemaObjects(sm.Current().Schema, feedScope{})}
	for _, text := range []string{
		"CREATE KEYSPACE ks1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE ks1.t1 (k int PRIMARY KEY, v text)",
		"CREATE INDEX ON ks1.t1 (v)",
		"CREATE TABLE ks1.t2 LIKE ks1.t1 WITH INDEXES",
		"DROP KEYSPACE ks1",
	} {
		if r := a.apply(Command{Text: text}); r[0].Err != nil {
			t.Fatalf("%s: %v", text, r[0].Err)
		}
		want = append(want, schemaObjects(sm.Current().Schema, feedScope{}))
	}
	recs, err := sm.History(0, sm.Current().Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := replayFeed(recs, feedEvents(feedScope{}), want); err != nil {
		t.Fatalf("the feed: %v", err)
	}
	statementsOnly := func(r *Record) []Event { return r.Events }
	err = replayFeed(recs, statementsOnly, want)
	if err == nil || !strings.Contains(err.Error(), "epoch 4") || !strings.Contains(err.Error(), "missing index ks1.t2_v_idx") {
		t.Errorf("the statements' events alone: %v, want the index LIKE copied missing at epoch 4", err)
	}
	withoutOne := func(r *Record) []Event {
		evs := r.Feed().Events
		if r.Epoch == 5 {
			return slices.Delete(slices.Clone(evs), 2, 3)
		}
		return evs
	}
	if err := replayFeed(recs, withoutOne, want); err == nil || !strings.Contains(err.Error(), "epoch 5") {
		t.Errorf("a DROP KEYSPACE without one of its derived events: %v, want a difference at epoch 5", err)
	}
}
