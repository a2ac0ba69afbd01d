package member

import (
	"context"
	"errors"
	"fmt"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/raftlog"
)

// ErrOutcomeUnknown is matched (errors.Is) by the error of a write whose
// change may still apply (an *OutcomeUnknownError): a proposal of it may
// be in the raft log, and the request ended before it applied on this
// member; the API answers it DeadlineExceeded. Every other error of a write
// means that nothing of it was proposed, or that the log applied it and
// the error says how it failed.
var ErrOutcomeUnknown = raftlog.ErrOutcomeUnknown

// ErrNotProposed marks a write whose request deadline passed before its
// proposal reached the raft log (the raft goroutine was too busy to take
// it): nothing of it applies. It is Unavailable, as is a write that found
// no leader.
var ErrNotProposed = errors.New("not proposed within the request deadline; nothing of it applies")

// OutcomeUnknownError is the error of a write whose change may still
// apply: the member proposed it, and the request deadline passed (or the
// leader changed and none was found again in time, or the member stopped)
// before it applied here. Nothing tells yet whether it will apply: a
// proposal can still commit once a quorum is back, or be lost. Learn what
// happened by its request id (RequestOutcome), or send the same request
// again under the same id: the cluster applies it at most once, and
// answers a retry of an applied request with its first result.
type OutcomeUnknownError struct {
	// RequestID is the id the request was proposed under (the member's
	// own, "server-...", when the request came without one); empty for a
	// membership change, which has none.
	RequestID string
	// AppliedIndex is the log index this member had applied before it
	// first proposed the request: if the request ever applies, it applies
	// after this index (RequestQuery.AfterIndex).
	AppliedIndex uint64
	// Change names a change without a request id ("add member n4"), for
	// the message.
	Change string
	// Err is why the wait ended; it matches raftlog.ErrOutcomeUnknown or
	// raftlog.ErrLeaderChanged, and the context's error when the deadline
	// passed.
	Err error
}

// Error says what is unknown, why, and how to learn what happened.
func (e *OutcomeUnknownError) Error() string {
	if e.RequestID == "" {
		return fmt.Sprintf("%s: outcome unknown: it was proposed, but had not applied when %s; it may still apply: see `metalog cluster status` (GET /v1/cluster/members) for whether it did",
			e.Change, whyUnknown(e.Err))
	}
	id := clip.String(e.RequestID)
	return fmt.Sprintf("request %s: outcome unknown: it was proposed, but had not applied when %s; the change may still apply. "+
		"Learn what happened with `metalog request %s` (GET /v1/requests/{id}), or send the request again with that request id: it applies at most once",
		id, whyUnknown(e.Err), id)
}

// Is matches ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// whyUnknown words why a proposal's wait ended before it applied.
func whyUnknown(err error) string {
	switch {
	case errors.Is(err, raftlog.ErrStopped):
		return "this member stopped"
	case errors.Is(err, raftlog.ErrNoLeader):
		return "the request deadline passed with no leader known (the leader lost its quorum?)"
	case errors.Is(err, raftlog.ErrLeaderChanged):
		return "the leader changed"
	case errors.Is(err, context.DeadlineExceeded):
		return "the request deadline passed (no quorum?)"
	case errors.Is(err, context.Canceled):
		return "the request was canceled"
	}
	return "the wait failed (" + err.Error() + ")"
}

// proposeError is the error of propose once an attempt failed with err
// and no retry follows: outcome unknown when entered (an earlier attempt
// may be in the log) or err says this one may be, otherwise err itself,
// which says nothing was proposed. after is the log index this member
// had applied before the first attempt.
func proposeError(requestID string, after uint64, entered bool, err error) error {
	if entered || errors.Is(err, raftlog.ErrOutcomeUnknown) {
		return &OutcomeUnknownError{RequestID: requestID, AppliedIndex: after, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, raftlog.ErrNoLeader) {
		return fmt.Errorf("%w: %w", ErrNotProposed, err)
	}
	return err
}

// membershipError is the error of a membership change (change names it)
// that failed with err, which raftlog's AddLearner or RemoveMember
// returned: an *OutcomeUnknownError when the change may still apply.
func membershipError(change string, err error) error {
	if errors.Is(err, raftlog.ErrOutcomeUnknown) {
		return &OutcomeUnknownError{Change: change, Err: err}
	}
	return fmt.Errorf("%s: %w", change, err)
}
