package metadata

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/snapshot"
)

// setKeyspaceGuardrails is the command setting the override of scope to
// the name=value pairs (none: removing it).
func setKeyspaceGuardrails(t *testing.T, scope string, kv ...string) Command {
	t.Helper()
	o := guardrails.Override{Scope: scope}
	for i := 0; i < len(kv); i += 2 {
		var err error
		if o, err = o.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return Command{Kind: KindSetKeyspaceGuardrails, Keyspace: scope, Guardrails: guardrails.AppendOverride(nil, o),
		Text: strings.Join(kv, "="), Principal: "op", Time: 1}
}

func TestKeyspaceGuardrailsCommandRoundTrip(t *testing.T) {
	c := setKeyspaceGuardrails(t, "tenant_*", "tables_fail_threshold", "5")
	c.RequestID, c.OnlyIfUnset = "r1", true
	back, err := UnmarshalCommand(c.Marshal(nil))
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip: %+v, %v\nwant %+v", back, err, c)
	}
	if c.Fingerprint() == setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "5").Fingerprint() {
		t.Error("the fingerprints of two scopes are equal")
	}
	// An unknown kind after it is still refused.
	b := c.Marshal(nil)
	b[1] = byte(numKinds)
	if _, err := UnmarshalCommand(b); !errors.Is(err, ErrBadCommand) {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestKeyspaceGuardrailsApplyRefusePersist: an override replicated
// through the log limits its keyspace only, in Cassandra's words with the
// scope; the cluster's total still holds; its SET GUARDRAILS event has
// the scope and survives encoding; the override survives reopening the
// store and a snapshot restore; removing it lifts the limit.
func TestKeyspaceGuardrailsApplyRefusePersist(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			dir := t.TempDir()
			sm, err := Open(Config{Dir: dir, FlushWindow: window})
			if err != nil {
				t.Fatal(err)
			}
			a := &applier{t: t, sm: sm}
			a.apply(Command{Text: ksDDL + "; CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
			r := a.apply(setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "2"), setGuardrails(t, "tables_warn_threshold", "4", "tables_fail_threshold", "5"))
			if r[0].Err != nil || r[1].Err != nil {
				t.Fatalf("set: %v / %v", r[0].Err, r[1].Err)
			}
			r = a.apply(Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY); CREATE TABLE shop.b (id int PRIMARY KEY); CREATE TABLE shop.c (id int PRIMARY KEY)"})
			want := "statement 3 of 3: Guardrail tables_fail_threshold violated: Cannot have more than 2 tables, aborting the creation of table shop.c (keyspace shop: tables_fail_threshold=2) (the 2 statement(s) before it were applied)"
			if r[0].Err == nil || r[0].Err.Error() != want || !errors.Is(r[0].Err, guardrails.ErrFailed) {
				t.Fatalf("third table of shop: %v\nwant %s", r[0].Err, want)
			}
			r = a.apply(Command{Text: "CREATE TABLE other.a (id int PRIMARY KEY); CREATE TABLE other.b (id int PRIMARY KEY); CREATE TABLE other.c (id int PRIMARY KEY); CREATE TABLE other.d (id int PRIMARY KEY)"})
			if r[0].Err == nil || !strings.Contains(r[0].Err.Error(), "statement 4 of 4: Guardrail tables_fail_threshold violated: Cannot have more than 5 tables, aborting the creation of table other.d") ||
				strings.Contains(r[0].Err.Error(), "keyspace") {
				t.Fatalf("other: the cluster's total: %v", r[0].Err)
			}
			want2 := sm.Current().KeyspaceGuardrails
			if o, ok := want2.Get("shop"); !ok || o.String() != "tables_fail_threshold=2" {
				t.Fatalf("override %v %v", o, ok)
			}
			recs, err := sm.History(0, sm.Current().Epoch, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ev *Event
			for _, rec := range recs {
				if e := &rec.Events[0]; e.Scope() == "shop" {
					ev = e
				}
			}
			if ev == nil || ev.Kind != KindSetGuardrailsEvent || ev.Before() != "" || ev.After() != "tables_fail_threshold=2\n" {
				t.Fatalf("event %+v", ev)
			}
			data, err := sm.Capture(sm.Current().Index)()
			if err != nil {
				t.Fatal(err)
			}
			sm.Close()

			sm = openSM(t, dir)
			if got := sm.Current().KeyspaceGuardrails; !got.Equal(want2) {
				t.Fatalf("after reopen: %v, want %v", got.All(), want2.All())
			}
			recs, _ = sm.History(0, sm.Current().Epoch, 0)
			if recs[2].Events[0].Scope() != "shop" || recs[2].Events[0].After() != "tables_fail_threshold=2\n" {
				t.Fatalf("event after reopen: %+v", recs[2].Events[0])
			}
			a.sm = sm
			// Removal: the limit is lifted, and the store forgets it.
			if r := a.apply(setKeyspaceGuardrails(t, "shop")); r[0].Err != nil || sm.Current().KeyspaceGuardrails.Len() != 0 {
				t.Fatalf("remove: %v, %v", r[0].Err, sm.Current().KeyspaceGuardrails.All())
			}
			if r := a.apply(Command{Text: "DROP TABLE other.a; CREATE TABLE shop.c (id int PRIMARY KEY)"}); r[0].Err != nil {
				t.Fatalf("after removal: %v", r[0].Err)
			}
			sm.Close()
			sm = openSM(t, dir)
			if n := sm.Current().KeyspaceGuardrails.Len(); n != 0 {
				t.Fatalf("removed override back after reopen: %d", n)
			}
			sm.Close()

			fresh := openSM(t, t.TempDir())
			defer fresh.Close()
			if err := fresh.Restore(decodedIndex(t, data), data); err != nil {
				t.Fatal(err)
			}
			if got := fresh.Current().KeyspaceGuardrails; !got.Equal(want2) {
				t.Fatalf("after restore: %v", got.All())
			}
		})
	}
}

// decodedIndex is the log index a snapshot covers.
func decodedIndex(t *testing.T, data []byte) uint64 {
	t.Helper()
	s, err := snapshot.DecodeStore(data)
	if err != nil {
		t.Fatal(err)
	}
	return s.Index
}

// TestSnapshotWithoutKeyspaceGuardrails: a snapshot written before
// overrides existed (no section) decodes with none; one with them
// round-trips them; a corrupt section is an error.
func TestSnapshotWithoutKeyspaceGuardrails(t *testing.T) {
	m := &ClusterMetadata{Epoch: 3, Guardrails: guardrails.Defaults()}
	data := snapshot.Encode(nil, ptr(snapshotContents(m, 7)))
	c, err := snapshot.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sections) != 0 {
		t.Fatalf("sections %v without overrides", c.Sections)
	}
	back, err := metadataOf(c, 7)
	if err != nil || back.KeyspaceGuardrails.Len() != 0 {
		t.Fatalf("old snapshot: %v %v", back, err)
	}
	o, _ := guardrails.Override{Scope: "tenant_*"}.Set("columns_per_table_fail_threshold", "9")
	m.KeyspaceGuardrails = m.KeyspaceGuardrails.With(o)
	c, err = snapshot.Decode(snapshot.Encode(nil, ptr(snapshotContents(m, 7))))
	if err != nil {
		t.Fatal(err)
	}
	back, err = metadataOf(c, 7)
	if err != nil || !back.KeyspaceGuardrails.Equal(m.KeyspaceGuardrails) {
		t.Fatalf("round trip: %v %v", back, err)
	}
	c.Sections[len(c.Sections)-1].Data = []byte{1, 1, 0}
	if _, err := metadataOf(c, 7); err == nil || !strings.Contains(err.Error(), "keyspace guardrails") {
		t.Fatalf("corrupt section: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestInvalidKeyspaceGuardrailsCommandChangesNothing(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	noScope := setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "1")
	noScope.Keyspace = ""
	other := setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "1")
	other.Keyspace = "other"
	r := a.apply(noScope, other, Command{Kind: KindSetKeyspaceGuardrails, Keyspace: "shop"},
		Command{Kind: KindSetKeyspaceGuardrails, Keyspace: "shop", Guardrails: []byte{1, 2}})
	for i := range r {
		if r[i].Err == nil {
			t.Errorf("command %d applied", i)
		}
	}
	if sm.Current().KeyspaceGuardrails.Len() != 0 || sm.Current().Epoch != 0 {
		t.Fatal("an invalid command changed the metadata")
	}
	only := setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "1")
	only.OnlyIfUnset = true
	a.apply(only)
	only = setKeyspaceGuardrails(t, "shop", "tables_fail_threshold", "7")
	only.OnlyIfUnset = true
	if a.apply(only); sm.Current().Epoch != 1 {
		t.Fatalf("OnlyIfUnset applied over a set override: epoch %d", sm.Current().Epoch)
	}
}

// TestKeyspaceGuardrailsRecordCodec: the scoped event round-trips;
// corrupt ones do not decode.
func TestKeyspaceGuardrailsRecordCodec(t *testing.T) {
	before, _ := guardrails.Override{Scope: "shop"}.Set("tables_fail_threshold", "3")
	after, _ := before.Set("tables_warn_threshold", "1")
	r := &Record{Epoch: 4, Index: 9, Principal: "op", Events: []Event{{Kind: KindSetGuardrailsEvent, Statement: "tables_warn_threshold=1",
		Guardrails: &GuardrailChange{Before: guardrails.Defaults(), After: guardrails.Defaults(), Scope: "shop", OverrideBefore: before, OverrideAfter: after}}}}
	b := AppendRecord(nil, r)
	back, err := DecodeRecord(b)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if got := back.Events[0].Before(); got != "tables_fail_threshold=3\n" {
		t.Errorf("Before %q", got)
	}
	bad := *r
	ev := bad.Events[0]
	g := *ev.Guardrails
	g.OverrideAfter.Scope = "other"
	ev.Guardrails = &g
	bad.Events = []Event{ev}
	if _, err := DecodeRecord(AppendRecord(nil, &bad)); !errors.Is(err, ErrBadRecord) {
		t.Errorf("mismatched scopes: %v", err)
	}
}
