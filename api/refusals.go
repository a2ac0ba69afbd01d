package api

import (
	"errors"
	"math"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/retryinfo"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// The reasons of metalog_requests_refused_total: why a request was refused
// before it changed anything. The set is fixed (see refusalReasons), so
// the label's cardinality is bounded.
const (
	refusedUnauthenticated   = "unauthenticated"     // Unauthenticated
	refusedPermissionDenied  = "permission_denied"   // PermissionDenied: a role missing
	refusedScope             = "scope"               // PermissionDenied with ErrorInfo SCOPE: a scoped role used outside its keyspaces
	refusedRateLimited       = "rate_limited"        // ddl_rate_per_identity
	refusedTooManyStatements = "too_many_statements" // max_statements_per_request
	refusedTooManyRequests   = "too_many_requests"   // max_concurrent_requests_per_connection
	refusedTooManyStreams    = "too_many_streams"    // max_watch_streams, max_watch_streams_per_identity
	refusedNoSpace           = "nospace"             // the NOSPACE alarm
	refusedGuardrail         = "guardrail"           // a guardrail's fail threshold, nothing applied
	refusedInvalid           = "invalid"             // InvalidArgument
)

// refusalReasons are every reason, pre-set at 0 on the counter so that an
// alert on its increase sees the first refusal too.
var refusalReasons = []string{refusedUnauthenticated, refusedPermissionDenied, refusedScope, refusedRateLimited,
	refusedTooManyStatements, refusedTooManyRequests, refusedTooManyStreams, refusedNoSpace, refusedGuardrail, refusedInvalid}

// ErrorInfo reasons (domain "metalog") of refusals besides the
// ResourceExhausted ones of httperrors.go. A PermissionDenied answer for a
// scoped role used outside its keyspaces carries reasonScope; a guardrail
// failure that applied nothing carries reasonGuardrail (metadata
// "guardrail": the setting); an Execute that failed after some of its
// statements applied carries reasonPartiallyApplied (metadata "applied":
// how many), which also tells the refusal counter it was no refusal.
const (
	reasonRateLimited      = "RATE_LIMITED"
	reasonTooManyRequests  = "TOO_MANY_REQUESTS"
	reasonScope            = "SCOPE"
	reasonGuardrail        = "GUARDRAIL"
	reasonPartiallyApplied = "PARTIALLY_APPLIED"
)

// refusalReason is the one place that says whether a gRPC answer is a
// request refused before it changed anything, and why: its reason label,
// or "" for a success or any other error (NotFound, AlreadyExists,
// Unavailable, ...).
func refusalReason(err error) string {
	if err == nil {
		return ""
	}
	reason := errorInfoReason(err)
	if reason == reasonPartiallyApplied {
		return ""
	}
	switch status.Code(err) {
	case codes.Unauthenticated:
		return refusedUnauthenticated
	case codes.PermissionDenied:
		if reason == reasonScope {
			return refusedScope
		}
		return refusedPermissionDenied
	case codes.ResourceExhausted:
		switch reason {
		case reasonRateLimited:
			return refusedRateLimited
		case reasonTooManyStatements:
			return refusedTooManyStatements
		case reasonTooManyRequests:
			return refusedTooManyRequests
		case reasonTooManyStreams:
			return refusedTooManyStreams
		case reasonNoSpace:
			return refusedNoSpace
		}
	case codes.Unavailable:
		if reason == reasonTooManyStreams {
			return refusedTooManyStreams
		}
	case codes.FailedPrecondition:
		if reason == reasonGuardrail {
			return refusedGuardrail
		}
	case codes.InvalidArgument:
		return refusedInvalid
	}
	return ""
}

// withInfo returns the status of code and msg with an ErrorInfo detail of
// reason and md, and the extra details.
func withInfo(code codes.Code, msg, reason string, md map[string]string, extra ...protoadapt.MessageV1) error {
	st := status.New(code, msg)
	details := append([]protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain, Metadata: md}}, extra...)
	if with, err := st.WithDetails(details...); err == nil {
		st = with
	}
	return st.Err()
}

// rateLimited is the status of a request refused by the rate limit per
// identity: ResourceExhausted with an ErrorInfo (RATE_LIMITED, the
// setting and the identity) and a RetryInfo of the time until the
// identity's bucket is out of debt.
func rateLimited(err error, rl *member.RateLimitError) error {
	return withInfo(codes.ResourceExhausted, err.Error(), reasonRateLimited,
		map[string]string{"setting": "ddl_rate_per_identity", "identity": rl.Identity},
		retryinfo.New(rl.RetryAfter))
}

// memberStatus is the status of an error of the member that no limit
// claimed: its code (member.Code) and message, with an ErrorInfo for a
// request that applied some of its statements before failing, for the
// errors of errorinfo.go (if_epoch, plans, history), for a guardrail
// failure that applied nothing, and for an Unavailable answer
// (NOT_PROPOSED: nothing of the request was proposed).
func memberStatus(err error) error {
	code := member.Code(err)
	var se *metadata.StatementError
	if errors.As(err, &se) && se.Applied > 0 {
		return withInfo(code, err.Error(), reasonPartiallyApplied, map[string]string{"applied": strconv.Itoa(se.Applied)})
	}
	if st, ok := typedStatus(code, err); ok {
		return st
	}
	var f *guardrails.Failure
	switch {
	case errors.As(err, &f):
		return withInfo(code, err.Error(), reasonGuardrail, map[string]string{"guardrail": f.Guardrail})
	case code == codes.Unavailable:
		// The member proposed nothing (no leader, stopped): a client may
		// send the request anywhere again.
		return withInfo(code, err.Error(), reasonNotProposed, nil)
	}
	return status.Error(code, err.Error())
}

// retryAfterHeader is the Retry-After value of a delay: whole seconds,
// rounded up, at least 1 (RFC 9110 section 10.2.3).
func retryAfterHeader(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10)
}
