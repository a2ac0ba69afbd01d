package member

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/metadata"
)

// TestHistoryFilterPages: pages filtered by principal, kind and time hold
// exactly the matching events, in order, each epoch whole, whatever the
// page size; following Next through them reads every matching event once.
// Filters that cannot match by mistake are refused.
func TestHistoryFilterPages(t *testing.T) {
	m := startMember(t, nil)
	execOK(t, m, Request{Statements: shopDDL, Principal: "alice"})
	for i := range 6 {
		who := []string{"alice", "bob"}[i%2]
		execOK(t, m, Request{Statements: fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i), Principal: who})
	}
	execOK(t, m, Request{Statements: "ALTER TABLE shop.t0 ADD v text; CREATE INDEX ON shop.t0 (v)", Atomic: true, Principal: "alice"})
	execOK(t, m, Request{Statements: "DROP TABLE shop.t1", Principal: "bob"})
	ctx := testContext(t)
	all, err := m.Reads().History(ctx, HistoryQuery{From: uptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	// The time range is cut at the times the records carry, so the
	// expected events come from the same records, not from a clock.
	cut := time.Unix(0, all.Records[4].Time)
	for _, tc := range []struct {
		name string
		q    HistoryQuery
		keep func(r *metadata.Record, e *metadata.Event) bool
	}{
		{"alice", HistoryQuery{Principal: "alice"}, func(r *metadata.Record, _ *metadata.Event) bool { return r.Principal == "alice" }},
		{"create table, any case", HistoryQuery{Kind: "create  table"}, func(_ *metadata.Record, e *metadata.Event) bool { return e.Kind == "CREATE TABLE" }},
		{"bob since the cut", HistoryQuery{Principal: "bob", Since: cut}, func(r *metadata.Record, _ *metadata.Event) bool {
			return r.Principal == "bob" && r.Time >= cut.UnixNano()
		}},
		{"until the cut in shop.t0", HistoryQuery{Keyspace: "shop", Table: "t0", Until: cut.Add(time.Nanosecond)}, func(r *metadata.Record, e *metadata.Event) bool {
			return e.Table == "t0" && r.Time <= cut.UnixNano()
		}},
	} {
		var want []string
		for _, r := range all.Records {
			for i := range r.Events {
				if tc.keep(r, &r.Events[i]) {
					want = append(want, fmt.Sprintf("%d %s %s", r.Epoch, r.Events[i].Kind, r.Events[i].Table))
				}
			}
		}
		if len(want) == 0 {
			t.Fatalf("%s: the history holds no matching event to test with", tc.name)
		}
		for _, limit := range []int{1, 2, 100} {
			var got []string
			q := tc.q
			q.From, q.Limit = uptr(0), limit
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("%s, limit %d: more than 20 pages", tc.name, limit)
				}
				page, err := m.Reads().History(ctx, q)
				if err != nil {
					t.Fatalf("%s, limit %d: %v", tc.name, limit, err)
				}
				for _, r := range page.Records {
					if whole := len(all.Records[r.Epoch-1].Events); tc.q.Kind == "" && tc.q.Table == "" && len(r.Events) != whole {
						t.Errorf("%s, limit %d: epoch %d split: %d of %d events", tc.name, limit, r.Epoch, len(r.Events), whole)
					}
					for _, e := range r.Events {
						got = append(got, fmt.Sprintf("%d %s %s", r.Epoch, e.Kind, e.Table))
					}
				}
				if page.Next == nil {
					break
				}
				q.From = page.Next
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s, limit %d:\n%s\nwant\n%s", tc.name, limit, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		// Without From: the newest matching events.
		tail, err := m.Reads().History(ctx, HistoryQuery{Principal: tc.q.Principal, Kind: tc.q.Kind, Since: tc.q.Since, Until: tc.q.Until, Keyspace: tc.q.Keyspace, Table: tc.q.Table, Limit: 1})
		if err != nil || len(tail.Records) != 1 {
			t.Fatalf("%s, newest: %+v, %v", tc.name, tail.Records, err)
		}
		last := tail.Records[0]
		if got := fmt.Sprintf("%d %s %s", last.Epoch, last.Events[len(last.Events)-1].Kind, last.Events[len(last.Events)-1].Table); got != want[len(want)-1] {
			t.Errorf("%s, newest: %s, want %s", tc.name, got, want[len(want)-1])
		}
	}
	for name, q := range map[string]HistoryQuery{
		"unknown kind":         {Kind: "CREATE TABEL"},
		"until before since":   {Since: cut, Until: cut.Add(-time.Second)},
		"until equal to since": {Since: cut, Until: cut},
	} {
		var ae *ArgumentError
		if _, err := m.Reads().History(ctx, q); !errors.As(err, &ae) || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	if _, err := m.Reads().History(ctx, HistoryQuery{Kind: "CREATE TABEL"}); err == nil || !strings.Contains(err.Error(), "CREATE TABLE, ALTER TABLE") {
		t.Errorf("unknown kind: %v, want the kinds listed", err)
	}
}
