package client

import (
	"errors"

	"google.golang.org/grpc/status"
)

// A member's answer that a program must branch on carries, beside its
// gRPC code, an ErrorInfo detail (domain "metalog") whose reason says
// which of the answers sharing that code it is: FailedPrecondition is a
// guardrail, an if_epoch conflict, a refused plan or another history.
// The Client returns such an answer as a *ReasonError, which keeps the
// code and message (status.Code, status.Convert) and matches, with
// errors.Is, the sentinel of its reason below:
//
//	_, err := c.Execute(ctx, &metalogpb.ExecuteRequest{Statements: ddl, IfEpoch: &epoch})
//	switch {
//	case errors.Is(err, client.ErrIfEpochConflict):
//		// the schema moved since epoch: plan again
//	case errors.Is(err, client.ErrGuardrail):
//		var re *client.ReasonError
//		errors.As(err, &re)
//		fmt.Println("refused by", re.Metadata["guardrail"])
//	}
//
// The README's "Requests and errors" lists every reason with its code,
// HTTP status and metadata.

// The reasons of the ErrorInfo details of the members' answers.
const (
	reasonGuardrail         = "GUARDRAIL"
	reasonIfEpochConflict   = "IF_EPOCH_CONFLICT"
	reasonPlanRefused       = "PLAN_REFUSED"
	reasonHistoryPruned     = "HISTORY_PRUNED"
	reasonHistoryChanged    = "HISTORY_CHANGED"
	reasonEpochAhead        = "EPOCH_AHEAD"
	reasonWatchLagging      = "WATCH_LAGGING"
	reasonScope             = "SCOPE"
	reasonRateLimited       = "RATE_LIMITED"
	reasonNoSpace           = "NOSPACE"
	reasonTooManyStreams    = "TOO_MANY_STREAMS"
	reasonTooManyStatements = "TOO_MANY_STATEMENTS"
	reasonTooManyRequests   = "TOO_MANY_REQUESTS"
	reasonPartiallyApplied  = "PARTIALLY_APPLIED"
)

// reasonSentinel is the sentinel of one reason: a *ReasonError of that
// reason matches it.
type reasonSentinel struct {
	reason, text string
}

func (e *reasonSentinel) Error() string { return e.text }

// The sentinels of the reasons, for errors.Is. Each names the gRPC code
// its answers have; the *ReasonError's Metadata holds the keys listed.
var (
	// ErrGuardrail: FailedPrecondition, a guardrail's fail threshold
	// refused the change (or a plan's statement), and nothing applied.
	// Metadata "guardrail" (the setting), and "statement" and "position"
	// for a plan.
	ErrGuardrail error = &reasonSentinel{reasonGuardrail, "client: refused by a guardrail"}
	// ErrIfEpochConflict: FailedPrecondition, the schema was not at the
	// request's if_epoch when it applied, so nothing applied: plan again.
	// Metadata "if_epoch" and "epoch" (the schema's then).
	ErrIfEpochConflict error = &reasonSentinel{reasonIfEpochConflict, "client: the schema moved past if_epoch"}
	// ErrPlanRefused: FailedPrecondition, the plan cannot be made
	// (metadata "object" and "reason" of the first change that cannot be
	// made in place, "changes" how many) or would be refused at a
	// statement (metadata "statement", "position").
	ErrPlanRefused error = &reasonSentinel{reasonPlanRefused, "client: plan refused"}
	// ErrHistoryPruned: OutOfRange, a history, watch or at_epoch read
	// reaches past the oldest epoch the member keeps. Metadata
	// "oldest_epoch", "from_epoch", "history_retention_epochs".
	ErrHistoryPruned error = &reasonSentinel{reasonHistoryPruned, "client: history pruned"}
	// ErrHistoryChanged: FailedPrecondition, a watch or history read named
	// a history id that is not the cluster's: it was restored from a
	// backup or forced into a new cluster, and its epoch numbers may name
	// other changes. Read the schema again and follow from its epoch.
	// Metadata "history_id" (the cluster's), "requested_history_id",
	// "cluster_id". Watch and Follow end with it.
	ErrHistoryChanged error = &reasonSentinel{reasonHistoryChanged, "client: the cluster's history changed"}
	// ErrEpochAhead: OutOfRange, an at_epoch read of an epoch the cluster
	// has not made. Metadata "at_epoch", "epoch" (the cluster's),
	// "history_id".
	ErrEpochAhead error = &reasonSentinel{reasonEpochAhead, "client: epoch not made yet"}
	// ErrWatchLagging: Unavailable, a member cut a watch that fell more
	// than its bound (watch_max_lag_epochs) behind it; Watch resumes from
	// the last epoch it returned, so a caller sees it only from the
	// generated client. Metadata "resume_epoch", "epoch" (the member's),
	// "max_lag_epochs".
	ErrWatchLagging error = &reasonSentinel{reasonWatchLagging, "client: watch cut for lagging"}
	// ErrScope: PermissionDenied, a role scoped to keyspaces used outside
	// them.
	ErrScope error = &reasonSentinel{reasonScope, "client: outside the caller's keyspaces"}
	// ErrRateLimited: ResourceExhausted, ddl_rate_per_identity; the answer
	// carries a RetryInfo. Metadata "setting", "identity".
	ErrRateLimited error = &reasonSentinel{reasonRateLimited, "client: rate limited"}
	// ErrNoSpace: ResourceExhausted, the NOSPACE alarm of a member: free
	// disk space first. Metadata "setting".
	ErrNoSpace error = &reasonSentinel{reasonNoSpace, "client: a member is out of space"}
	// ErrTooManyStreams: Unavailable or ResourceExhausted, a watch or
	// backup stream past max_watch_streams(_per_identity). Metadata
	// "setting".
	ErrTooManyStreams error = &reasonSentinel{reasonTooManyStreams, "client: too many streams"}
	// ErrTooManyStatements: ResourceExhausted, a request with more
	// statements than max_statements_per_request; split it. Metadata
	// "setting".
	ErrTooManyStatements error = &reasonSentinel{reasonTooManyStatements, "client: too many statements"}
	// ErrTooManyRequests: ResourceExhausted, more requests in flight on
	// the connection than max_concurrent_requests_per_connection.
	// Metadata "setting".
	ErrTooManyRequests error = &reasonSentinel{reasonTooManyRequests, "client: too many requests"}
	// ErrPartiallyApplied: a request that is not atomic failed after some
	// of its statements applied (metadata "applied": how many); its code
	// is the failed statement's.
	ErrPartiallyApplied error = &reasonSentinel{reasonPartiallyApplied, "client: partially applied"}
	// ErrNotProposed: Unavailable, the member proposed nothing of the
	// change (no leader, stopping): it may be sent anywhere again. The
	// Client does that itself; a call returns it only once no member
	// answered.
	ErrNotProposed error = &reasonSentinel{reasonNotProposed, "client: not proposed"}
)

// ReasonError is a member's answer with a metalog ErrorInfo: Err is the
// gRPC status error as received, Reason and Metadata its ErrorInfo's. It
// matches (errors.Is) the sentinel of its reason, and has Err's gRPC code
// and message (status.Code, status.FromError).
type ReasonError struct {
	// Reason is the ErrorInfo's reason, e.g. "HISTORY_CHANGED".
	Reason string
	// Metadata is the ErrorInfo's metadata (see each sentinel).
	Metadata map[string]string
	// Err is the answer.
	Err error
}

// Error is the answer's.
func (e *ReasonError) Error() string { return e.Err.Error() }

// Unwrap returns the answer.
func (e *ReasonError) Unwrap() error { return e.Err }

// GRPCStatus is the answer's status.
func (e *ReasonError) GRPCStatus() *status.Status { return status.Convert(e.Err) }

// Is matches the sentinel of the error's reason (and ErrOutcomeUnknown
// for OUTCOME_UNKNOWN).
func (e *ReasonError) Is(target error) bool {
	if s, ok := target.(*reasonSentinel); ok {
		return s.reason == e.Reason
	}
	return target == ErrOutcomeUnknown && e.Reason == reasonOutcomeUnknown
}

// typed returns err as the Client returns it: a *ReasonError for a
// member's answer with a metalog ErrorInfo, err itself otherwise (and for
// one that is typed already).
func typed(err error) error {
	if err == nil {
		return nil // before the variables errors.As takes, which escape
	}
	var re *ReasonError
	var unknown *OutcomeUnknownError
	if errors.As(err, &re) || errors.As(err, &unknown) {
		return err
	}
	info := errorInfo(err)
	if info == nil {
		return err
	}
	return &ReasonError{Reason: info.GetReason(), Metadata: info.GetMetadata(), Err: err}
}
