package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("client: closed")

// flowWindow is the fixed HTTP/2 flow-control window of every connection,
// as the server sets it on its side. A fixed window turns off gRPC's
// bandwidth-delay probing: left on, it answers a stream of small requests
// and responses with a ping and a ping ack per message, two syscalls on
// each side for nothing on a connection that never fills a window.
const flowWindow = 1 << 20

// Pauses between two rounds over the endpoints when all of them answered
// Unavailable: the first, doubling up to the last.
const (
	firstPause = 100 * time.Millisecond
	maxPause   = 2 * time.Second
)

// Client calls the metalog.v1.MetadataService of a cluster through any of
// its endpoints. It is safe for concurrent use by many goroutines; its
// methods are those of pb.MetadataServiceClient (it implements that
// interface), plus Describe and Follow. Watch's stream goes on from one
// endpoint to the next as the calls do (see Watch).
//
// Every call goes to one endpoint at a time. An answer other than
// Unavailable is final, an error included; on Unavailable (which is also
// how gRPC reports a failed connection) the call moves on to the next
// endpoint, and after a whole round it pauses (100 ms, doubling up to 2 s)
// and goes round again until its context (or Config.Timeout) ends. An
// endpoint that cannot answer is left out of the rounds sooner: one where
// nothing listens once it has refused connections for
// Config.ConnectTimeout (1 s), and an HTTP server (a member's HTTP/JSON
// port given for its gRPC port) at once; when every endpoint is left out
// the call ends there. A member that answers Unavailable (it has no
// leader, or is starting) stays in the rounds. A call that no endpoint
// answered returns Unavailable with "ENDPOINT: reason" for each endpoint
// that failed, separated by "; ", e.g. "127.0.0.1:7070: connection
// refused". A call starts at the endpoint that answered the previous one
// (the first endpoint for a new Client).
//
// With Config.ReadEndpoints, the reads (GetSchema, GetKeyspace, GetTable,
// Describe, GetGuardrails, History, Plan, GetRequestOutcome, Backup) and
// the watches (Watch, Follow) go to the read endpoints, and the rest to
// Endpoints. A read goes round the read endpoints as above, starting at
// the one that answered the previous read, and then, in the same round,
// to the Endpoints that are not read endpoints: so when no read endpoint
// answers (each one down, refusing connections or Unavailable) the read
// falls back to Endpoints at once, and a read that no endpoint answered
// names every one in its Unavailable error, the read endpoints first.
// Each read starts at the read endpoints again, so reads come back to
// them as soon as one answers; a watch that fell back stays on its member
// until that fails, then starts the next round at the read endpoints.
// Consistency options travel with the request whoever answers it: a
// linearizable read stays linearizable on a read endpoint.
//
// Execute and SetGuardrails are retried under a request id, so that a
// retry never applies twice: the caller's, or a random one made before
// the first attempt when the request has none. The other calls read, or
// change membership, where an attempt that had applied is answered on
// the retry with AlreadyExists (AddMember) or NotFound (RemoveMember), or
// repair a member, which may run twice.
//
// A change (Execute, SetGuardrails, AddMember, RemoveMember) may apply
// although its call fails: a member answers that it proposed it and
// cannot tell whether it will apply (DeadlineExceeded with ErrorInfo
// reason OUTCOME_UNKNOWN), or the attempt fails after the request was
// sent (the connection reset, the member killed, the deadline passed
// while waiting for the answer). The call then goes on to the other
// endpoints under the same request id, as for Unavailable, and an answer
// that settles it (a success, the first result of a retry, or an error
// about the request itself) is the call's answer; when none comes before
// the deadline, the error is an *OutcomeUnknownError (errors.Is
// ErrOutcomeUnknown, gRPC code DeadlineExceeded) naming the request id:
// ask RequestOutcome, or send the request again with that id. A call
// ends Unavailable only when no attempt may have applied: every member
// answered Unavailable (NOT_PROPOSED) or could not be reached. A change
// starts no retry with less than 300 ms of its deadline left: the answer
// could hardly come in time, and an attempt cut off after its request was
// sent would leave the outcome unknown.
type Client struct {
	cfg  Config
	opts []grpc.DialOption
	// eps are the distinct addresses of ReadEndpoints and Endpoints, each
	// with its connection; routes say which calls go where (route.go).
	eps    []endpoint
	routes *routes

	mu     sync.Mutex // guards dialing and closing the connections
	closed bool
}

// endpoint is one member's address and its connection, made on first use.
type endpoint struct {
	addr string
	conn atomic.Pointer[conn] // nil until dialed, and after Close
}

// conn is a connection and the generated client on it (made once, so a
// call allocates neither).
type conn struct {
	cc  *grpc.ClientConn
	rpc pb.MetadataServiceClient
}

// New returns a Client for cfg. It connects to no endpoint yet: each
// connection is made when a call first needs it, and kept until Close.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithInitialWindowSize(flowWindow),
		grpc.WithInitialConnWindowSize(flowWindow),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(cfg.MaxResponseBytes)),
		// A connection not made within ConnectTimeout fails, and one that
		// failed is tried again within ConnectTimeout too, so that a call
		// waits for a refused endpoint that comes back in that time.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  min(firstPause, cfg.ConnectTimeout),
				Multiplier: backoff.DefaultConfig.Multiplier,
				Jitter:     backoff.DefaultConfig.Jitter,
				MaxDelay:   cfg.ConnectTimeout,
			},
			MinConnectTimeout: cfg.ConnectTimeout,
		}),
	}
	if cfg.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer("Bearer "+cfg.Token)))
	}
	eps, rs := newEndpoints(cfg)
	return &Client{cfg: cfg, opts: opts, eps: eps, routes: rs}, nil
}

// Close closes every connection. Calls in flight fail (Canceled), later
// ones return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for i := range c.eps {
		if cn := c.eps[i].conn.Swap(nil); cn != nil {
			errs = append(errs, cn.cc.Close())
		}
	}
	return errors.Join(errs...)
}

// rpc returns the generated client on endpoint i, connecting on first use.
func (c *Client) rpc(i int) (pb.MetadataServiceClient, error) {
	if cn := c.eps[i].conn.Load(); cn != nil {
		return cn.rpc, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	ep := &c.eps[i]
	if cn := ep.conn.Load(); cn != nil {
		return cn.rpc, nil
	}
	cc, err := grpc.NewClient(ep.addr, c.opts...)
	if err != nil {
		return nil, fmt.Errorf("client: endpoint %s: %w", ep.addr, err)
	}
	cn := &conn{cc: cc, rpc: pb.NewMetadataServiceClient(cc)}
	ep.conn.Store(cn)
	return cn.rpc, nil
}

// method is a method of the generated client, called through a method
// expression such as pb.MetadataServiceClient.Execute.
type method[Req, Resp any] func(pb.MetadataServiceClient, context.Context, Req, ...grpc.CallOption) (Resp, error)

// call runs m on Endpoints as the Client documentation says. m must be
// safe to retry.
func call[Req, Resp any](ctx context.Context, c *Client, m method[Req, Resp], req Req, opts []grpc.CallOption) (Resp, error) {
	resp, err := run(ctx, c, c.routes.write(), m, req, opts, nil)
	return resp, typed(err)
}

// read is call for a method that only reads: on the read endpoints, then
// on Endpoints when none of them answers (Config.ReadEndpoints).
func read[Req, Resp any](ctx context.Context, c *Client, m method[Req, Resp], req Req, opts []grpc.CallOption) (Resp, error) {
	resp, err := run(ctx, c, c.routes.read(), m, req, opts, nil)
	return resp, typed(err)
}

// change is call for a method that changes the cluster, retried (under a
// request id, or answering AlreadyExists or NotFound once applied) until
// an answer settles it: when an attempt may have applied and none settled
// it, the call's error is an *OutcomeUnknownError.
func change[Req, Resp any](ctx context.Context, c *Client, m method[Req, Resp], req Req, opts []grpc.CallOption, requestID, what string) (Resp, error) {
	u := unsettled{requestID: requestID, change: what}
	resp, err := run(ctx, c, c.routes.write(), m, req, opts, &u)
	return resp, typed(err)
}

// run is call and read on r, and change with u, which notes the attempts
// that may have applied (nil for a call that changes nothing).
func run[Req, Resp any](ctx context.Context, c *Client, r route, m method[Req, Resp], req Req, opts []grpc.CallOption, u *unsettled) (Resp, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	n := r.len()
	var zero Resp
	var fails *failures
	pause := firstPause
	for {
		for k := range n {
			i := r.at(k)
			if fails.isOut(i) {
				continue
			}
			if fails != nil && u.tooLate(ctx) {
				return zero, u.or(fails.err(c.eps))
			}
			rpc, err := c.rpc(i)
			if err != nil {
				return zero, err
			}
			resp, err := m(rpc, ctx, req, opts...)
			if err != nil {
				if fails == nil {
					fails = newFailures(len(c.eps), n, c.cfg.ConnectTimeout)
				}
				if u.mayHaveApplied(c.eps[i].addr, err) {
					// Another member may settle it under the same id.
					fails.noteUnsettled(i, err)
					if ctx.Err() != nil {
						return zero, u.err()
					}
					continue
				}
				if fails.note(i, err, time.Now()) {
					continue
				}
			}
			r.answered(k)
			return resp, u.settled(err)
		}
		if fails.left == 0 {
			return zero, u.or(fails.err(c.eps))
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, u.or(fails.err(c.eps))
		case <-t.C:
		}
		pause = min(2*pause, maxPause)
	}
}

// bearer sends "authorization: Bearer TOKEN" with every call; it holds
// "Bearer TOKEN".
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": string(b)}, nil
}

// RequireTransportSecurity is false so that a loopback endpoint works
// without TLS; New refuses plaintext to any other.
func (bearer) RequireTransportSecurity() bool { return false }

// NewRequestID returns a random request id, a version 4 UUID: what the
// Client gives an Execute or SetGuardrails request that has none.
func NewRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
