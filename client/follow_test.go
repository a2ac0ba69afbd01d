package client

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestFollowSendsEachMessageThenTheError: across a resume, the messages
// arrive in order, then the final error, then the channel closes.
func TestFollowSendsEachMessageThenTheError(t *testing.T) {
	noLeaks(t)
	fd := newFeed(0, 1, 2, 3)
	a := startWatchFake(t, "a", fd, plan{send: 2, end: codes.Unavailable})
	b := startWatchFake(t, "b", fd, plan{send: 1, end: codes.PermissionDenied})
	var got []string
	var last error
	for r := range watchClient(t, a, b).Follow(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)}) {
		if last != nil {
			t.Fatalf("a result after the error %v: %v", last, r)
		}
		if r.Err != nil {
			last = r.Err
			continue
		}
		got = append(got, describe(r.Response))
	}
	if want := events(1, 2, 3); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	if status.Code(last) != codes.PermissionDenied {
		t.Errorf("last result %v, want PermissionDenied", last)
	}
}

// TestFollowClosesOnCancel: cancelling ctx closes the channel with no
// error sent, whether the goroutine waits on the member or on the
// caller, and leaves no goroutine behind.
func TestFollowClosesOnCancel(t *testing.T) {
	noLeaks(t)
	a := startWatchFake(t, "a", newFeed(0, 1, 2, 3))
	cl := watchClient(t, a)
	for _, read := range []int{3, 0} { // read: all there is, then nothing
		ctx, cancel := context.WithCancel(testCtx(t))
		ch := cl.Follow(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(0)})
		for range read {
			if r := <-ch; r.Err != nil {
				t.Fatalf("Follow: %v", r.Err)
			}
		}
		cancel()
		for r := range ch {
			if r.Err != nil {
				t.Errorf("read %d: an error after cancel: %v", read, r.Err)
			}
		}
	}
}

// TestFollowGivesUpAfter: with WatchRetry.GiveUpAfter, endpoints where
// nothing listens are tried for that long, then the one result is
// Unavailable naming each.
func TestFollowGivesUpAfter(t *testing.T) {
	noLeaks(t)
	dead, other := deadAddr(t), deadAddr(t)
	cl := newTestClient(t, Config{Endpoints: []string{dead, other}, ConnectTimeout: 50 * time.Millisecond})
	var results []WatchResult
	for r := range cl.Follow(testCtx(t), &pb.WatchRequest{}, WatchRetry{GiveUpAfter: 200 * time.Millisecond}) {
		results = append(results, r)
	}
	want := dead + ": connection refused; " + other + ": connection refused"
	if len(results) != 1 || status.Code(results[0].Err) != codes.Unavailable || status.Convert(results[0].Err).Message() != want {
		t.Errorf("results %v, want one Unavailable %q", results, want)
	}
}

// failoverLog records what an OnFailover hook is told, and when.
type failoverLog struct {
	mu      sync.Mutex // guards reports and at
	reports []WatchFailover
	at      []time.Time
}

func (l *failoverLog) hook(f WatchFailover) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reports = append(l.reports, f)
	l.at = append(l.at, time.Now())
}

// snapshot returns the reports so far, and how long after the first one
// the last came.
func (l *failoverLog) snapshot() ([]WatchFailover, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.at) == 0 {
		return nil, 0
	}
	return slices.Clone(l.reports), l.at[len(l.at)-1].Sub(l.at[0])
}

// waitUntil polls cond until it returns nil, failing the test when it has
// not within 10s.
func waitUntil(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// next receives n messages from a Follow channel, failing on an error or
// a closed channel.
func next(t *testing.T, ch <-chan WatchResult, n int) []string {
	t.Helper()
	var got []string
	for range n {
		r, ok := <-ch
		if !ok || r.Err != nil {
			t.Fatalf("Follow ended after %q: %v", got, r.Err)
		}
		got = append(got, describe(r.Response))
	}
	return got
}

// closesSoon checks that ch closes, with no result left, within 5s: a
// Follow whose context ended stops at once, not after its pause or the
// test's deadline.
func closesSoon(t *testing.T, ch <-chan WatchResult) {
	t.Helper()
	stop := time.NewTimer(5 * time.Second)
	defer stop.Stop()
	for {
		select {
		case r, ok := <-ch:
			if !ok {
				return
			}
			t.Errorf("a result after the context ended: %v", r)
		case <-stop.C:
			t.Fatal("Follow still runs 5s after its context ended")
		}
	}
}

// TestFollowOutlastsEveryEndpointDown: a Follow whose members are all down
// (refusing connections) for longer than Config.Timeout goes on trying,
// telling its OnFailover hook of each failure, and once a member is back
// resumes from the last epoch it returned, missing nothing; it ends at
// once when its context ends.
func TestFollowOutlastsEveryEndpointDown(t *testing.T) {
	noLeaks(t)
	fd := newFeed(0, 1, 2, 3, 4, 5, 6)
	// a has the first two epochs and holds the stream open: the test stops
	// it once they arrived (stopping it right after sending them could
	// lose them with the connection).
	a := startWatchFake(t, "a", newFeed(0, 1, 2))
	bAddr := deadAddr(t) // down until started below
	const timeout = 300 * time.Millisecond
	cl := newTestClient(t, Config{Endpoints: []string{a.addr, bAddr}, Timeout: timeout, ConnectTimeout: 50 * time.Millisecond})
	var log failoverLog
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ch := cl.Follow(ctx, &pb.WatchRequest{FromEpoch: proto.Uint64(0)}, WatchRetry{OnFailover: log.hook})
	got := next(t, ch, 2)
	a.served.Stop() // from now on a refuses connections

	waitUntil(t, "failovers over more than twice Config.Timeout", func() error {
		if _, span := log.snapshot(); span <= 2*timeout {
			return fmt.Errorf("failovers reported over %v", span)
		}
		return nil
	})
	b := startWatchFakeAt(t, bAddr, "b", fd)
	got = append(got, next(t, ch, 4)...)
	if want := events(1, 2, 3, 4, 5, 6); !slices.Equal(got, want) {
		t.Errorf("received %q, want %q", got, want)
	}
	checkRequests(t, b, "2")
	reports, _ := log.snapshot()
	for i, f := range reports {
		if (f.Endpoint != a.addr && f.Endpoint != bAddr) || status.Code(f.Err) != codes.Unavailable || f.Epoch != 2 || f.FromNow || f.Failures != i+1 {
			t.Errorf("failover %d: %+v, want an Unavailable of a or b, going on after epoch 2, failure %d", i, f, i+1)
		}
	}
	cancel()
	closesSoon(t, ch)
}

// TestFollowReportsEachFailover: the hook hears of every failure in the
// rounds over the endpoints, in order, with no pause while the round goes
// on and a pause of at most MaxBackoff at its end; cancelling the context
// while the members are down ends the Follow with no result.
func TestFollowReportsEachFailover(t *testing.T) {
	noLeaks(t)
	dead, other := deadAddr(t), deadAddr(t)
	cl := newTestClient(t, Config{Endpoints: []string{dead, other}, ConnectTimeout: 50 * time.Millisecond})
	const maxBackoff = 300 * time.Millisecond
	var log failoverLog
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ch := cl.Follow(ctx, &pb.WatchRequest{}, WatchRetry{MaxBackoff: maxBackoff, OnFailover: log.hook})
	var reports []WatchFailover
	waitUntil(t, "8 failovers", func() error {
		if reports, _ = log.snapshot(); len(reports) < 8 {
			return fmt.Errorf("%d so far", len(reports))
		}
		return nil
	})
	cancel()
	closesSoon(t, ch)
	for i, f := range reports {
		wantEp, endOfRound := dead, i%2 == 1
		if endOfRound {
			wantEp = other
		}
		nextOK := f.Next == 0
		if endOfRound {
			nextOK = f.Next > 0 && f.Next <= maxBackoff
		}
		if f.Endpoint != wantEp || !nextOK || status.Code(f.Err) != codes.Unavailable || !f.FromNow || f.Failures != i+1 {
			t.Errorf("failover %d: %+v, want %s, Unavailable, from now, failure %d, a pause only at the end of a round (at most %v)", i, f, wantEp, i+1, maxBackoff)
		}
	}
}

// TestFollowStopsOnWhatRetryingCannotFix: an error other than Unavailable
// ends a Follow that retries until its context ends, as the last result;
// no failover is reported and no other endpoint is asked.
func TestFollowStopsOnWhatRetryingCannotFix(t *testing.T) {
	noLeaks(t)
	fd := newFeed(0, 1, 2)
	for _, code := range []codes.Code{codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated, codes.OutOfRange, codes.FailedPrecondition, codes.ResourceExhausted} {
		a := startWatchFake(t, "a", fd, plan{send: 1, end: code})
		b := startWatchFake(t, "b", fd)
		var log failoverLog
		var results []WatchResult
		for r := range watchClient(t, a, b).Follow(testCtx(t), &pb.WatchRequest{FromEpoch: proto.Uint64(0)}, WatchRetry{OnFailover: log.hook}) {
			results = append(results, r)
		}
		if len(results) != 2 || results[0].Err != nil || status.Code(results[1].Err) != code {
			t.Errorf("%s: results %v, want a message, then %s", code, results, code)
		}
		if reports, _ := log.snapshot(); len(reports) != 0 {
			t.Errorf("%s: failovers reported: %+v", code, reports)
		}
		checkRequests(t, b)
	}
}

// TestRetryOf: the policy of a watch is that of its last WatchRetry, or
// the calls' without one.
func TestRetryOf(t *testing.T) {
	hook := func(WatchFailover) {}
	for _, tc := range []struct {
		name string
		opts []grpc.CallOption
		want watchRetry
	}{
		{"none", nil, watchRetry{giveUpAfter: time.Minute, maxPause: maxPause}},
		{"other options", []grpc.CallOption{grpc.WaitForReady(true)}, watchRetry{giveUpAfter: time.Minute, maxPause: maxPause}},
		{"until ctx ends", []grpc.CallOption{WatchRetry{}}, watchRetry{keepRefused: true, maxPause: maxPause}},
		{"pointer", []grpc.CallOption{&WatchRetry{GiveUpAfter: time.Second, MaxBackoff: time.Hour}}, watchRetry{giveUpAfter: time.Second, keepRefused: true, maxPause: time.Hour}},
		{"negative", []grpc.CallOption{WatchRetry{GiveUpAfter: -1, MaxBackoff: -1}}, watchRetry{keepRefused: true, maxPause: maxPause}},
		{"last wins", []grpc.CallOption{WatchRetry{}, WatchRetry{GiveUpAfter: 3 * time.Second, OnFailover: hook}}, watchRetry{giveUpAfter: 3 * time.Second, keepRefused: true, maxPause: maxPause}},
	} {
		got := retryOf(tc.opts, time.Minute)
		if hasHook := got.onFailover != nil; hasHook != (tc.name == "last wins") {
			t.Errorf("%s: hook set %v", tc.name, hasHook)
		}
		if got.giveUpAfter != tc.want.giveUpAfter || got.keepRefused != tc.want.keepRefused || got.maxPause != tc.want.maxPause {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestJitter: a pause is shortened by at most half, never lengthened.
func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 2, 100 * time.Millisecond, maxPause} {
		for range 100 {
			if j := jitter(d); j > d || j < d/2 {
				t.Fatalf("jitter(%v) = %v, want within [%v, %v]", d, j, d/2, d)
			}
		}
	}
}
