package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
)

// streamsPerConnectionFactor sets the HTTP/2 MaxConcurrentStreams of the
// listeners to this multiple of max_concurrent_requests_per_connection: a
// transport-level bound well above the per-connection request limit, so
// that a client going past the limit gets a clear ResourceExhausted rather
// than silently queued streams. The gateway's connections, to a server of
// its own (gateway.go), are not bounded by it: they carry every HTTP
// request, which the HTTP listener bounds.
const streamsPerConnectionFactor = 16

// limits enforces the abuse limits on connections: requests in flight per
// connection. A refused request reaches no handler, so nothing of it is
// applied. (The gRPC message size is the server's option; the statements
// per request are counted by the member, which parses them.)
type limits struct {
	maxInFlight int
	secret      string // the gateway connection's, exempt from the per-connection limit
	// refused, if set, counts the HTTP requests refused by the limit
	// (gRPC ones are counted by the metrics interceptor).
	refused func(reason string)
}

// connKey is the context key of a connection's in-flight counter.
type connKey struct{}

// connStats is a stats.Handler that gives each gRPC connection a counter.
type connStats struct{}

func (connStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, new(atomic.Int64))
}
func (connStats) HandleConn(context.Context, stats.ConnStats)                     {}
func (connStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (connStats) HandleRPC(context.Context, stats.RPCStats)                       {}

// enter counts a request on its connection, or refuses it past the limit;
// the caller passes the returned counter (nil for a request that is not
// counted) to leave when the request ends. A counter rather than a closure
// over it: that would be one allocation per request.
func (l *limits) enter(ctx context.Context) (*atomic.Int64, error) {
	n, ok := ctx.Value(connKey{}).(*atomic.Int64)
	if !ok || l.fromGateway(ctx) {
		return nil, nil
	}
	if n.Add(1) > int64(l.maxInFlight) {
		n.Add(-1)
		return nil, exhausted(fmt.Errorf(
			"too many concurrent requests on this connection: the limit is %d (max_concurrent_requests_per_connection); wait for answers or open another connection", l.maxInFlight),
			reasonTooManyRequests, "max_concurrent_requests_per_connection")
	}
	return n, nil
}

// leave ends a request that enter counted on n.
func leave(n *atomic.Int64) {
	if n != nil {
		n.Add(-1)
	}
}

// fromGateway reports whether the request came over the gateway's own
// connection (it carries the gateway secret). It reads that one key, not a
// copy of the whole metadata (metadata.FromIncomingContext copies every
// key, on every request).
func (l *limits) fromGateway(ctx context.Context) bool {
	return gatewaySecretSent(ctx, l.secret)
}

// gatewaySecretSent reports whether ctx's incoming metadata carries the
// gateway secret, once.
func gatewaySecretSent(ctx context.Context, secret string) bool {
	v := metadata.ValueFromIncomingContext(ctx, mdGatewaySecret)
	return len(v) == 1 && subtle.ConstantTimeCompare([]byte(v[0]), []byte(secret)) == 1
}

// inFlightUnary is the per-connection limit, first in the chain after
// metrics so that a flood costs as little as possible.
func (l *limits) inFlightUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	n, err := l.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave(n)
	return handler(ctx, req)
}

// inFlightStream is inFlightUnary for streams (server reflection).
func (l *limits) inFlightStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	n, err := l.enter(ss.Context())
	if err != nil {
		return err
	}
	defer leave(n)
	return handler(srv, ss)
}

// httpConnKey is the context key of an HTTP connection's in-flight counter.
type httpConnKey struct{}

// httpConnContext gives each HTTP connection a counter (http.Server.ConnContext).
func httpConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, httpConnKey{}, new(atomic.Int64))
}

// httpLimits wraps the gateway: it strips headers that would pose as the
// gateway's own metadata, refuses bodies over maxBytes (413) and requests
// past the per-connection limit (429), with the gateway's JSON error body.
func (l *limits) httpLimits(maxBytes int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k := range r.Header {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, mdPrefix) || strings.HasPrefix(lk, "grpc-metadata-"+mdPrefix) {
				r.Header.Del(k)
			}
		}
		if n, ok := r.Context().Value(httpConnKey{}).(*atomic.Int64); ok {
			if n.Add(1) > int64(l.maxInFlight) {
				n.Add(-1)
				if l.refused != nil {
					l.refused(refusedTooManyRequests)
				}
				httpError(w, http.StatusTooManyRequests, codes.ResourceExhausted,
					fmt.Sprintf("too many concurrent requests on this connection: the limit is %d (max_concurrent_requests_per_connection)", l.maxInFlight))
				return
			}
			defer n.Add(-1)
		}
		if r.Body != nil && r.Body != http.NoBody {
			tooLarge := func() {
				httpError(w, http.StatusRequestEntityTooLarge, codes.ResourceExhausted,
					fmt.Sprintf("request body larger than the limit of %d bytes (max_request_bytes); nothing was applied", maxBytes))
			}
			if r.ContentLength > int64(maxBytes) {
				tooLarge()
				return
			}
			// Without a trustworthy length, read at most one byte past the
			// limit to know.
			body, err := io.ReadAll(io.LimitReader(r.Body, int64(maxBytes)+1))
			r.Body.Close()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				httpError(w, http.StatusRequestTimeout, codes.Canceled,
					"the request body did not arrive within request_read_timeout of its headers; nothing was applied: send the body at once after the headers, or raise request_read_timeout")
				return
			}
			if err != nil {
				httpError(w, http.StatusBadRequest, codes.InvalidArgument, "reading the request body: "+err.Error())
				return
			}
			if len(body) > maxBytes {
				tooLarge()
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}
