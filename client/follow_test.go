package client

import (
	"context"
	"slices"
	"testing"
	"time"

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

// TestFollowWhenWatchFails: an error of Watch itself is the one result.
func TestFollowWhenWatchFails(t *testing.T) {
	noLeaks(t)
	cl := newTestClient(t, Config{Endpoints: []string{deadAddr(t)}, ConnectTimeout: 50 * time.Millisecond})
	var results []WatchResult
	for r := range cl.Follow(testCtx(t), &pb.WatchRequest{}) {
		results = append(results, r)
	}
	if len(results) != 1 || status.Code(results[0].Err) != codes.Unavailable {
		t.Errorf("results %v, want one Unavailable", results)
	}
}
