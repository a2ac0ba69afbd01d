package client

import (
	"context"

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

// Follow runs Watch(ctx, req) in a goroutine of its own and sends each
// message it receives on the channel it returns, in order. The channel is
// closed when the watch ends: after an error, sent as the last result,
// or once ctx ends (then with no error sent; ctx.Err() says why). The
// goroutine blocks until each result is received, so the caller must
// either drain the channel or cancel ctx; cancelling ctx ends the
// goroutine whether or not anyone receives.
func (c *Client) Follow(ctx context.Context, req *pb.WatchRequest) <-chan WatchResult {
	out := make(chan WatchResult)
	go func() {
		defer close(out)
		stream, err := c.Watch(ctx, req)
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
