package member

import (
	"context"
	"errors"
	"fmt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// testKinds are the sentinels by which the listeners classify a member's
// errors (api/apierr), by name.
var testKinds = []struct {
	name string
	err  error
}{
	{"ErrOutcomeUnknown", ErrOutcomeUnknown}, {"ErrRateLimited", ErrRateLimited}, {"ErrNoSpace", ErrNoSpace},
	{"ErrTooManyStatements", ErrTooManyStatements}, {"ErrOutOfScope", ErrOutOfScope}, {"ErrPlanRefused", ErrPlanRefused},
	{"schema.ErrInvalid", schema.ErrInvalid}, {"metadata.ErrEmptyCommand", metadata.ErrEmptyCommand}, {"ErrEntryTooLarge", ErrEntryTooLarge},
	{"metadata.ErrEpochMoved", metadata.ErrEpochMoved}, {"ErrHistoryChanged", ErrHistoryChanged}, {"guardrails.ErrFailed", guardrails.ErrFailed},
	{"guardrails.ErrInvalidSetting", guardrails.ErrInvalidSetting}, {"guardrails.ErrUnknownSetting", guardrails.ErrUnknownSetting},
	{"schema.ErrAlreadyExists", schema.ErrAlreadyExists}, {"schema.ErrNotFound", schema.ErrNotFound},
	{"metadata.ErrHistoryPruned", metadata.ErrHistoryPruned}, {"ErrEpochAhead", ErrEpochAhead},
	{"metadata.ErrHistoryIncomplete", metadata.ErrHistoryIncomplete}, {"ErrHistoryUnnamed", ErrHistoryUnnamed},
	{"raftlog.ErrNoLeader", raftlog.ErrNoLeader}, {"raftlog.ErrStopped", raftlog.ErrStopped}, {"raftlog.ErrLeaderChanged", raftlog.ErrLeaderChanged},
	{"metadata.ErrStateMachineClosed", metadata.ErrStateMachineClosed}, {"ErrNotProposed", ErrNotProposed},
	{"ErrInvalidArgument", ErrInvalidArgument}, {"ErrMemberNotFound", ErrMemberNotFound}, {"ErrMemberExists", ErrMemberExists},
	{"ErrPrecondition", ErrPrecondition}, {"ErrUnavailable", ErrUnavailable}, {"ErrPeerUnreachable", ErrPeerUnreachable},
	{"context.DeadlineExceeded", context.DeadlineExceeded}, {"context.Canceled", context.Canceled},
}

// kinds names the sentinels of testKinds err matches, and a
// *cql.SyntaxError in it: two errors of the same kinds are answered
// alike.
func kinds(err error) string {
	var out []string
	for _, k := range testKinds {
		if errors.Is(err, k.err) {
			out = append(out, k.name)
		}
	}
	var syn *cql.SyntaxError
	if errors.As(err, &syn) {
		out = append(out, "*cql.SyntaxError")
	}
	return fmt.Sprint(out)
}

// notProposed reports whether err is a write that proposed nothing and
// may be sent anywhere again (no leader, a stopped node, the deadline
// before raft took it), not one whose outcome is unknown.
func notProposed(err error) bool {
	if errors.Is(err, ErrOutcomeUnknown) {
		return false
	}
	for _, target := range []error{raftlog.ErrNoLeader, raftlog.ErrStopped, raftlog.ErrLeaderChanged, metadata.ErrStateMachineClosed, ErrNotProposed} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// invalid reports whether err refuses the request as given (a request
// field, a statement, a setting): what the listeners answer
// InvalidArgument.
func invalid(err error) bool {
	var syn *cql.SyntaxError
	if errors.As(err, &syn) {
		return true
	}
	for _, target := range []error{ErrInvalidArgument, schema.ErrInvalid, metadata.ErrEmptyCommand, ErrEntryTooLarge, guardrails.ErrInvalidSetting, guardrails.ErrUnknownSetting} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
