package api

import (
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema/plan"
)

// The ErrorInfo reasons (domain "metalog") of the answers a program
// branches on beside those of refusals.go, httperrors.go and requests.go:
// one reason per meaning, so that a code shared by several meanings
// (FailedPrecondition, OutOfRange) is told apart by its reason, and the
// numbers the message names are in the metadata too. The client package
// has a sentinel for each (client/errors.go) and the README's "Requests
// and errors" lists them with their codes and HTTP statuses.
const (
	// reasonIfEpochConflict: FailedPrecondition, an Execute whose if_epoch
	// was not the schema's epoch when it applied; nothing applied.
	// Metadata "if_epoch" and "epoch" (the schema's).
	reasonIfEpochConflict = "IF_EPOCH_CONFLICT"
	// reasonPlanRefused: FailedPrecondition, a plan that cannot be made
	// (changes that cannot be made in place: metadata "object" and
	// "reason" of the first, "changes" how many) or that would be
	// refused at a statement (metadata "statement", clipped, and
	// "position", 1-based). A plan refused by a guardrail is GUARDRAIL,
	// with "statement" and "position" too.
	reasonPlanRefused = "PLAN_REFUSED"
	// reasonHistoryPruned: OutOfRange, a history, watch or at_epoch read
	// reaching past the oldest epoch kept. Metadata "oldest_epoch" (the
	// history reaches back to the schema at the epoch before it),
	// "from_epoch" and "history_retention_epochs".
	reasonHistoryPruned = "HISTORY_PRUNED"
	// reasonHistoryChanged: FailedPrecondition, a watch or history read
	// naming another history id than the cluster's. Metadata
	// "history_id" (the cluster's), "requested_history_id" and
	// "cluster_id".
	reasonHistoryChanged = "HISTORY_CHANGED"
	// reasonEpochAhead: OutOfRange, an at_epoch read of an epoch the
	// cluster has not made. Metadata "at_epoch", "epoch" (the
	// cluster's) and "history_id".
	reasonEpochAhead = "EPOCH_AHEAD"
)

// typedStatus returns the status of code for the member's errors that
// carry an ErrorInfo of this file, and false for any other error.
func typedStatus(code codes.Code, err error) (error, bool) {
	var (
		moved   *metadata.EpochMovedError
		refused *member.PlanRefusedError
		pruned  *metadata.PrunedError
		changed *member.HistoryChangedError
		ahead   *member.EpochAheadError
	)
	u := strconv.FormatUint
	switch {
	case errors.As(err, &refused):
		return planRefusedStatus(code, err, refused), true
	case errors.As(err, &moved):
		return withInfo(code, err.Error(), reasonIfEpochConflict, map[string]string{"if_epoch": u(moved.Want, 10), "epoch": u(moved.Have, 10)}), true
	case errors.As(err, &pruned):
		return withInfo(code, err.Error(), reasonHistoryPruned, map[string]string{
			"oldest_epoch": u(pruned.Oldest, 10), "from_epoch": u(pruned.From, 10), "history_retention_epochs": u(pruned.Retention, 10),
		}), true
	case errors.As(err, &changed):
		return withInfo(code, err.Error(), reasonHistoryChanged, map[string]string{
			"history_id":           member.FormatHistoryID(changed.Identity.HistoryID),
			"requested_history_id": member.FormatHistoryID(changed.Requested),
			"cluster_id":           clusterIDText(changed.Identity.ClusterID),
		}), true
	case errors.As(err, &ahead):
		return withInfo(code, err.Error(), reasonEpochAhead, map[string]string{
			"at_epoch": u(ahead.At, 10), "epoch": u(ahead.Epoch, 10), "history_id": member.FormatHistoryID(ahead.HistoryID),
		}), true
	}
	return nil, false
}

// planRefusedStatus is the status of a refused plan: GUARDRAIL when a
// guardrail refused a planned statement, PLAN_REFUSED otherwise.
func planRefusedStatus(code codes.Code, err error, pe *member.PlanRefusedError) error {
	md := map[string]string{}
	if pe.Statement != "" {
		md["statement"], md["position"] = clip.String(pe.Statement), strconv.Itoa(pe.Position)
	}
	var f *guardrails.Failure
	if errors.As(err, &f) {
		md["guardrail"] = f.Guardrail
		return withInfo(code, err.Error(), reasonGuardrail, md)
	}
	var imp *plan.ImpossibleError
	if errors.As(err, &imp) && len(imp.Changes) > 0 {
		md["object"], md["reason"] = imp.Changes[0].Object, imp.Changes[0].Reason
		md["changes"] = strconv.Itoa(len(imp.Changes))
	}
	return withInfo(code, err.Error(), reasonPlanRefused, md)
}

// clusterIDText is a cluster id as responses carry it: "" for a cluster
// without one.
func clusterIDText(id uint64) string {
	if id == 0 {
		return ""
	}
	return member.FormatID(id)
}
