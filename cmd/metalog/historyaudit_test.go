package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestHistoryFilterFlagsAreSent: --principal, --since, --until and --kind
// reach the member as HistoryRequest's filter fields, on every page and in
// the newest-changes form, times read as RFC 3339, dates and durations
// back from now.
func TestHistoryFilterFlagsAreSent(t *testing.T) {
	m := historyMember(t)
	args := []string{"history", "--endpoints", m.addr, "--principal", "bob", "--since", "2026-12-01T10:02:00Z",
		"--until", "2026-12-02", "--kind", "create table"}
	if _, err := runErr(t, args...); err != nil {
		t.Fatal(err)
	}
	f := " principal=bob kind=create table since=2026-12-01T10:02:00Z until=2026-12-02T00:00:00Z"
	want := []string{"History from=0 to=- limit=0 ks= table=" + f, "History from=3 to=- limit=0 ks= table=" + f, "History from=5 to=- limit=0 ks= table=" + f}
	if got := m.requests(); !slices.Equal(got, want) {
		t.Errorf("requests:\n%q\nwant\n%q", got, want)
	}
	if _, err := runErr(t, "history", "--endpoints", m.addr, "--limit", "2", "--kind", "DROP INDEX", "--since", "2h"); err != nil {
		t.Fatal(err)
	}
	got := m.requests()
	last := got[len(got)-1]
	since, ok := strings.CutPrefix(last, "History from=- to=- limit=2 ks= table= principal= kind=DROP INDEX since=")
	if !ok {
		t.Fatalf("request %q: want the newest 2 DROP INDEX changes since a time", last)
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSuffix(since, " until=-"))
	if err != nil || time.Since(at) < 2*time.Hour-time.Minute || time.Since(at) > 3*time.Hour {
		t.Errorf("--since 2h sent %q (%v): want about two hours ago", since, err)
	}
}

// TestHistoryFilterFlagErrors: a time in no form history reads, an empty
// range and --diff with --json are refused before any request.
func TestHistoryFilterFlagErrors(t *testing.T) {
	m := historyMember(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "yesterday"}, `--since "yesterday": want an RFC 3339 time`},
		{[]string{"--until", "-5m"}, `--until "-5m": want an RFC 3339 time`},
		{[]string{"--since", "2026-12-02", "--until", "2026-12-01"}, "--until 2026-12-01T00:00:00Z is not after --since 2026-12-02T00:00:00Z"},
		{[]string{"--diff", "--json"}, "--diff with --json: give one"},
	} {
		if _, err := runErr(t, append([]string{"history", "--endpoints", m.addr}, tc.args...)...); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("history %q: %v, want %q", tc.args, err, tc.want)
		}
	}
	if got := m.requests(); len(got) != 0 {
		t.Errorf("requests %q: want none", got)
	}
}

// TestHistoryPrintsWhatIsKept: plain history on a member whose retention
// pruned the epochs before 4 prints the changes from epoch 4 on and says
// so, instead of failing with OutOfRange; an explicit --from-epoch before
// them is still refused.
func TestHistoryPrintsWhatIsKept(t *testing.T) {
	m := historyMember(t)
	m.pruned = 4
	out, err := runErr(t, "history", "--endpoints", m.addr)
	if err != nil {
		t.Fatalf("history: %v\n%s", err, out)
	}
	if got := strings.Join(epochsPrinted(out), " "); got != "4 4 5 6 7" {
		t.Errorf("history printed epochs %s, want 4 4 5 6 7:\n%s", got, out)
	}
	if !strings.Contains(out, "history: the members keep the changes from epoch 4 on (retention pruned the older ones); printing from there\n") {
		t.Errorf("history printed no note of the pruning:\n%s", out)
	}
	if _, err := runErr(t, "history", "--endpoints", m.addr, "--from-epoch", "1"); err == nil || !strings.Contains(err.Error(), "OutOfRange") {
		t.Errorf("history --from-epoch 1: %v, want OutOfRange", err)
	}
}

// TestHistoryDiffOutput: --diff prints each change's DESCRIBE text before
// and after as a unified diff under its statement, a create as all
// additions, with stored control characters escaped.
func TestHistoryDiffOutput(t *testing.T) {
	before := "CREATE TABLE shop.orders (\n    id int PRIMARY KEY,\n    total decimal\n) WITH comment = 'x';\n"
	after := "CREATE TABLE shop.orders (\n    id int PRIMARY KEY,\n    note text,\n    total decimal\n) WITH comment = 'x\x1b[2J';\n"
	m := startMember(t, &fakeMember{pageSize: 10, pruned: 1, events: []*pb.Event{
		{Epoch: 2, Principal: "bob", RequestId: "r2", Kind: "CREATE KEYSPACE", Keyspace: "shop", Statement: "CREATE KEYSPACE shop WITH x", After: "CREATE KEYSPACE shop WITH x;\n"},
		{Epoch: 3, Principal: "bob", RequestId: "r3", Kind: "ALTER TABLE", Keyspace: "shop", Table: "orders", Statement: "ALTER TABLE shop.orders ADD note text", Before: before, After: after},
	}})
	out, err := runErr(t, "history", "--endpoints", m.addr, "--diff")
	want := `epoch 2  -  bob  CREATE KEYSPACE shop  request r2
    CREATE KEYSPACE shop WITH x
    --- before
    +++ after
    +CREATE KEYSPACE shop WITH x;
epoch 3  -  bob  ALTER TABLE shop.orders  request r3
    ALTER TABLE shop.orders ADD note text
    --- before
    +++ after
     CREATE TABLE shop.orders (
         id int PRIMARY KEY,
    +    note text,
         total decimal
    -) WITH comment = 'x';
    +) WITH comment = 'x\x1b[2J';
`
	if err != nil || out != want {
		t.Errorf("history --diff: %v, printed:\n%s\nwant:\n%s", err, out, want)
	}
}

// TestDiffLines: the diff keeps the longest common run of lines and
// shows all of a create, a drop and an unchanged text.
func TestDiffLines(t *testing.T) {
	for _, tc := range []struct{ a, b, want []string }{
		{nil, []string{"x", "y"}, []string{"+x", "+y"}},
		{[]string{"x", "y"}, nil, []string{"-x", "-y"}},
		{[]string{"a", "b"}, []string{"a", "b"}, []string{" a", " b"}},
		{[]string{"a", "b", "c", "d"}, []string{"a", "c", "e", "d"}, []string{" a", "-b", " c", "+e", " d"}},
		{[]string{"a", "b"}, []string{"c"}, []string{"-a", "-b", "+c"}},
	} {
		if got := diffLines(tc.a, tc.b); !slices.Equal(got, tc.want) {
			t.Errorf("diffLines(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestObjectNamesQuoted: exec, history and watch name objects as CQL
// reads them, so that the name pasted back finds the object.
func TestObjectNamesQuoted(t *testing.T) {
	for _, tc := range []struct{ kind, ks, table, name, want string }{
		{"CREATE TABLE", "KsMixed", "tb31", "", `"KsMixed".tb31`},
		{"CREATE TABLE", "shop", "Orders", "", `shop."Orders"`},
		{"CREATE KEYSPACE", "select", "", "", `"select"`},
		{"CREATE TYPE", "shop", "", "text", `shop."text"`},
		{"CREATE FUNCTION", "shop", "", "Twice(int)", `shop."Twice"(int)`},
		{"CREATE INDEX", "shop", "Orders", "By_v", `shop."By_v" ON "Orders"`},
		{"CREATE TRIGGER", "shop", "Orders", "Audit", `"Audit" ON shop."Orders"`},
		{"SET GUARDRAILS", "", "", "", ""},
		{"CREATE TABLE", "shop", `a"b`, "", `shop."a""b"`},
	} {
		if got := objectName(tc.kind, tc.ks, tc.table, tc.name); got != tc.want {
			t.Errorf("objectName(%q, %q, %q, %q) = %s, want %s", tc.kind, tc.ks, tc.table, tc.name, got, tc.want)
		}
	}
}
