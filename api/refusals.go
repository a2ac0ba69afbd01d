package api

import (
	"math"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/metalog/metalog/api/apierr"
)

// The reasons of metalog_requests_refused_total: why a request was refused
// before it changed anything. The set is fixed (see refusalReasons), so
// the label's cardinality is bounded. The labels of the member's refusals
// are apierr's table's; the others are the API's own refusals.
const (
	refusedUnauthenticated   = "unauthenticated"               // Unauthenticated
	refusedPermissionDenied  = "permission_denied"             // PermissionDenied: a role missing
	refusedScope             = apierr.RefusedScope             // PermissionDenied with ErrorInfo SCOPE: a scoped role used outside its keyspaces
	refusedRateLimited       = apierr.RefusedRateLimited       // ddl_rate_per_identity
	refusedTooManyStatements = apierr.RefusedTooManyStatements // max_statements_per_request
	refusedTooManyRequests   = "too_many_requests"             // max_concurrent_requests_per_connection
	refusedTooManyStreams    = "too_many_streams"              // max_watch_streams, max_watch_streams_per_identity
	refusedNoSpace           = apierr.RefusedNoSpace           // the NOSPACE alarm
	refusedGuardrail         = apierr.RefusedGuardrail         // a guardrail's fail threshold, nothing applied
	refusedInvalid           = apierr.RefusedInvalid           // InvalidArgument
)

// refusalReasons are every reason, pre-set at 0 on the counter so that an
// alert on its increase sees the first refusal too.
var refusalReasons = []string{refusedUnauthenticated, refusedPermissionDenied, refusedScope, refusedRateLimited,
	refusedTooManyStatements, refusedTooManyRequests, refusedTooManyStreams, refusedNoSpace, refusedGuardrail, refusedInvalid}

// The ErrorInfo reasons (domain "metalog", apierr.Domain) the API's code
// names: those of the member's errors are apierr's; TOO_MANY_REQUESTS
// (limits.go) and TOO_MANY_STREAMS (streamlimit.go) are the API's own
// refusals.
const (
	errorDomain             = apierr.Domain
	reasonRateLimited       = apierr.ReasonRateLimited
	reasonTooManyStatements = apierr.ReasonTooManyStatements
	reasonNoSpace           = apierr.ReasonNoSpace
	reasonTooManyRequests   = "TOO_MANY_REQUESTS"
	reasonScope             = apierr.ReasonScope
	reasonGuardrail         = apierr.ReasonGuardrail
	reasonPartiallyApplied  = apierr.ReasonPartiallyApplied
	reasonOutcomeUnknown    = apierr.ReasonOutcomeUnknown
)

// refusalReason is the one place that says whether a gRPC answer is a
// request refused before it changed anything, and why: its reason label,
// or "" for a success or any other error (NotFound, AlreadyExists,
// Unavailable, ...). The member's refusals are labelled by apierr's
// table; the API's own here.
func refusalReason(err error) string {
	if err == nil {
		return ""
	}
	reason := errorInfoReason(err)
	if reason == reasonPartiallyApplied {
		return ""
	}
	code := status.Code(err)
	if label := apierr.Refusal(code, reason); label != "" {
		return label
	}
	switch code {
	case codes.Unauthenticated:
		return refusedUnauthenticated
	case codes.PermissionDenied:
		return refusedPermissionDenied
	case codes.ResourceExhausted:
		switch reason {
		case reasonTooManyRequests:
			return refusedTooManyRequests
		case reasonTooManyStreams:
			return refusedTooManyStreams
		}
	case codes.Unavailable:
		if reason == reasonTooManyStreams {
			return refusedTooManyStreams
		}
	}
	return ""
}

// withInfo returns the status of code and msg with an ErrorInfo detail of
// reason and md, and the extra details (apierr.WithInfo).
func withInfo(code codes.Code, msg, reason string, md map[string]string, extra ...protoadapt.MessageV1) error {
	return apierr.WithInfo(code, msg, reason, md, extra...)
}

// retryAfterHeader is the Retry-After value of a delay: whole seconds,
// rounded up, at least 1 (RFC 9110 section 10.2.3).
func retryAfterHeader(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10)
}
