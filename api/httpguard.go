package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// errBodyTimeout marks a request body that did not arrive within
// request_read_timeout.
var errBodyTimeout = errors.New("the request body did not arrive within request_read_timeout")

// guardHTTP bounds what a client of srv may hold: request headers (and
// the TLS handshake) within request_read_timeout, idle keep-alive and
// HTTP/2 connections closed after idle_timeout, a request body read
// within request_read_timeout of its headers and, for the JSON API when
// auth is on, only once its headers authenticate the caller: a client
// that is nobody is answered 401 without a byte of its body read.
func (s *Server) guardHTTP(srv *http.Server, mt *metrics) {
	timeout := time.Duration(s.cfg.RequestReadTimeout)
	srv.ReadHeaderTimeout = timeout
	srv.IdleTimeout = time.Duration(s.cfg.IdleTimeout) // HTTP/2 too
	next := srv.Handler
	auth := s.sec.auth
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
		// a handler left) has until the deadline; it is lifted once the
		// body is read, so that a stream answered after it (a watch) is
		// not cut.
		rc.SetReadDeadline(time.Now().Add(timeout))
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: timeout}
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

// deadlineBody is a request body read under a deadline, which it lifts
// once the body is read (or closed).
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	lifted  bool
}

// Read reads the body, and lifts the deadline at its end; a read past the
// deadline fails with errBodyTimeout (and os.ErrDeadlineExceeded), and the
// deadline stays: what net/http reads of the body afterwards fails too,
// and it closes the connection.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.lift()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w (%v): %w", errBodyTimeout, b.timeout, err)
	}
	return n, err
}

// Close closes the body (net/http reads what is left of a small one,
// under the deadline) and lifts the deadline.
func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.lift()
	return err
}

func (b *deadlineBody) lift() {
	if !b.lifted {
		b.lifted = true
		b.rc.SetReadDeadline(time.Time{})
	}
}
