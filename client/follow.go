package client

import (
	"context"

	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// WatchResult is one value sent by Follow: a message of the watch, or the
// error that ended it.
type WatchResult struct {
	// Response is the message; nil with Err.
	Response *pb.WatchResponse
	// Err, if not nil, is the error that ended the watch (see Watch), the
	// last value before the channel is closed.
	Err error
}

// Follow runs Watch(ctx, req, opts...) in a goroutine of its own and
// sends each message it receives on the channel it returns, in order. It
// is the way to consume the feed for as long as a program runs: unless
// opts hold a WatchRetry of their own it watches with WatchRetry{}, so it
// goes on across members, waiting for one to come back when every one is
// down, however long that takes, until ctx ends; pass a WatchRetry with
// an OnFailover hook to hear of each failover, or with GiveUpAfter to
// bound the wait.
//
// The channel is closed when the watch ends: after an error that retrying
// cannot fix (see WatchRetry), sent as the last result, or once ctx ends
// (then with no error sent; ctx.Err() says why). The goroutine blocks
// until each result is received, so the caller must either drain the
// channel or cancel ctx; cancelling ctx ends the goroutine whether or not
// anyone receives, at once unless an OnFailover hook holds it.
//
// A consumer that keeps what it derives from the feed (a copy of the
// schema, say) stores the epoch of each message it has handled with it,
// and after a restart of its own follows again with FromEpoch set to
// that epoch: it gets exactly the messages after it (see the package
// documentation).
func (c *Client) Follow(ctx context.Context, req *pb.WatchRequest, opts ...grpc.CallOption) <-chan WatchResult {
	opts = append([]grpc.CallOption{WatchRetry{}}, opts...)
	out := make(chan WatchResult)
	go func() {
		defer close(out)
		stream, err := c.Watch(ctx, req, opts...)
		for err == nil {
			var m *pb.WatchResponse
			if m, err = stream.Recv(); err == nil && !send(ctx, out, WatchResult{Response: m}) {
				return
			}
		}
		if ctx.Err() == nil {
			send(ctx, out, WatchResult{Err: err})
		}
	}()
	return out
}

// send sends r on out unless ctx ends first, and reports whether it did.
func send(ctx context.Context, out chan<- WatchResult, r WatchResult) bool {
	select {
	case out <- r:
		return true
	case <-ctx.Done():
		return false
	}
}
