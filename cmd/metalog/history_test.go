package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// historyMember keeps the changes of epochs 1 to 7, two statements at
// epoch 4 (an atomic request), and answers pages of 3 events by default.
func historyMember(t *testing.T) *fakeMember {
	var events []*pb.Event
	for _, e := range []uint64{1, 2, 3, 4, 4, 5, 6, 7} {
		events = append(events, &pb.Event{Epoch: e, Time: at(int(e)), Principal: "bob", RequestId: fmt.Sprintf("r%d", e),
			Kind: "CREATE TABLE", Keyspace: "ks", Table: fmt.Sprintf("t%d_%d", e, len(events)), Statement: fmt.Sprintf("CREATE TABLE ks.t%d_%d (id int PRIMARY KEY)", e, len(events))})
	}
	return startMember(t, &fakeMember{events: events, pageSize: 3, pruned: 1})
}

// epochsPrinted returns the epoch of each block history printed.
func epochsPrinted(out string) []string {
	var epochs []string
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(line, "epoch "); ok {
			e, _, _ := strings.Cut(rest, " ")
			epochs = append(epochs, e)
		}
	}
	return epochs
}

func TestHistoryPagesAsTheFlagsSay(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		epochs   string // printed, space separated
		requests []string
	}{
		{nil, "1 2 3 4 4 5 6 7", []string{
			"History from=0 to=- limit=0 ks= table=", "History from=3 to=- limit=0 ks= table=", "History from=5 to=- limit=0 ks= table="}},
		{[]string{"--limit", "2"}, "6 7", []string{"History from=- to=- limit=2 ks= table="}},
		{[]string{"--limit", "3", "--to-epoch", "4"}, "3 4 4", []string{"History from=- to=4 limit=3 ks= table="}},
		// The limit is passed to finish epoch 4.
		{[]string{"--from-epoch", "2", "--limit", "2"}, "3 4 4", []string{"History from=2 to=- limit=2 ks= table="}},
		// Past a page (here 3 events) the rest of the limit is asked next.
		{[]string{"--from-epoch", "2", "--limit", "5"}, "3 4 4 5 6", []string{
			"History from=2 to=- limit=5 ks= table=", "History from=4 to=- limit=2 ks= table="}},
		{[]string{"--from-epoch", "1", "--to-epoch", "5", "shop.Orders"}, "2 3 4 4 5", []string{
			"History from=1 to=5 limit=0 ks=shop table=orders", "History from=4 to=5 limit=0 ks=shop table=orders"}},
	} {
		m := historyMember(t)
		out, err := runErr(t, append([]string{"history", "--endpoints", m.addr}, tc.args...)...)
		if err != nil {
			t.Errorf("history %q: %v", tc.args, err)
			continue
		}
		if got := strings.Join(epochsPrinted(out), " "); got != tc.epochs {
			t.Errorf("history %q printed epochs %s, want %s:\n%s", tc.args, got, tc.epochs, out)
		}
		if got := m.requests(); !slices.Equal(got, tc.requests) {
			t.Errorf("history %q asked:\n%q\nwant:\n%q", tc.args, got, tc.requests)
		}
	}
}

func TestHistoryOutput(t *testing.T) {
	m := historyMember(t)
	out, err := runErr(t, "history", "--endpoints", m.addr, "--from-epoch", "6")
	want := "epoch 7  2026-12-01T10:07:00Z  bob  CREATE TABLE ks.t7_7  request r7\n    CREATE TABLE ks.t7_7 (id int PRIMARY KEY)\n"
	if err != nil || out != want {
		t.Errorf("history --from-epoch 6: %v, printed:\n%s\nwant:\n%s", err, out, want)
	}
	out, err = runErr(t, "history", "--endpoints", m.addr, "--from-epoch", "6", "--json")
	want = `{"epoch":"7","index":"0","time":"2026-12-01T10:07:00Z","principal":"bob","role":"","request_id":"r7","kind":"CREATE TABLE","keyspace":"ks","table":"t7_7","name":"","statement":"CREATE TABLE ks.t7_7 (id int PRIMARY KEY)","before":"","after":"","before_object":null,"after_object":null,"cause":null}` + "\n"
	if err != nil || out != want {
		t.Errorf("history --json: %v, printed:\n%s\nwant:\n%s", err, out, want)
	}
}

func TestHistoryErrors(t *testing.T) {
	m := historyMember(t)
	m.pruned = 4
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-epoch", "5", "--to-epoch", "3"}, "--to-epoch 3: want an epoch after --from-epoch 5"},
		{[]string{"--from-epoch", "5", "--to-epoch", "5"}, "--to-epoch 5: want an epoch after --from-epoch 5"},
		{[]string{"--limit", "0"}, "--limit 0: want at least 1"},
		{[]string{"--limit", "10001"}, "--limit 10001: the newest changes come in one page of at most 10000; give --from-epoch"},
		{[]string{"--from-epoch", "99999999999999999999"}, `invalid argument "99999999999999999999" for --from-epoch: out of range`},
		{[]string{"a.b.c"}, `history "a.b.c": 3 names`},
		{[]string{"--from-epoch", "1"}, "OutOfRange: the history before epoch 4 was pruned"},
		{[]string{"--timeout", "0s"}, "--timeout 0s: want a duration above 0"},
	} {
		if _, err := runErr(t, append([]string{"history", "--endpoints", m.addr}, tc.args...)...); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("history %q: %v, want %q", tc.args, err, tc.want)
		}
	}
	if got := m.requests(); len(got) != 1 {
		t.Errorf("requests %q: want only the one whose flags are valid", got)
	}
	// With --from-epoch, a limit of more than a page is paged through.
	if _, err := runErr(t, "history", "--endpoints", m.addr, "--from-epoch", "4", "--limit", "20000"); err != nil {
		t.Errorf("history --from-epoch 4 --limit 20000: %v", err)
	}
}

// TestHistoryStopsOnAPageThatDoesNotMoveOn: a next_epoch that does not
// move past the page's start is refused, not followed for ever.
func TestHistoryStopsOnAPageThatDoesNotMoveOn(t *testing.T) {
	q := historyQuery{from: new(uint64)}
	calls := 0
	stuck := func(_ context.Context, req *pb.HistoryRequest, _ ...grpc.CallOption) (*pb.HistoryResponse, error) {
		calls++
		return &pb.HistoryResponse{NextEpoch: req.FromEpoch}, nil
	}
	err := q.run(context.Background(), stuck, func(*pb.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "not after 0") || calls != 1 {
		t.Errorf("run: %v after %d calls, want an error after one", err, calls)
	}
}
