package apierr

import (
	"errors"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/retryinfo"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema/plan"
)

// Status is the gRPC status error the API answers err with (nil for nil):
// the code of its class (Code), its message, and the ErrorInfo detail
// (domain Domain) of its reason with the numbers its message names:
//
//   - an error the member words itself: no detail, whatever it wraps;
//   - a gRPC status (a peer's answer the member relays, or the API's
//     own): as it is;
//   - an outcome-unknown write: OUTCOME_UNKNOWN (with the request id and
//     applied index, or the change);
//   - the rate limit: RATE_LIMITED, and a RetryInfo of the delay; the
//     statement limit and the NOSPACE alarm: their reason and setting;
//   - a scoped role outside its keyspaces: SCOPE;
//   - an Execute that applied some statements before it failed:
//     PARTIALLY_APPLIED (the code stays the failure's);
//   - if_epoch, plans, history and at_epoch refusals, and a feed cut
//     for lagging (WATCH_LAGGING): their reasons
//     (typedInfo); a guardrail failure that applied nothing: GUARDRAIL;
//   - any other Unavailable answer: NOT_PROPOSED (nothing of the request
//     was proposed);
//   - otherwise no detail.
func Status(err error) error {
	if err == nil {
		return nil
	}
	if c, ok := worded(err); ok {
		return status.Error(c.Code(), err.Error())
	}
	if st, ok := status.FromError(err); ok {
		return st.Err()
	}
	c := Classify(err)
	msg := err.Error()
	switch c {
	case OutcomeUnknown:
		var oe *member.OutcomeUnknownError
		if errors.As(err, &oe) {
			return WithInfo(c.Code(), msg, ReasonOutcomeUnknown, outcomeInfo(oe))
		}
	case RateLimited:
		var rl *member.RateLimitError
		if errors.As(err, &rl) {
			return WithInfo(c.Code(), msg, ReasonRateLimited,
				map[string]string{"setting": "ddl_rate_per_identity", "identity": rl.Identity},
				retryinfo.New(rl.RetryAfter))
		}
	case NoSpace:
		return WithInfo(c.Code(), msg, ReasonNoSpace, map[string]string{"setting": "min_free_space_bytes"})
	case TooManyStatements:
		return WithInfo(c.Code(), msg, ReasonTooManyStatements, map[string]string{"setting": "max_statements_per_request"})
	case OutOfScope:
		return WithInfo(c.Code(), msg, ReasonScope, scopeInfo(err))
	}
	return refusalStatus(c, err)
}

// refusalStatus is the status of an error that no limit claimed: its
// class's code and message, with the ErrorInfo of a request that applied
// some of its statements before failing, of the refusals of typedInfo,
// of a guardrail failure that applied nothing, or of an Unavailable
// answer (NOT_PROPOSED).
func refusalStatus(c Class, err error) error {
	code, msg := c.Code(), err.Error()
	var se *metadata.StatementError
	if errors.As(err, &se) && se.Applied > 0 {
		return WithInfo(code, msg, ReasonPartiallyApplied, map[string]string{"applied": strconv.Itoa(se.Applied)})
	}
	if reason, md, ok := typedInfo(err); ok {
		return WithInfo(code, msg, reason, md)
	}
	var f *guardrails.Failure
	switch {
	case errors.As(err, &f):
		return WithInfo(code, msg, ReasonGuardrail, map[string]string{"guardrail": f.Guardrail})
	case code == codes.Unavailable:
		return WithInfo(code, msg, ReasonNotProposed, nil)
	}
	return status.Error(code, msg)
}

// outcomeInfo is the ErrorInfo metadata of an outcome-unknown write.
func outcomeInfo(oe *member.OutcomeUnknownError) map[string]string {
	md := map[string]string{"outcome": "unknown"}
	if oe.RequestID != "" {
		md["request_id"] = oe.RequestID
	}
	if oe.AppliedIndex != 0 {
		md["applied_index"] = strconv.FormatUint(oe.AppliedIndex, 10)
	}
	if oe.Change != "" {
		md["change"] = oe.Change
	}
	return md
}

// scopeInfo is the ErrorInfo metadata of a request outside the caller's
// scope: the keyspace and the caller's grants, when the error says them.
func scopeInfo(err error) map[string]string {
	md := map[string]string{}
	var se *member.ScopeError
	if errors.As(err, &se) {
		md["keyspace"] = se.Keyspace
		md["grants"] = se.Grants.String()
	}
	return md
}

// typedInfo returns the ErrorInfo reason and metadata of the member's
// errors that carry numbers a program reads (if_epoch, plans, history),
// and false for any other error.
func typedInfo(err error) (string, map[string]string, bool) {
	var (
		moved   *metadata.EpochMovedError
		refused *member.PlanRefusedError
		pruned  *metadata.PrunedError
		changed *member.HistoryChangedError
		ahead   *member.EpochAheadError
		lagging *member.WatchLaggingError
	)
	u := strconv.FormatUint
	switch {
	case errors.As(err, &refused):
		reason, md := planRefusedInfo(err, refused)
		return reason, md, true
	case errors.As(err, &moved):
		return ReasonIfEpochConflict, map[string]string{"if_epoch": u(moved.Want, 10), "epoch": u(moved.Have, 10)}, true
	case errors.As(err, &pruned):
		return ReasonHistoryPruned, map[string]string{
			"oldest_epoch": u(pruned.Oldest, 10), "from_epoch": u(pruned.From, 10), "history_retention_epochs": u(pruned.Retention, 10),
		}, true
	case errors.As(err, &changed):
		return ReasonHistoryChanged, map[string]string{
			"history_id":           member.FormatHistoryID(changed.Identity.HistoryID),
			"requested_history_id": member.FormatHistoryID(changed.Requested),
			"cluster_id":           clusterIDText(changed.Identity.ClusterID),
		}, true
	case errors.As(err, &lagging):
		return ReasonWatchLagging, map[string]string{
			"resume_epoch": u(lagging.Resume, 10), "epoch": u(lagging.Epoch, 10), "max_lag_epochs": u(lagging.MaxLag, 10),
		}, true
	case errors.As(err, &ahead):
		return ReasonEpochAhead, map[string]string{
			"at_epoch": u(ahead.At, 10), "epoch": u(ahead.Epoch, 10), "history_id": member.FormatHistoryID(ahead.HistoryID),
		}, true
	}
	return "", nil, false
}

// planRefusedInfo is the ErrorInfo of a refused plan: GUARDRAIL when a
// guardrail refused a planned statement, PLAN_REFUSED otherwise.
func planRefusedInfo(err error, pe *member.PlanRefusedError) (string, map[string]string) {
	md := map[string]string{}
	if pe.Statement != "" {
		md["statement"], md["position"] = clip.String(pe.Statement), strconv.Itoa(pe.Position)
	}
	var f *guardrails.Failure
	if errors.As(err, &f) {
		md["guardrail"] = f.Guardrail
		return ReasonGuardrail, md
	}
	var imp *plan.ImpossibleError
	if errors.As(err, &imp) && len(imp.Changes) > 0 {
		md["object"], md["reason"] = imp.Changes[0].Object, imp.Changes[0].Reason
		md["changes"] = strconv.Itoa(len(imp.Changes))
	}
	return ReasonPlanRefused, md
}

// clusterIDText is a cluster id as responses carry it: "" for a cluster
// without one.
func clusterIDText(id uint64) string {
	if id == 0 {
		return ""
	}
	return member.FormatID(id)
}

// WithInfo returns the status of code and msg with an ErrorInfo detail
// (domain Domain) of reason and md, and the extra details.
func WithInfo(code codes.Code, msg, reason string, md map[string]string, extra ...protoadapt.MessageV1) error {
	st := status.New(code, msg)
	details := append([]protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: Domain, Metadata: md}}, extra...)
	if with, err := st.WithDetails(details...); err == nil {
		st = with
	}
	return st.Err()
}

// ReasonOf returns the reason of the metalog ErrorInfo detail of a gRPC
// status error, "" without one.
func ReasonOf(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return ""
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == Domain {
			return info.GetReason()
		}
	}
	return ""
}
