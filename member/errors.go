package member

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// Errors of the layers below that a Member's callers test for with
// errors.Is, under the member's names (they are the same values).
var (
	// ErrRemoved is the fatal error (Member.Err) of a member that learnt it
	// was removed from the cluster; Start returns it for the data dir of a
	// removed member.
	ErrRemoved = raftlog.ErrRemoved
	// ErrNoLeader is wrapped by the errors of writes and linearizable reads
	// that found no leader before their deadline.
	ErrNoLeader = raftlog.ErrNoLeader
)

// ErrTooManyStatements is matched (errors.Is) by the error of an Execute
// with more statements than Config.MaxStatementsPerRequest. Nothing of such
// a request was checked or proposed: it is refused like a request past a
// transport limit.
var ErrTooManyStatements = errors.New("member: too many statements in one request")

// ErrEntryTooLarge is matched (errors.Is) by the error of a change whose
// log entry would be larger than Config.MaxMutationSize: the members
// refuse larger messages from their peers, so it is refused before it is
// proposed, and nothing of it applies. Its code is InvalidArgument (HTTP
// 400): the same request is refused again; split it.
var ErrEntryTooLarge = errors.New("member: change larger than max_mutation_size")

// limitError is a request refused by a limit: its message is the one the
// client sees, and errors.Is matches the limit's sentinel.
type limitError struct {
	msg   string
	limit error
}

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == e.limit }

// Code maps an error of a Member's (or of the layers below it) to the one
// gRPC code the contract gives it; the gateway turns that code into the
// HTTP status. A gRPC status error (the member's own answers, or a peer's)
// keeps its code.
func Code(err error) codes.Code {
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	var syn *cql.SyntaxError
	switch {
	case errors.Is(err, ErrOutcomeUnknown):
		// Before the causes it wraps (no leader, a leader change).
		return codes.DeadlineExceeded
	case errors.Is(err, ErrPlanRefused):
		// Before the causes it wraps: whatever refused it, the plan does
		// not fit the current schema or settings.
		return codes.FailedPrecondition
	case errors.As(err, &syn),
		errors.Is(err, schema.ErrInvalid),
		errors.Is(err, metadata.ErrEmptyCommand),
		errors.Is(err, ErrEntryTooLarge):
		return codes.InvalidArgument
	case errors.Is(err, guardrails.ErrFailed), errors.Is(err, metadata.ErrEpochMoved), errors.Is(err, ErrHistoryChanged):
		return codes.FailedPrecondition
	case errors.Is(err, guardrails.ErrInvalidSetting), errors.Is(err, guardrails.ErrUnknownSetting):
		return codes.InvalidArgument
	case errors.Is(err, schema.ErrAlreadyExists):
		return codes.AlreadyExists
	case errors.Is(err, schema.ErrNotFound):
		return codes.NotFound
	case errors.Is(err, ErrTooManyStatements), errors.Is(err, ErrNoSpace), errors.Is(err, ErrRateLimited):
		return codes.ResourceExhausted
	case errors.Is(err, ErrOutOfScope):
		return codes.PermissionDenied
	case errors.Is(err, metadata.ErrHistoryPruned), errors.Is(err, ErrEpochAhead):
		return codes.OutOfRange
	case errors.Is(err, metadata.ErrHistoryIncomplete), errors.Is(err, ErrHistoryUnnamed):
		return codes.Unavailable
	case errors.Is(err, raftlog.ErrNoLeader), errors.Is(err, raftlog.ErrStopped), errors.Is(err, raftlog.ErrLeaderChanged),
		errors.Is(err, metadata.ErrStateMachineClosed), errors.Is(err, ErrNotProposed):
		return codes.Unavailable
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Internal
}
