package client

import (
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
)

// WatchRetry is a call option of Watch and Follow that says how the watch
// goes on when a member fails it, as etcd's watch does: pass it among
// Watch's options, or Follow's, to replace their defaults.
//
//	ch := c.Follow(ctx, req, client.WatchRetry{OnFailover: func(f client.WatchFailover) {
//		slog.Warn("watch failover", "endpoint", f.Endpoint, "err", f.Err, "next", f.Next)
//	}})
//
// With a WatchRetry the watch keeps trying the endpoints for GiveUpAfter
// (zero: until its context ends) after a failure with no message since,
// and an endpoint that refuses connections stays in the rounds, since a
// member restarting refuses them until it is back. Without one, Follow
// behaves as with WatchRetry{} and Watch as the Client's calls do: it
// gives up after Config.Timeout and leaves out an endpoint that has
// refused connections for Config.ConnectTimeout.
//
// Whatever the option, only the failures retrying may fix are retried: a
// member lost (the connection refused, reset or silent for
// Config.WatchIdleTimeout, the stream ended), or Unavailable from a member
// (no leader, starting, shutting down, still copying history). Any other
// answer of a member ends the watch, since another member would give the
// same one: a refusal of the request (InvalidArgument, PermissionDenied,
// Unauthenticated, ResourceExhausted for too many streams of the caller,
// FailedPrecondition, which includes a history that changed under the
// watch), and any error the consumer must handle itself. So does an
// endpoint that is not a gRPC server once no other endpoint is left.
type WatchRetry struct {
	grpc.EmptyCallOption

	// GiveUpAfter is how long the watch keeps trying the endpoints after
	// a failure with no message since; then Recv returns Unavailable
	// naming each endpoint and why it failed. Zero: until the watch's
	// context ends. ctx's own deadline, if any, bounds the whole watch.
	GiveUpAfter time.Duration
	// MaxBackoff caps the pause between two rounds over the endpoints in
	// which none took the watch: the pause starts at 100ms and doubles
	// each round up to MaxBackoff, and each pause is shortened at random
	// by up to half, so that the consumers of a member that went away do
	// not all come back in step. Default 2s.
	MaxBackoff time.Duration
	// OnFailover, if not nil, is called each time the watch on an
	// endpoint fails, or would not open, and the watch goes on. It is
	// called on the goroutine that calls Recv (Follow's own goroutine),
	// which it holds up: it should log, count or hand off, not block.
	OnFailover func(WatchFailover)
}

// WatchFailover is what WatchRetry.OnFailover is told of a failover.
type WatchFailover struct {
	// Endpoint is the endpoint whose watch failed or would not open.
	Endpoint string
	// Err is why: a gRPC status error, Unavailable.
	Err error
	// Next is how long the watch waits before it tries the next
	// endpoint: zero while endpoints remain in the current round.
	Next time.Duration
	// Epoch is the epoch the watch goes on after: the last one it
	// returned, or the request's from_epoch. It is meaningless when
	// FromNow is set.
	Epoch uint64
	// FromNow is set when the watch has no epoch to go on from (its
	// request had no from_epoch and nothing came yet): it opens from now.
	FromNow bool
	// Failures counts the failures since the watch last returned a
	// message, this one included.
	Failures int
}

// watchRetry is the retry policy a watch follows, resolved from its
// options.
type watchRetry struct {
	giveUpAfter time.Duration // 0: until the watch's context ends
	keepRefused bool          // endpoints that refuse connections stay in the rounds
	maxPause    time.Duration
	onFailover  func(WatchFailover)
}

// retryOf returns the policy of a watch with opts: that of the last
// WatchRetry among them, or the Client's calls' (timeout: Config.Timeout).
func retryOf(opts []grpc.CallOption, timeout time.Duration) watchRetry {
	r := watchRetry{giveUpAfter: timeout, maxPause: maxPause}
	for _, o := range opts {
		var wr *WatchRetry
		switch o := o.(type) {
		case WatchRetry:
			wr = &o
		case *WatchRetry:
			wr = o
		}
		if wr != nil {
			r = watchRetry{giveUpAfter: max(wr.GiveUpAfter, 0), keepRefused: true, maxPause: maxPause, onFailover: wr.OnFailover}
			if wr.MaxBackoff > 0 {
				r.maxPause = wr.MaxBackoff
			}
		}
	}
	return r
}

// jitter shortens d at random by up to half.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d - rand.N(d/2+1)
}

// roundPause returns the pause after the current round over the
// endpoints, drawn once per round.
func (s *watchStream) roundPause() time.Duration {
	if s.wait == 0 {
		s.wait = jitter(min(s.pause, s.retry.maxPause))
	}
	return s.wait
}

// roundHasMore reports whether endpoints remain to be tried in the
// current round.
func (s *watchStream) roundHasMore() bool {
	n := s.route.len()
	for k := range n - s.tried {
		if !s.fails.isOut(s.route.at((s.next + k) % n)) {
			return true
		}
	}
	return false
}

// reportFailover tells the OnFailover hook, if any, that the watch on
// endpoint i failed with err and goes on.
func (s *watchStream) reportFailover(i int, err error) {
	if s.retry.onFailover == nil || s.fails.left == 0 {
		return
	}
	f := WatchFailover{Endpoint: s.c.eps[i].addr, Err: err, Epoch: s.epoch, FromNow: !s.resumable, Failures: s.failures}
	if !s.roundHasMore() {
		f.Next = s.roundPause()
	}
	s.retry.onFailover(f)
}
