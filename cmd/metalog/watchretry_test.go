package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/testkit"
)

// serveAt serves m on addr ("127.0.0.1:0": a free port) and returns a
// function that stops it, which the test's end calls too; m.addr is where
// it listens.
func serveAt(t *testing.T, addr string, m *fakeMember) (stop func()) {
	t.Helper()
	s := testkit.Start(t, m, testkit.At(addr))
	m.addr = s.Addr
	return s.Stop
}

// TestWatchWaitsForARestartingMember: the only member goes away after a
// change and refuses connections for longer than the client's connect
// timeout, then comes back at the same address; within --timeout the
// watch goes on there from the epoch it printed, printing nothing twice,
// until the member refuses it.
func TestWatchWaitsForARestartingMember(t *testing.T) {
	script := watchScript()
	first := &fakeMember{watch: script[:2]} // then it holds the stream open
	stop := serveAt(t, "127.0.0.1:0", first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- runCtx(ctx, &out, "watch", "--endpoints", first.addr, "--timeout", "60s") }()
	waitOut := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), what); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("watch printed %q in 10 s, want %q", out.String(), what)
			}
		}
	}
	waitOut("CREATE INDEX")
	stop()

	// Down (refusing connections) for twice the connect timeout, after
	// which a call would have left the endpoint out: the watch goes on.
	downFor := 2 * client.DefaultConnectTimeout
	for downSince := time.Now(); time.Since(downSince) < downFor; {
		select {
		case err := <-done:
			t.Fatalf("watch ended while its member was down for less than --timeout: %v; printed:\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	again := &fakeMember{watch: script[1:], watchEnd: status.Error(codes.PermissionDenied, "fake: token revoked")}
	serveAt(t, first.addr, again)
	select {
	case err := <-done:
		if err == nil || err.Error() != revoked {
			t.Errorf("watch: %v, want %q", err, revoked)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("watch did not go on within 30 s of its member's return; printed:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "CREATE TABLE shop.orders"); n != 1 || !strings.Contains(out.String(), "DROP KEYSPACE shop") {
		t.Errorf("want the change of epoch 11 once, then the rest; printed:\n%s", out.String())
	}
	if got := again.requests(); len(got) != 1 || got[0] != "Watch from=11 ks= table=" {
		t.Errorf("the member back was asked %q, want one watch from epoch 11", got)
	}
}
