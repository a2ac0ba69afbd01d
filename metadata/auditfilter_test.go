package metadata

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// auditHistory applies, to a new state machine, changes by alice and bob
// at known times (one logged before times were recorded), with a
// guardrail change and an atomic request of two statement kinds.
func auditHistory(t *testing.T) *StateMachine {
	sm := openSM(t, t.TempDir())
	t.Cleanup(func() { sm.Close() })
	a := &applier{t: t, sm: sm}
	at := func(h int) int64 { return time.Date(2026, 12, 1, h, 0, 0, 0, time.UTC).UnixNano() }
	g := setGuardrails(t, "tables_warn_threshold", "50")
	g.Principal, g.Time = "root", at(12)
	for i, r := range a.apply(
		Command{Text: ksDDL, Principal: "alice"},                                                                                // 1, time unknown
		Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY)", Principal: "alice", Time: at(9)},                              // 2
		Command{Text: "CREATE TABLE shop.b (id int PRIMARY KEY); ALTER TABLE shop.a ADD v int", Principal: "bob", Time: at(10)}, // 3, 4
		g, // 5
		Command{Text: "CREATE INDEX ON shop.a (v); DROP TABLE shop.b", Principal: "alice", Time: at(13), Atomic: true}, // 6
	) {
		if r.Err != nil {
			t.Fatalf("command %d: %v", i+1, r.Err)
		}
	}
	return sm
}

// TestEventFilterAudit: the principal, time range and kind filters keep
// the events an auditor asks for, alone and combined with the keyspace
// filter; a time filter leaves out changes of unknown time; the tail of
// n matching events reaches back past the others.
func TestEventFilterAudit(t *testing.T) {
	sm := auditHistory(t)
	recs, err := sm.History(0, sm.Current().Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	at := func(h int) time.Time { return time.Date(2026, 12, 1, h, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		f    EventFilter
		want string
	}{
		{"alice", EventFilter{Principal: "alice"}, "1 CREATE KEYSPACE shop\n2 CREATE TABLE shop.a\n6 CREATE INDEX shop.a\n6 DROP TABLE shop.b"},
		{"bob", EventFilter{Principal: "bob"}, "3 CREATE TABLE shop.b\n4 ALTER TABLE shop.a"},
		{"nobody", EventFilter{Principal: "carol"}, ""},
		{"since 10:00", EventFilter{Since: at(10)}, "3 CREATE TABLE shop.b\n4 ALTER TABLE shop.a\n5 SET GUARDRAILS\n6 CREATE INDEX shop.a\n6 DROP TABLE shop.b"},
		{"until 10:00, excluded", EventFilter{Until: at(10)}, "2 CREATE TABLE shop.a"},
		{"10:00 to 13:00", EventFilter{Since: at(10), Until: at(13)}, "3 CREATE TABLE shop.b\n4 ALTER TABLE shop.a\n5 SET GUARDRAILS"},
		{"CREATE TABLE", EventFilter{Kind: "CREATE TABLE"}, "2 CREATE TABLE shop.a\n3 CREATE TABLE shop.b"},
		{"SET GUARDRAILS", EventFilter{Kind: KindSetGuardrailsEvent}, "5 SET GUARDRAILS"},
		{"alice's drops", EventFilter{Principal: "alice", Kind: "DROP TABLE"}, "6 DROP TABLE shop.b"},
		{"shop.a by alice since 9:00", EventFilter{Keyspace: "shop", Table: "a", Principal: "alice", Since: at(9)}, "2 CREATE TABLE shop.a\n6 CREATE INDEX shop.a"},
		{"1600 to 2999, past what UnixNano holds", EventFilter{Keyspace: "shop", Table: "b", Since: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)}, "3 CREATE TABLE shop.b\n6 DROP TABLE shop.b"},
		{"shop.b, kind CREATE TABLE, by bob, 10:00 to 11:00", EventFilter{Keyspace: "shop", Table: "b", Kind: "CREATE TABLE", Principal: "bob", Since: at(10), Until: at(11)}, "3 CREATE TABLE shop.b"},
	} {
		var got []*Record
		for _, r := range recs {
			if k, ok := r.Filter(tc.f); ok {
				got = append(got, k)
			}
		}
		if diff := cmp.Diff(tc.want, eventNames(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	// A tail of 1 of alice's events is the atomic request's two: a page
	// never splits an epoch.
	tail, err := sm.HistoryTail(sm.Current().Epoch, 1, EventFilter{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventNames(tail); got != "6 CREATE INDEX shop.a\n6 DROP TABLE shop.b" {
		t.Errorf("tail of 1 of alice's events:\n%s", got)
	}
	tail, _ = sm.HistoryTail(sm.Current().Epoch, 1, EventFilter{Kind: "CREATE TABLE", Principal: "alice"})
	if got := eventNames(tail); got != "2 CREATE TABLE shop.a" {
		t.Errorf("tail of 1 of alice's CREATE TABLEs:\n%s", got)
	}
}

func TestNormalizeKind(t *testing.T) {
	for in, want := range map[string]string{"create table": "CREATE TABLE", " Drop   Index ": "DROP INDEX", "SET GUARDRAILS": "SET GUARDRAILS"} {
		if got := NormalizeKind(in); got != want {
			t.Errorf("NormalizeKind(%q) = %q, want %q", in, got, want)
		}
	}
}
