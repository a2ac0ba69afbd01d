package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// watchScript is a stream with every kind of message: an atomic request
// of two statements, a resync, and a change of unknown time and author.
func watchScript() []*pb.WatchResponse {
	return []*pb.WatchResponse{
		{Type: "progress", Epoch: 10},
		{Type: "events", Epoch: 11, Events: []*pb.Event{
			{Epoch: 11, Time: at(0), Principal: "alice", Kind: "CREATE TABLE", Keyspace: "shop", Table: "orders", Statement: "CREATE TABLE shop.orders (id uuid PRIMARY KEY)"},
			{Epoch: 11, Time: at(0), Principal: "alice", Kind: "CREATE INDEX", Keyspace: "shop", Table: "orders", Name: "by_total"},
		}},
		{Type: "progress", Epoch: 11},
		{Type: "resync", Epoch: 20, Cql: "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};"},
		{Type: "events", Epoch: 21, Events: []*pb.Event{{Epoch: 21, Kind: "DROP KEYSPACE", Keyspace: "shop"}}},
	}
}

const revoked = "PermissionDenied: fake: token revoked (the watch got to epoch 21: go on with --from-epoch 21)"

func TestWatchPrintsEachChange(t *testing.T) {
	m := startMember(t, &fakeMember{watch: watchScript(), watchEnd: status.Error(codes.PermissionDenied, "fake: token revoked")})
	events := []string{
		"epoch 11  2026-12-01T10:00:00Z  alice  CREATE TABLE shop.orders",
		"epoch 11  2026-12-01T10:00:00Z  alice  CREATE INDEX shop.by_total ON orders",
	}
	resync := []string{
		"epoch 20  resync: the member no longer keeps the changes asked for; the whole schema at epoch 20 follows, then the changes after it",
		"CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};",
		"epoch 21  -  -  DROP KEYSPACE shop",
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, slices.Concat(events, resync)},
		{[]string{"--progress"}, slices.Concat([]string{"epoch 10  progress"}, events, []string{"epoch 11  progress"}, resync)},
	} {
		out, err := runErr(t, append([]string{"watch", "--endpoints", m.addr}, tc.args...)...)
		if err == nil || err.Error() != revoked {
			t.Errorf("watch %q: %v, want %q", tc.args, err, revoked)
		}
		if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, tc.want) {
			t.Errorf("watch %q printed:\n%s\nwant:\n%s", tc.args, out, strings.Join(tc.want, "\n"))
		}
	}
}

func TestWatchJSONPrintsEveryMessage(t *testing.T) {
	m := startMember(t, &fakeMember{watch: watchScript(), watchEnd: status.Error(codes.PermissionDenied, "fake: token revoked")})
	out, err := runErr(t, "watch", "--endpoints", m.addr, "--json")
	if err == nil || err.Error() != revoked {
		t.Errorf("watch --json: %v, want %q", err, revoked)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(watchScript()) {
		t.Fatalf("watch --json printed %d lines, want one per message (%d):\n%s", len(lines), len(watchScript()), out)
	}
	if want := `{"type":"progress","epoch":"10","events":[],"cql":"","keyspaces":[],"cluster_id":"","history_id":""}`; lines[0] != want {
		t.Errorf("first line %s, want %s", lines[0], want)
	}
	if !strings.HasPrefix(lines[1], `{"type":"events","epoch":"11","events":[{"epoch":"11","index":"0","time":"2026-12-01T10:00:00Z","principal":"alice","role":"","request_id":"",`) {
		t.Errorf("second line %s: want the events with the proto field names", lines[1])
	}
}

// TestWatchFromEpoch: --from-epoch is sent only when given, 0 included,
// with the keyspace and table of the argument.
func TestWatchFromEpoch(t *testing.T) {
	m := startMember(t, &fakeMember{watchEnd: status.Error(codes.FailedPrecondition, "fake: end")})
	for _, args := range [][]string{{}, {"--from-epoch", "0"}, {"--from-epoch", "5", `Shop."Orders"`}} {
		if _, err := runErr(t, append([]string{"watch", "--endpoints", m.addr}, args...)...); err == nil || err.Error() != "FailedPrecondition: fake: end" {
			t.Errorf("watch %q: %v, want FailedPrecondition: fake: end", args, err)
		}
	}
	want := []string{"Watch from=- ks= table=", "Watch from=0 ks= table=", "Watch from=5 ks=shop table=Orders"}
	if got := m.requests(); !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	if _, err := runErr(t, "watch", "--endpoints", m.addr, "a.b.c"); err == nil || !strings.HasPrefix(err.Error(), `watch "a.b.c": 3 names`) {
		t.Errorf("watch a.b.c: %v, want an error naming the argument", err)
	}
}

// TestWatchGoesOnOnAnotherMember: the first member goes away after one
// change; the second is asked from it and the change it sends again is
// not printed twice.
func TestWatchGoesOnOnAnotherMember(t *testing.T) {
	script := watchScript()
	a := startMember(t, &fakeMember{watch: script[:2], watchEnd: status.Error(codes.Unavailable, "fake: shutting down")})
	b := startMember(t, &fakeMember{watch: script[1:], watchEnd: status.Error(codes.PermissionDenied, "fake: token revoked")})
	out, err := runErr(t, "watch", "--endpoints", a.addr+","+b.addr)
	if err == nil || err.Error() != revoked {
		t.Errorf("watch: %v, want %q", err, revoked)
	}
	if n := strings.Count(out, "CREATE TABLE shop.orders"); n != 1 {
		t.Errorf("the change of epoch 11 printed %d times:\n%s", n, out)
	}
	if got, want := b.requests(), []string{"Watch from=11 ks= table="}; !slices.Equal(got, want) {
		t.Errorf("the second member was asked %q, want %q", got, want)
	}
}

// TestWatchEndsQuietlyWhenInterrupted: the command's context ending (as
// SIGINT ends it) ends the watch with no error.
func TestWatchEndsQuietlyWhenInterrupted(t *testing.T) {
	m := startMember(t, &fakeMember{watch: watchScript()[:2]}) // then stays open
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- runCtx(ctx, &out, "watch", "--endpoints", m.addr) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "CREATE INDEX"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("watch printed %q in 10 s", out.String())
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch once interrupted: %v, want no error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not end within 10 s of its context")
	}
}
