package client

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// noLeaks fails the test if, once its servers and clients are closed
// (the cleanups registered later run first), a goroutine it started
// still runs this package's code or a gRPC client's. The member the
// external tests share starts goroutines of its own at any time, so the
// check is narrower than goleak's, which TestMain runs at the end.
func noLeaks(t *testing.T) {
	before := map[string]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	t.Cleanup(func() {
		var left []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			left = left[:0]
			for _, g := range goroutines() {
				if !before[g.id] && g.isClients() {
					left = append(left, g.stack)
				}
			}
			if len(left) == 0 {
				return
			}
		}
		t.Errorf("%d goroutines left behind:\n%s", len(left), strings.Join(left, "\n\n"))
	})
}

// goroutine is one goroutine's stack, as runtime.Stack writes it.
type goroutine struct{ id, stack string }

// isClients reports whether g runs this package's code (the tests'
// fakes included) or a gRPC client's, and is not a test's own.
func (g goroutine) isClients() bool {
	if strings.Contains(g.stack, "testing.tRunner") || strings.Contains(g.stack, "testing.(*M)") {
		return false
	}
	for _, code := range []string{"metalog/metalog/client.", "grpc.newClientStream", "grpc.(*clientStream)", "grpc/internal/transport.(*http2Client)", "grpc.(*addrConn)"} {
		if strings.Contains(g.stack, code) {
			return true
		}
	}
	return false
}

// goroutines returns the stack of every goroutine.
func goroutines() []goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	for _, stack := range strings.Split(string(buf), "\n\n") {
		id, _, _ := strings.Cut(strings.TrimPrefix(stack, "goroutine "), " ")
		out = append(out, goroutine{id: id, stack: stack})
	}
	return out
}

// describe says what a watch message is, e.g. "events 5".
func describe(m *pb.WatchResponse) string { return fmt.Sprintf("%s %d", m.Type, m.Epoch) }

// receive receives n messages of st.
func receive(t *testing.T, st grpc.ServerStreamingClient[pb.WatchResponse], n int) []string {
	t.Helper()
	var got []string
	for range n {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("Recv after %q: %v", got, err)
		}
		got = append(got, describe(m))
	}
	return got
}

// events is the description of events messages at epochs.
func events(epochs ...uint64) []string {
	var out []string
	for _, e := range epochs {
		out = append(out, fmt.Sprintf("%s %d", WatchEvents, e))
	}
	return out
}

// watchClient returns a Client for the fakes, in their order, that keeps
// trying for the test's whole context.
func watchClient(t *testing.T, fakes ...*watchFake) *Client {
	var eps []string
	for _, f := range fakes {
		eps = append(eps, f.addr)
	}
	return newTestClient(t, Config{Endpoints: eps, Timeout: time.Hour, ConnectTimeout: 50 * time.Millisecond})
}

func checkRequests(t *testing.T, f *watchFake, want ...string) {
	t.Helper()
	if got := f.requests(); !slices.Equal(got, want) {
		t.Errorf("fake %s was asked from epochs %q, want %q", f.name, got, want)
	}
}

// TestWatchResumesOnTheNextEndpoint: streams that fail with Unavailable,
// at once or after some messages, end with io.EOF, or resend what the
// client had, one after the other; the caller sees each epoch once, in
// order, and each endpoint is asked from the last epoch returned.
func TestWatchResumesOnTheNextEndpoint(t *testing.T) {
	noLeaks(t)
	fd := newFeed(0, 1, 2, 3, 5, 8, 9, 12)
	a := startWatchFake(t, "a", fd, plan{send: 2, end: codes.Unavailable}, plan{send: 1, end: codes.Unavailable})
	b := startWatchFake(t, "b", fd, plan{send: 0, end: codes.Unavailable}, plan{send: -1, rewind: 2})
	c := startWatchFake(t, "c", fd, plan{send: 3, end: codes.OK, rewind: 1})
	cl := watchClient(t, a, b, c)
	st, err := cl.Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0), Keyspace: "ks"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := receive(t, st, 7), events(1, 2, 3, 5, 8, 9, 12); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, a, "0", "5")
	checkRequests(t, b, "2", "8")
	checkRequests(t, c, "2")
	if got := cl.routes.writes.last.Load(); got != 1 {
		t.Errorf("the Client's last endpoint is %d, want 1 (b, which serves the watch)", got)
	}
}

// TestWatchGoesRoundUntilAMemberServes: members that end every watch at
// once (still copying history) are tried round after round, with the
// pauses between rounds, until one serves.
func TestWatchGoesRoundUntilAMemberServes(t *testing.T) {
	fd := newFeed(0, 4, 6)
	copying := plan{send: 0, end: codes.Unavailable}
	a := startWatchFake(t, "a", fd, copying, copying)
	b := startWatchFake(t, "b", fd, copying, copying, copying)
	st, err := watchClient(t, a, b).Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(3)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := receive(t, st, 2), events(4, 6); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, a, "3", "3", "3")
	checkRequests(t, b, "3", "3")
}

// TestWatchFromNowResumesFromTheFirstProgress: without from_epoch, a
// watch that failed before any message is opened from now again, and
// one that failed after its first progress message from that epoch.
func TestWatchFromNowResumesFromTheFirstProgress(t *testing.T) {
	fd := newFeed(3, 1, 2, 3, 4, 5)
	a := startWatchFake(t, "a", fd, plan{send: 0, end: codes.Unavailable})
	b := startWatchFake(t, "b", fd, plan{send: 1, end: codes.Unavailable})
	c := startWatchFake(t, "c", fd)
	st, err := watchClient(t, a, b, c).Watch(testCtx(t), &pb.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{string(WatchProgress) + " 3"}, events(4, 5)...)
	if got := receive(t, st, 3); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, a, "-")
	checkRequests(t, b, "-")
	checkRequests(t, c, "3")
}

// TestWatchResumesAfterALostConnection: a member that stops (its
// connection closes, then it refuses connections) is left for the next.
func TestWatchResumesAfterALostConnection(t *testing.T) {
	noLeaks(t)
	fd := newFeed(0, 1, 2, 3, 4, 5, 6)
	a := startWatchFake(t, "a", fd, plan{send: 3, drop: true})
	b := startWatchFake(t, "b", fd, plan{send: 1, drop: true})
	c := startWatchFake(t, "c", fd)
	st, err := watchClient(t, a, b, c).Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := receive(t, st, 6), events(1, 2, 3, 4, 5, 6); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
}

// TestWatchPassesAResyncOnAndResumesAfterIt: a member that pruned the
// history asked for sends one resync; the watch goes on after its epoch.
func TestWatchPassesAResyncOnAndResumesAfterIt(t *testing.T) {
	fd := newFeed(0, 1, 2, 3, 5, 8, 9, 12)
	a := startWatchFake(t, "a", fd, plan{send: 2, end: codes.Unavailable})
	b := startWatchFake(t, "b", fd, plan{send: 2, end: codes.Unavailable})
	b.pruned = 6
	c := startWatchFake(t, "c", fd)
	st, err := watchClient(t, a, b, c).Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(events(1, 2), []string{string(WatchResync) + " 6"}, events(8, 9, 12))
	if got := receive(t, st, 6); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, b, "2")
	checkRequests(t, c, "8")
}

// TestWatchReturnsOtherErrorsAsSent: an error other than Unavailable,
// before or after a message, ends the watch; no other endpoint is asked.
func TestWatchReturnsOtherErrorsAsSent(t *testing.T) {
	fd := newFeed(0, 1, 2)
	for _, code := range []codes.Code{codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated, codes.OutOfRange, codes.FailedPrecondition} {
		for _, send := range []int{0, 1} {
			a := startWatchFake(t, "a", fd, plan{send: send, end: code})
			b := startWatchFake(t, "b", fd)
			st, err := watchClient(t, a, b).Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
			if err != nil {
				t.Fatal(err)
			}
			receive(t, st, send)
			want := fmt.Sprintf("fake a says %s", code)
			for i := range 2 { // and again once it has ended
				if _, err := st.Recv(); status.Code(err) != code || status.Convert(err).Message() != want {
					t.Errorf("%s after %d messages: Recv %d: %v, want %s %q", code, send, i, err, code, want)
				}
			}
			if got := b.requests(); len(got) != 0 {
				t.Errorf("%s: the next endpoint was asked %q", code, got)
			}
			if md := st.Trailer(); !slices.Equal(md.Get("fake"), []string{"a"}) {
				t.Errorf("%s: Trailer %v, want a's", code, md)
			}
			if st.Context().Err() == nil {
				t.Errorf("%s: the stream's context is not done after its final error", code)
			}
		}
	}
}

// TestWatchGivesUpAfterTimeout: members that all answer Unavailable are
// tried for Config.Timeout, then the error names each; endpoints where
// nothing listens make Watch itself fail.
func TestWatchGivesUpAfterTimeout(t *testing.T) {
	fd := newFeed(0, 1)
	down := plan{send: 0, end: codes.Unavailable}
	a := startWatchFake(t, "a", fd, slices.Repeat([]plan{down}, 100)...)
	b := startWatchFake(t, "b", fd, slices.Repeat([]plan{down}, 100)...)
	cl := newTestClient(t, Config{Endpoints: []string{a.addr, b.addr}, Timeout: 300 * time.Millisecond})
	ctx := testCtx(t) // its deadline bounds the watch, not the resumes
	st, err := cl.Watch(ctx, &pb.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Recv()
	want := a.addr + ": fake a says Unavailable; " + b.addr + ": fake b says Unavailable"
	if ctx.Err() != nil || status.Code(err) != codes.Unavailable || status.Convert(err).Message() != want {
		t.Errorf("Recv: %v, want Unavailable %q before the test's deadline", err, want)
	}
	if n := len(a.requests()); n < 2 {
		t.Errorf("a was asked %d times, want at least two rounds", n)
	}

	dead, other := deadAddr(t), deadAddr(t)
	nobody := newTestClient(t, Config{Endpoints: []string{dead, other}, Timeout: time.Hour, ConnectTimeout: 50 * time.Millisecond})
	_, err = nobody.Watch(ctx, &pb.WatchRequest{})
	if want := dead + ": connection refused; " + other + ": connection refused"; status.Code(err) != codes.Unavailable || status.Convert(err).Message() != want {
		t.Errorf("Watch with nobody listening: %v, want Unavailable %q", err, want)
	}
}

// TestWatchEndsWithItsContext: cancelling ctx ends a Recv that waits on
// an idle stream with ctx.Err(), and every later one.
func TestWatchEndsWithItsContext(t *testing.T) {
	noLeaks(t)
	a := startWatchFake(t, "a", newFeed(0, 1))
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	st, err := watchClient(t, a).Watch(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	receive(t, st, 1)
	done := make(chan error, 1)
	go func() {
		_, err := st.Recv()
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Recv once ctx is cancelled: %v, want context.Canceled", err)
	}
	if _, err := st.Recv(); !errors.Is(err, context.Canceled) {
		t.Errorf("Recv again: %v, want context.Canceled", err)
	}
}

// TestWatchAfterClose: Close ends a watch with Canceled, and the next
// Watch fails with ErrClosed.
func TestWatchAfterClose(t *testing.T) {
	noLeaks(t)
	a := startWatchFake(t, "a", newFeed(0, 1))
	cl := watchClient(t, a)
	st, err := cl.Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	receive(t, st, 1)
	cl.Close()
	if _, err := st.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("Recv after Close: %v, want Canceled", err)
	}
	if _, err := cl.Watch(testCtx(t), &pb.WatchRequest{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch after Close: %v, want ErrClosed", err)
	}
}

// TestWatchStreamMethods: Header is the serving endpoint's, and follows
// the watch to the next one; CloseSend does nothing, SendMsg refuses.
func TestWatchStreamMethods(t *testing.T) {
	fd := newFeed(0, 1, 2)
	a := startWatchFake(t, "a", fd, plan{send: 1, end: codes.Unavailable})
	b := startWatchFake(t, "b", fd)
	st, err := watchClient(t, a, b).Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	if md, err := st.Header(); err != nil || !slices.Equal(md.Get("fake"), []string{"a"}) {
		t.Errorf("Header: %v, %v; want a's", md, err)
	}
	receive(t, st, 2)
	if md, err := st.Header(); err != nil || !slices.Equal(md.Get("fake"), []string{"b"}) {
		t.Errorf("Header after the move: %v, %v; want b's", md, err)
	}
	if err := st.CloseSend(); err != nil {
		t.Errorf("CloseSend: %v", err)
	}
	if err := st.SendMsg(&pb.WatchRequest{}); !errors.Is(err, errWatchSend) {
		t.Errorf("SendMsg: %v, want errWatchSend", err)
	}
	if err := st.RecvMsg(&pb.WatchRequest{}); err == nil {
		t.Error("RecvMsg into a WatchRequest: no error")
	}
	if st.Context().Err() != nil {
		t.Errorf("the stream's context ended while it runs: %v", st.Context().Err())
	}
}

// TestWatchAccept checks which messages go to the caller.
func TestWatchAccept(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resumable bool
		epoch     uint64
		msg       *pb.WatchResponse
		want      bool
	}{
		{"first message from now", false, 0, &pb.WatchResponse{Type: string(WatchProgress), Epoch: 7}, true},
		{"events at from_epoch 0", true, 0, &pb.WatchResponse{Type: string(WatchEvents), Epoch: 0}, false},
		{"events after", true, 4, &pb.WatchResponse{Type: string(WatchEvents), Epoch: 5}, true},
		{"events again", true, 5, &pb.WatchResponse{Type: string(WatchEvents), Epoch: 5}, false},
		{"events before", true, 5, &pb.WatchResponse{Type: string(WatchEvents), Epoch: 3}, false},
		{"events not past a progress", true, 5, &pb.WatchResponse{Type: string(WatchEvents), Epoch: 5}, false},
		{"progress as a heartbeat", true, 5, &pb.WatchResponse{Type: string(WatchProgress), Epoch: 5}, true},
		{"progress of a member behind", true, 5, &pb.WatchResponse{Type: string(WatchProgress), Epoch: 4}, false},
		{"resync after", true, 5, &pb.WatchResponse{Type: string(WatchResync), Epoch: 9}, true},
		{"resync not past", true, 9, &pb.WatchResponse{Type: string(WatchResync), Epoch: 9}, false},
		{"unknown type not past", true, 9, &pb.WatchResponse{Type: "later", Epoch: 9}, false},
	} {
		eps, rs := newEndpoints(Config{Endpoints: []string{"a:1", "b:1"}})
		s := &watchStream{c: &Client{eps: eps, routes: rs}, route: rs.read(), resumable: tc.resumable, epoch: tc.epoch}
		got := s.accept(tc.msg, 1)
		if got != tc.want {
			t.Errorf("%s: accept = %v, want %v", tc.name, got, tc.want)
		}
		if wantEpoch := max(tc.epoch, tc.msg.Epoch); got && (!s.resumable || s.epoch != wantEpoch) {
			t.Errorf("%s: epoch %d (resumable %v) after accepting, want %d", tc.name, s.epoch, s.resumable, wantEpoch)
		}
		if !got && s.epoch != tc.epoch {
			t.Errorf("%s: epoch moved to %d on a dropped message", tc.name, s.epoch)
		}
	}
}

// TestWatchLeavesASilentMember: a member that stops sending without
// closing the stream (cut off, no progress messages) is taken for lost
// after WatchIdleTimeout, and the watch goes on on the next endpoint from
// the last epoch received.
func TestWatchLeavesASilentMember(t *testing.T) {
	noLeaks(t)
	a := startWatchFake(t, "a", newFeed(0, 1, 2)) // then silent, stream open
	b := startWatchFake(t, "b", newFeed(0, 1, 2, 3, 4))
	c := newTestClient(t, Config{Endpoints: []string{a.addr, b.addr}, WatchIdleTimeout: 200 * time.Millisecond})
	st, err := c.Watch(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := receive(t, st, 4), events(1, 2, 3, 4); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, b, "2")
}
