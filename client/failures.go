package client

import (
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/internal/connfail"
)

// failures is what one call learnt of the endpoints that failed it. It is
// made at the first failure, so that a call answered at once allocates
// nothing; a nil *failures knows of no failure.
type failures struct {
	// connectTimeout is how long an endpoint that refuses connections
	// stays in the rounds (Config.ConnectTimeout).
	connectTimeout time.Duration
	// keepRefused keeps an endpoint that refuses connections in the
	// rounds however long it does: a watch that waits for a member to
	// come back.
	keepRefused bool
	eps         []failure // by endpoint index
	left        int       // endpoints of the route not left out
}

// failure is one endpoint's part of a call.
type failure struct {
	failed bool
	why    string // the last failure, in a few words
	// refusedSince is when the endpoint began refusing connections in
	// this call; zero while it does not.
	refusedSince time.Time
	out          bool // left out of the call's later rounds
	// notProposed: the last failure was the member's own word that it
	// proposed nothing (NOT_PROPOSED).
	notProposed bool
}

// newFailures returns the failures of a call on a Client of n endpoints
// whose route tries tried of them (the others are never left out, since
// never tried).
func newFailures(n, tried int, connectTimeout time.Duration) *failures {
	return &failures{connectTimeout: connectTimeout, eps: make([]failure, n), left: tried}
}

// isOut reports whether endpoint i was left out of the call.
func (f *failures) isOut(i int) bool { return f != nil && f.eps[i].out }

// note records err, the error of endpoint i, and reports whether the call
// goes on to the other endpoints (false: err is the call's answer).
//
// Unavailable from a gRPC server (no leader, a member starting) is
// retried until the call's deadline, and so is a connection that timed
// out or failed otherwise; a refused connection only for connectTimeout;
// an HTTP server where gRPC was expected is left out at once. With
// keepRefused a refused connection is retried as long as the others.
func (f *failures) note(i int, err error, now time.Time) bool {
	kind, why := connfail.Of(err)
	e := &f.eps[i]
	switch {
	case kind == connfail.NotGRPC:
		f.leaveOut(e)
	case status.Code(err) != codes.Unavailable:
		return false
	case kind != connfail.Refused:
		e.refusedSince = time.Time{}
	case f.keepRefused:
		// It stays in the rounds: the member may be restarting.
	case e.refusedSince.IsZero():
		e.refusedSince = now
	case now.Sub(e.refusedSince) >= f.connectTimeout:
		f.leaveOut(e)
	}
	e.failed, e.why = true, why
	e.notProposed = errorInfo(err).GetReason() == reasonNotProposed
	return true
}

// noteUnsettled records err, the error of endpoint i after which a change
// may have applied; the call goes on to the other endpoints.
func (f *failures) noteUnsettled(i int, err error) {
	_, why := connfail.Of(err)
	e := &f.eps[i]
	e.refusedSince = time.Time{}
	e.failed, e.why, e.notProposed = true, why, false
}

func (f *failures) leaveOut(e *failure) {
	if !e.out {
		e.out = true
		f.left--
	}
}

// err is the call's error once no endpoint answered: Unavailable with
// "ENDPOINT: why" for each endpoint that failed, in the endpoints' order,
// and the ErrorInfo NOT_PROPOSED (ErrNotProposed) when a member said so
// and the others could not be reached either.
func (f *failures) err(eps []endpoint) error {
	var b strings.Builder
	notProposed := false
	for i, e := range f.eps {
		if !e.failed {
			continue
		}
		notProposed = notProposed || e.notProposed
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(eps[i].addr)
		b.WriteString(": ")
		b.WriteString(e.why)
	}
	st := status.New(codes.Unavailable, b.String())
	if notProposed {
		if with, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reasonNotProposed, Domain: errorDomain}); err == nil {
			st = with
		}
	}
	return st.Err()
}
