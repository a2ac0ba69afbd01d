package member

import (
	"context"
	"fmt"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/metadata"
)

// The states of a RequestOutcome.
const (
	// RequestApplied: the log applied the request; Record holds its
	// result (an error too, when it failed as it applied).
	RequestApplied = "applied"
	// RequestNotApplied: the request had not applied as of the answer's
	// epoch, and would be remembered if it had. A proposal of it still in
	// flight can apply later; sending it again under its id settles it.
	RequestNotApplied = "not_applied"
	// RequestNotKnown: the id is not among those the cluster remembers,
	// which may have forgotten it: it never applied, or applied before
	// the oldest one remembered.
	RequestNotKnown = "not_known"
	// RequestNotVisible: a scoped reader is not shown a request that it
	// could not see in the history (another keyspace, a guardrail change,
	// or a failure), so any id it is not shown gets this answer.
	RequestNotVisible = "not_visible"
)

// RequestQuery asks what became of a request id.
type RequestQuery struct {
	// ID is the request id of an Execute or a guardrail change.
	ID string
	// AfterIndex, when not 0, is a log index the request cannot have
	// applied at or before (OutcomeUnknownError.AppliedIndex): an id
	// forgotten since cannot be it, so its absence says not applied.
	AfterIndex uint64
	// Visible, when set, is a scoped reader's scope (as for HistoryQuery):
	// it is told only of requests whose every statement applied in a
	// keyspace it reports true for.
	Visible func(keyspace string) bool
}

// RequestOutcome is what became of a request id, as of a linearizable
// read of the member's metadata.
type RequestOutcome struct {
	// ID is the request id asked about.
	ID string
	// State is RequestApplied, RequestNotApplied, RequestNotKnown or
	// RequestNotVisible.
	State string
	// Record is the remembered result when State is RequestApplied: the
	// log index it applied at, its outcome (epoch, results without their
	// statement text, warnings) and its error.
	Record metadata.RequestRecord
	// Epoch and Index are the metadata's epoch and applied log index the
	// answer holds as of.
	Epoch, Index uint64
	// Remembered is how many request ids the cluster remembers, at most
	// metadata.MaxRememberedRequests.
	Remembered int
	// OldestEpoch and OldestIndex are the epoch and log index of the
	// oldest request remembered, when the cluster may have forgotten older
	// ones (Remembered is at the limit); zero otherwise.
	OldestEpoch, OldestIndex uint64
	// Message says in one or two sentences what the answer means and, for
	// an answer that is not final, how to settle it. It is empty for a
	// request that applied with an error (Record.Err): that message names
	// the error's code, which is the listener's to give (FailedMessage).
	Message string
}

// FailedMessage is the Message of a request that applied with an error,
// naming the error's code as the listener answers it: that it applied
// in part, or that nothing of it applied and a retry gets the same
// answer.
func (o RequestOutcome) FailedMessage(code string) string {
	id, rec := clip.Quote(o.ID), o.Record
	if len(rec.Outcome.Results) > 0 {
		return fmt.Sprintf("request %s applied in part at epoch %d (log index %d): the statements listed applied, then one failed: %s: %v",
			id, rec.Outcome.Epoch, rec.Index, code, rec.Err)
	}
	return fmt.Sprintf("request %s failed when the log applied it at index %d (epoch %d, unchanged): %s: %v; nothing of it applied, and a retry under this id gets the same answer",
		id, rec.Index, rec.Outcome.Epoch, code, rec.Err)
}

// RequestOutcome answers what became of request id q.ID after a
// linearizable read: applied (with its result), not applied as of the
// member's epoch, or not known (the cluster remembers the last
// metadata.MaxRememberedRequests ids and may have forgotten it). A scoped
// reader (q.Visible) is told only of requests it could see in the history.
func (r *Reads) RequestOutcome(ctx context.Context, q RequestQuery) (RequestOutcome, error) {
	if q.ID == "" {
		return RequestOutcome{}, &ArgumentError{Field: "request_id", Msg: "request_id: empty; give the id a request was sent with (the outcome-unknown answer names it)"}
	}
	if err := r.consistent(ctx, Linearizable); err != nil {
		return RequestOutcome{}, err
	}
	return requestOutcome(r.machine.Current(), q), nil
}

// requestOutcome is RequestOutcome on the metadata cur.
func requestOutcome(cur *metadata.ClusterMetadata, q RequestQuery) RequestOutcome {
	out := RequestOutcome{ID: q.ID, Epoch: cur.Epoch, Index: cur.Index, Remembered: cur.Requests.Len()}
	full := out.Remembered >= metadata.MaxRememberedRequests
	_, oldest, ok := cur.Requests.Oldest()
	if full && ok {
		out.OldestEpoch, out.OldestIndex = oldest.Outcome.Epoch, oldest.Index
	}
	id := clip.Quote(q.ID)
	rec, found := cur.Requests.Get(q.ID)
	switch {
	case found && recordVisible(rec, q.Visible):
		out.State, out.Record = RequestApplied, rec
		if rec.Err == nil {
			out.Message = fmt.Sprintf("request %s applied at epoch %d (log index %d); a retry under this id is answered with this result", id, rec.Outcome.Epoch, rec.Index)
		}
	case q.Visible != nil:
		out.State = RequestNotVisible
		out.Message = fmt.Sprintf("no request %s that a reader of your keyspaces may see had applied as of epoch %d (log index %d): "+
			"it had not applied, was forgotten, or changed keyspaces outside your scope, changed guardrails, or failed, which a scoped reader is not shown",
			id, cur.Epoch, cur.Index)
	case !full || !ok || (q.AfterIndex != 0 && q.AfterIndex >= oldest.Index):
		out.State = RequestNotApplied
		out.Message = fmt.Sprintf("request %s had not applied as of epoch %d (log index %d); the cluster would remember it if it had. "+
			"A proposal of it still in flight (on a leader waiting for its quorum) can still apply; to settle it, send the request again with this id: it applies at most once",
			id, cur.Epoch, cur.Index)
	default:
		out.State = RequestNotKnown
		out.Message = fmt.Sprintf("request %s is not among the %d request ids the cluster remembers, which go back to epoch %d (log index %d): "+
			"it never applied, or it applied before that and was forgotten",
			id, out.Remembered, oldest.Outcome.Epoch, oldest.Index)
	}
	return out
}

// recordVisible reports whether a reader that sees the keyspaces visible
// reports true for (nil: all) is told of the request rec remembers: one
// whose every statement applied in a keyspace it sees. A failure, a
// guardrail change (no statements) or a statement about no keyspace stays
// hidden from a scoped reader: their messages may name other keyspaces.
func recordVisible(rec metadata.RequestRecord, visible func(keyspace string) bool) bool {
	if visible == nil {
		return true
	}
	if rec.Err != nil || len(rec.Outcome.Results) == 0 {
		return false
	}
	for _, r := range rec.Outcome.Results {
		if r.Result.Keyspace == "" || !visible(r.Result.Keyspace) {
			return false
		}
	}
	return true
}
