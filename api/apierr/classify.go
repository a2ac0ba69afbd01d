package apierr

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// Classify returns the class of err, an error of a member or of the
// layers below it; OK for nil. The rules are tried in order, and the
// order matters where one error matches several (a write whose outcome is
// unknown wraps the no-leader error that ended its wait):
//
//  1. an error the member words itself (worded): the class of its kind,
//     whatever it wraps;
//  2. an answer the member relays as it was given (a peer's gRPC status,
//     in a member.PeerError): the class of its code;
//  3. the rules of kinds below (kinds), first match wins.
func Classify(err error) Class {
	if err == nil {
		return OK
	}
	if c, ok := worded(err); ok {
		return c
	}
	if st, ok := status.FromError(err); ok {
		return classOfCode(st.Code())
	}
	for _, k := range kinds {
		if k.match(err) {
			return k.class
		}
	}
	return Internal
}

// Code is the gRPC code of err: the code of its class, or, for an answer
// relayed as it was given, its own code; codes.OK for nil.
func Code(err error) codes.Code {
	if _, ok := worded(err); !ok {
		if st, ok := status.FromError(err); ok {
			return st.Code()
		}
	}
	return Classify(err).Code()
}

// worded returns the class of an error the member words itself, by its
// type (its message is the whole answer): false for any other error.
func worded(err error) (Class, bool) {
	var (
		arg      *member.ArgumentError
		notFound *member.MemberNotFoundError
		exists   *member.MemberExistsError
		pre      *member.PreconditionError
		unavail  *member.UnavailableError
		peer     *member.PeerUnreachableError
		wait     *member.WaitError
		op       *member.OpError
	)
	switch {
	case errors.As(err, &arg):
		return Invalid, true
	case errors.As(err, &notFound):
		return NotFound, true
	case errors.As(err, &exists):
		return AlreadyExists, true
	case errors.As(err, &pre):
		return Precondition, true
	case errors.As(err, &unavail), errors.As(err, &peer):
		return Unavailable, true
	case errors.As(err, &wait):
		switch {
		case errors.Is(wait.Err, context.DeadlineExceeded):
			return DeadlineExceeded, true
		case errors.Is(wait.Err, context.Canceled):
			return Canceled, true
		}
		return Unavailable, true
	case errors.As(err, &op):
		// The step's own wording, with the class of its cause.
		return Classify(op.Err), true
	}
	return OK, false
}

// kind is one rule of the table: the errors it matches, and their class.
type kind struct {
	match func(error) bool
	class Class
}

// is matches the errors that errors.Is matches to one of targets.
func is(targets ...error) func(error) bool {
	return func(err error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	}
}

// syntaxError matches a *cql.SyntaxError.
func syntaxError(err error) bool {
	var syn *cql.SyntaxError
	return errors.As(err, &syn)
}

// kinds are the rules of the errors of the member and the layers below,
// in order: the first that matches gives the class.
var kinds = []kind{
	// First the wrappers, before the causes they wrap: an outcome-unknown
	// write wraps why its wait ended (no leader, a leader change, the
	// deadline); a refused plan wraps what refused it (a guardrail, a
	// schema rule), and whatever refused it, the plan does not fit the
	// current schema or settings.
	{is(member.ErrOutcomeUnknown), OutcomeUnknown},
	// The limits, before what the refused request would have met.
	{is(member.ErrRateLimited), RateLimited},
	{is(member.ErrNoSpace), NoSpace},
	{is(member.ErrTooManyStatements), TooManyStatements},
	{is(member.ErrOutOfScope), OutOfScope},
	{is(member.ErrPlanRefused), PlanRefused},
	// The request as given.
	{syntaxError, Syntax},
	{is(schema.ErrInvalid, metadata.ErrEmptyCommand, member.ErrEntryTooLarge), Invalid},
	// Refusals of the state: if_epoch and history ids before the
	// guardrail failures (a request refused for both is told the first).
	{is(metadata.ErrEpochMoved), EpochConflict},
	{is(member.ErrHistoryChanged), HistoryChanged},
	{is(guardrails.ErrFailed), Guardrail},
	{is(guardrails.ErrInvalidSetting, guardrails.ErrUnknownSetting), Invalid},
	{is(schema.ErrAlreadyExists), AlreadyExists},
	{is(schema.ErrNotFound), NotFound},
	{is(metadata.ErrHistoryPruned), HistoryPruned},
	{is(member.ErrEpochAhead), EpochAhead},
	// Nothing proposed, or nothing this member can serve now: a client
	// may ask again, anywhere.
	{is(metadata.ErrHistoryIncomplete, member.ErrHistoryUnnamed, raftlog.ErrNoLeader, raftlog.ErrStopped, raftlog.ErrLeaderChanged,
		metadata.ErrStateMachineClosed, member.ErrNotProposed), Unavailable},
	// The kinds the member words itself, for an error that only wraps
	// their sentinel (a *member.WaitError's end).
	{is(member.ErrUnavailable, member.ErrPeerUnreachable), Unavailable},
	{is(member.ErrInvalidArgument), Invalid},
	{is(member.ErrMemberNotFound), NotFound},
	{is(member.ErrMemberExists), AlreadyExists},
	{is(member.ErrPrecondition, raftlog.ErrRepairUnsupported), Precondition},
	{is(raftlog.ErrNotMember), PermissionDenied},
	// Last the context: a request's own deadline, its cancellation.
	{is(context.DeadlineExceeded), DeadlineExceeded},
	{is(context.Canceled), Canceled},
}
