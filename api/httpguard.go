package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// guardHTTP bounds what a client of srv may hold: request headers (and
// the TLS handshake) within o's request_read_timeout, idle keep-alive and
// HTTP/2 connections closed after idle_timeout, a request body read
// within request_read_timeout of its headers and, for the JSON API when
// auth is on, only once its headers authenticate the caller: a client
// that is nobody is answered 401 without a byte of its body read (counted
// on mt).
func guardHTTP(srv *http.Server, o *Options, auth *authenticator, mt *metrics) {
	timeout := o.RequestReadTimeout
	srv.ReadHeaderTimeout = timeout
	srv.IdleTimeout = o.IdleTimeout // HTTP/2 too
	next := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if auth.enabled && strings.HasPrefix(r.URL.Path, "/v1/") {
			if err := authenticateHTTP(auth, r); err != nil {
				if auth.onRefusal != nil {
					auth.onRefusal("HTTP "+r.Method+" "+r.URL.Path, "")
				}
				mt.refuse(refusedUnauthenticated)
				// Not a byte of the body: the deadline makes net/http
				// close the connection after the answer instead of
				// draining the body first.
				rc.SetReadDeadline(time.Now())
				httpError(w, http.StatusUnauthorized, codes.Unauthenticated, status.Convert(err).Message())
				return
			}
		}
		// Whoever reads the body (the limits, or net/http draining what
		// a handler left) has until the deadline: a read past it fails
		// (os.ErrDeadlineExceeded, answered 408), and net/http closes
		// the connection. Only body reads are bounded: net/http lifts
		// the deadline once the body is read (HTTP/1.1), and an HTTP/2
		// stream's read deadline bounds its body alone, so a stream
		// answered after it (a watch) runs on.
		rc.SetReadDeadline(time.Now().Add(timeout))
		next.ServeHTTP(w, r)
	})
}

// authenticateHTTP authenticates the caller of r from its headers and TLS
// certificate alone, as the interceptor does with what the gateway
// forwards (the Authorization header; the verified chain under the
// gateway's secret), so that both sides accept and refuse alike.
func authenticateHTTP(a *authenticator, r *http.Request) error {
	md := metadata.MD{}
	if v := r.Header.Values("Authorization"); len(v) > 0 {
		md["authorization"] = v
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		md[mdGatewaySecret] = []string{a.secret}
		md[mdGatewayCert] = []string{encodeChain(r.TLS.PeerCertificates)}
	}
	_, err := a.authenticate(metadata.NewIncomingContext(context.Background(), md))
	return err
}
