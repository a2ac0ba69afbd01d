package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/connfail"
)

// ErrOutcomeUnknown is matched (errors.Is) by the error of a change
// (Execute, SetGuardrails, AddMember, RemoveMember) that may still apply:
// an *OutcomeUnknownError. Its gRPC code is DeadlineExceeded.
var ErrOutcomeUnknown = errors.New("client: outcome unknown: the change may still apply")

// The ErrorInfo (domain "metalog") the members put on the answers that
// say what became of a change.
const (
	errorDomain = "metalog"
	// reasonOutcomeUnknown: DeadlineExceeded, the member proposed the
	// change and it may still apply; metadata "request_id",
	// "applied_index", or "change" for a membership change.
	reasonOutcomeUnknown = "OUTCOME_UNKNOWN"
	// reasonNotProposed: Unavailable, the member proposed nothing.
	reasonNotProposed = "NOT_PROPOSED"
)

// OutcomeUnknownError is the error of a change that may still apply: a
// member answered that it proposed it and could not wait for it to apply
// (OUTCOME_UNKNOWN), or an attempt failed after the request was sent (the
// connection reset, the member killed, the deadline passed while waiting
// for the answer), and no later attempt settled it within the call's
// deadline. Nothing says yet whether it will apply.
//
// Learn what happened with RequestOutcome(ctx, RequestID), or send the
// request again with the same request id: the cluster applies a request id
// at most once and answers a retry of an applied one with its first
// result. A membership change has no request id: ListMembers shows
// whether it applied, and doing it again answers AlreadyExists (add) or
// NotFound (remove) once it did.
type OutcomeUnknownError struct {
	// RequestID is the request's id (the one the Client made when the
	// request had none); empty for a membership change.
	RequestID string
	// AppliedIndex, when not 0, is a log index the change cannot have
	// applied at or before (the member's answer says so): pass it as
	// GetRequestOutcomeRequest.AfterIndex.
	AppliedIndex uint64
	// Change names a membership change ("add member n4").
	Change string
	// Endpoint is the member the attempt that may have applied went to.
	Endpoint string
	// Err is that attempt's error: the member's OUTCOME_UNKNOWN answer,
	// or the failure after the request was sent.
	Err error
}

// Error says what is unknown, why, and how to learn what happened.
func (e *OutcomeUnknownError) Error() string {
	why := status.Convert(e.Err).Message()
	if info := outcomeInfo(e.Err); info != nil {
		// The member's own answer, which says all of it.
		return fmt.Sprintf("%s (from %s)", why, e.Endpoint)
	}
	if e.RequestID == "" {
		return fmt.Sprintf("%s: outcome unknown: it was sent to %s, whose answer never came (%s), and no later attempt settled it; "+
			"the change may still apply: see `metalog cluster status` for whether it did", e.Change, e.Endpoint, why)
	}
	return fmt.Sprintf("request %s: outcome unknown: it was sent to %s, whose answer never came (%s), and no later attempt settled it; "+
		"the change may still apply. Learn what happened with `metalog request %s` (Client.RequestOutcome), "+
		"or send the request again with that request id: it applies at most once", e.RequestID, e.Endpoint, why, e.RequestID)
}

// Is matches ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns the error of the attempt that may have applied.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// GRPCStatus makes the error's gRPC code DeadlineExceeded (status.Code),
// whatever the attempt's was, with the member's ErrorInfo when it sent
// one.
func (e *OutcomeUnknownError) GRPCStatus() *status.Status {
	st := status.New(codes.DeadlineExceeded, e.Error())
	info := outcomeInfo(e.Err)
	if info == nil {
		md := map[string]string{"outcome": "unknown"}
		if e.RequestID != "" {
			md["request_id"] = e.RequestID
		}
		info = &errdetails.ErrorInfo{Reason: reasonOutcomeUnknown, Domain: errorDomain, Metadata: md}
	}
	if with, err := st.WithDetails(info); err == nil {
		st = with
	}
	return st
}

// errorInfo returns the metalog ErrorInfo of err, nil without one.
func errorInfo(err error) *errdetails.ErrorInfo {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info
		}
	}
	return nil
}

// outcomeInfo returns the OUTCOME_UNKNOWN ErrorInfo of a member's answer,
// nil for any other error.
func outcomeInfo(err error) *errdetails.ErrorInfo {
	if status.Code(err) != codes.DeadlineExceeded {
		return nil
	}
	if info := errorInfo(err); info.GetReason() == reasonOutcomeUnknown {
		return info
	}
	return nil
}

// unsettled is what a call that changes the cluster learnt of its
// attempts: whether one may have applied (cause, from endpoint) while no
// later one settled it. A nil *unsettled is a call that changes nothing
// (a read), whose failures say nothing about an outcome.
type unsettled struct {
	requestID string // the request's id; "" for a membership change
	change    string // names a membership change
	cause     error  // the failure after which the change may have applied
	endpoint  string
}

// mayHaveApplied notes err, the error of an attempt on endpoint addr, and
// reports whether the change may have applied with it: the member said so
// (OUTCOME_UNKNOWN), or the call failed after its request was sent
// (Unavailable other than the member's own NOT_PROPOSED answer, or the
// deadline or a cancellation while waiting for the answer). A refused or
// failed connection, or a member's answer, says it did not.
func (u *unsettled) mayHaveApplied(addr string, err error) bool {
	if u == nil {
		return false
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
	default:
		return false
	}
	if outcomeInfo(err) == nil {
		if errorInfo(err).GetReason() == reasonNotProposed || connfail.NotSent(err) {
			return false
		}
		if kind, _ := connfail.Of(err); kind == connfail.NotGRPC {
			return false
		}
	}
	if u.cause == nil || outcomeInfo(err) != nil {
		// Keep the first failure, unless a member's own answer says more.
		u.cause, u.endpoint = err, addr
	}
	return true
}

// minRetryLeft is the least time left for a change's retry to start. A
// member shortens a client's deadline by up to 200 ms so as to answer
// before it; with less left, the answer would hardly come in time, and an
// attempt cut off by the deadline after its request was sent leaves the
// outcome unknown, even when every member had answered that it proposed
// nothing.
const minRetryLeft = 300 * time.Millisecond

// tooLate reports whether a change's next attempt should not start: too
// little of ctx's time is left for it (minRetryLeft).
func (u *unsettled) tooLate(ctx context.Context) bool {
	if u == nil {
		return false
	}
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < minRetryLeft
}

// settled is the call's answer once an attempt answered err (nil: it
// succeeded): err itself, unless an earlier attempt may have applied and
// this answer cannot settle it. A success settles it, and so does an
// answer about the request itself (the first result of a retry, or the
// error its statements meet now); a refusal that looked at nothing of the
// request (a rate limit, the NOSPACE alarm, authentication) does not.
func (u *unsettled) settled(err error) error {
	if u == nil || u.cause == nil || err == nil {
		return err
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.AlreadyExists, codes.NotFound, codes.FailedPrecondition, codes.OutOfRange:
		return err
	}
	return u.err()
}

// or is the call's error when no attempt answered: the outcome unknown if
// one may have applied, otherwise err.
func (u *unsettled) or(err error) error {
	if u == nil || u.cause == nil {
		return err
	}
	return u.err()
}

// err is the *OutcomeUnknownError of the attempt that may have applied.
func (u *unsettled) err() error {
	e := &OutcomeUnknownError{RequestID: u.requestID, Change: u.change, Endpoint: u.endpoint, Err: u.cause}
	if info := outcomeInfo(u.cause); info != nil {
		if id := info.GetMetadata()["request_id"]; id != "" {
			e.RequestID = id
		}
		e.AppliedIndex, _ = strconv.ParseUint(info.GetMetadata()["applied_index"], 10, 64)
	}
	return e
}

// GetRequestOutcome answers what became of a request id (see
// RequestOutcome). It is a read: retried on the next endpoint like
// GetSchema.
func (c *Client) GetRequestOutcome(ctx context.Context, req *pb.GetRequestOutcomeRequest, opts ...grpc.CallOption) (*pb.GetRequestOutcomeResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.GetRequestOutcome, req, opts)
}

// RequestOutcome asks the cluster what became of the request id, after a
// linearizable read: State "applied" (Epoch, Index, Results, Warnings, and
// Error when it failed as it applied), "not_applied" as of AsOfEpoch (a
// proposal still in flight can apply later: send the request again under
// its id to settle it), "not_known" (the cluster remembers only the most
// recent ids, back to OldestEpoch, and may have forgotten it), or
// "not_visible" for a reader scoped to keyspaces. Message says it in
// words. For the id of an *OutcomeUnknownError with an AppliedIndex, call
// GetRequestOutcome with it as AfterIndex: an id the cluster would still
// remember had it applied is then "not_applied" rather than "not_known".
func (c *Client) RequestOutcome(ctx context.Context, id string) (*pb.GetRequestOutcomeResponse, error) {
	return c.GetRequestOutcome(ctx, &pb.GetRequestOutcomeRequest{RequestId: id})
}
