package client

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// errWatchSend is what SendMsg answers: Watch sent the one request.
var errWatchSend = errors.New("client: watch: the request was sent by Watch; a watch takes no other message")

// Watch streams the changes after req.FromEpoch (from now when it is
// nil), filtered by req.Keyspace and req.Table, as the generated client
// does, but the stream it returns survives the loss of a member: when the
// endpoint's stream ends with Unavailable, a lost connection, or an end
// (io.EOF) the caller did not ask for, Recv opens the watch again on the
// next endpoint from the last epoch it returned, going round the
// endpoints like a call does (pausing after each round that none
// answered, leaving out endpoints that are not gRPC). Without
// req.FromEpoch the first progress message's epoch is where it goes on
// from; before any message it opens the watch from now again. So the
// caller sees each epoch once, in order, with no gap. A message whose
// epoch is not past the last one returned is dropped (a member resending
// what it sent before), but a progress message at that epoch passes, as a
// heartbeat. A message may carry the changes of several epochs (see
// WatchEvents); switch on WatchTypeOf(m).
//
// By default, after a failure the endpoints are tried for Config.Timeout,
// counted from the first failure with no message since (ctx's deadline,
// if any, bounds the whole watch, not its resumes), and an endpoint that
// has refused connections for Config.ConnectTimeout is left out; then
// Recv returns Unavailable naming each endpoint, as a call does. A
// WatchRetry among opts changes that: with WatchRetry{} the watch goes on
// until ctx ends, and its OnFailover hook hears of each failover (see
// WatchRetry; Follow uses it). Any other error of a member
// (InvalidArgument, PermissionDenied, Unauthenticated, OutOfRange,
// FailedPrecondition, ...) is returned by Recv as it was sent, and so is
// Canceled after Close: retrying would not fix it. When ctx ends Recv
// returns ctx.Err(). Once Recv has returned an error it returns that
// error again.
//
// A watch holds its stream until ctx ends or Recv returns an error:
// cancel ctx, or call Recv until it does. Recv and RecvMsg must be called
// from one goroutine; Header, Trailer and Context may be called from any.
// Header and Trailer are those of the current endpoint's stream (of the
// one that failed last, once Recv has returned an error), so they change
// when the watch moves on. CloseSend does nothing (Watch closed its side
// already) and SendMsg returns an error. Context returns a context that
// ends when ctx does or Recv has returned an error.
//
// A watch counts its epochs in one history: req.HistoryId, or the
// history id of the first message that has one. It names it on every
// resume, and Recv ends the watch with an error matching
// ErrHistoryChanged when a member answers for another history (the
// cluster was restored from a backup or forced into a new cluster): see
// watchhistory.go. Member errors with an ErrorInfo reason come as a
// *ReasonError (errors.go).
//
// Watch returns an error only when no endpoint would open the stream
// (the Unavailable of a call, ctx.Err() or ErrClosed); with a WatchRetry
// that does not give up, it waits until one does or ctx ends. A member's
// refusal of the request comes from Recv.
func (c *Client) Watch(ctx context.Context, req *pb.WatchRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[pb.WatchResponse], error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &watchStream{c: c, ctx: ctx, cancel: cancel, opts: opts, retry: retryOf(opts, c.cfg.Timeout), pause: firstPause, route: c.routes.read()}
	if req != nil {
		s.keyspace, s.table = req.Keyspace, req.Table
		if req.FromEpoch != nil {
			s.resumable, s.epoch = true, *req.FromEpoch
		}
		s.historyID = req.HistoryId
	}
	if err := s.open(); err != nil {
		cancel()
		return nil, err
	}
	return s, nil
}

// watchStream is the stream Watch returns. Its fields but cur are the
// Recv goroutine's.
type watchStream struct {
	c      *Client
	ctx    context.Context // the stream's; every endpoint's stream is under it
	cancel context.CancelFunc
	opts   []grpc.CallOption
	retry  watchRetry
	// route is the order the watch tries the endpoints in: the read
	// endpoints, then Endpoints (Config.ReadEndpoints).
	route route

	keyspace, table string // the request's filters
	// resumable is true once epoch is where to go on from: the request's
	// from_epoch, then the epoch of the last message returned.
	resumable bool
	epoch     uint64
	// historyID is the history the epochs count in: the request's, or
	// the first message's; sent on every resume (watchhistory.go).
	historyID string

	// cur is the current endpoint's stream, or the one that failed last.
	cur atomic.Pointer[endpointStream]
	// broken says cur failed: the next Recv opens another.
	broken bool
	err    error // the final error, once Recv returned it

	// The rounds over the endpoints since the last message returned, as
	// call makes them: next is the position in route of the endpoint to
	// try next, tried how many
	// were tried in this round, pause the pause after it before jitter
	// and wait after it (0 until drawn), fails what the failures were
	// (nil: none yet), failures how many, and giveUp when to stop trying
	// (zero: never).
	next, tried int
	pause, wait time.Duration
	fails       *failures
	failures    int
	giveUp      time.Time
}

// endpointStream is the watch on one endpoint.
type endpointStream struct {
	ep     int             // the endpoint's index in Client.eps
	ctx    context.Context // the stream's; ends with errWatchIdle when it was silent
	idle   *time.Timer     // ends ctx after Config.WatchIdleTimeout without a message
	stream grpc.ServerStreamingClient[pb.WatchResponse]
	cancel func()
}

// Recv returns the next message of the watch, opening it on another
// endpoint when the current one fails (see Watch).
func (s *watchStream) Recv() (*pb.WatchResponse, error) {
	m := new(pb.WatchResponse)
	if err := s.RecvMsg(m); err != nil {
		return nil, err
	}
	return m, nil
}

// RecvMsg is Recv into m, which must be a *metalogpb.WatchResponse.
func (s *watchStream) RecvMsg(m any) error {
	resp, ok := m.(*pb.WatchResponse)
	if !ok {
		return fmt.Errorf("client: watch: RecvMsg wants a *metalogpb.WatchResponse, got %T", m)
	}
	if s.err != nil {
		return s.err
	}
	for {
		if s.broken {
			if err := s.open(); err != nil {
				return s.fail(err)
			}
		}
		cur := s.cur.Load()
		err := cur.stream.RecvMsg(resp)
		if err == nil {
			cur.received(s.c.cfg.WatchIdleTimeout)
			if err := s.checkHistory(resp, cur.ep); err != nil {
				return s.fail(err)
			}
			if s.accept(resp, cur.ep) {
				return nil
			}
			continue
		}
		err = cur.reason(err, s.c.cfg.WatchIdleTimeout)
		cur.cancel()
		s.broken = true
		if err := s.failed(cur.ep, err); err != nil {
			return s.fail(err)
		}
	}
}

// fail ends the watch with err, returned by every later Recv.
func (s *watchStream) fail(err error) error {
	err = typed(err)
	s.err = err
	if cur := s.cur.Load(); cur != nil {
		cur.cancel()
	}
	s.cancel()
	return err
}

// request is the watch request to open on an endpoint: the caller's
// filters, from where the watch has got to.
func (s *watchStream) request() *pb.WatchRequest {
	req := &pb.WatchRequest{Keyspace: s.keyspace, Table: s.table, HistoryId: s.historyID}
	if s.resumable {
		req.FromEpoch = proto.Uint64(s.epoch)
	}
	return req
}

// Header returns the header metadata of the current endpoint's stream.
func (s *watchStream) Header() (metadata.MD, error) { return s.cur.Load().stream.Header() }

// Trailer returns the trailer metadata of the current endpoint's stream,
// complete once Recv has returned an error.
func (s *watchStream) Trailer() metadata.MD { return s.cur.Load().stream.Trailer() }

// CloseSend does nothing: Watch sent the request and closed its side.
func (s *watchStream) CloseSend() error { return nil }

// Context returns the watch's context: it ends when Watch's ctx does or
// once Recv has returned an error.
func (s *watchStream) Context() context.Context { return s.ctx }

// SendMsg returns an error: a watch takes one request, which Watch sent.
func (s *watchStream) SendMsg(any) error { return errWatchSend }
