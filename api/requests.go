package api

import (
	"context"
	"strconv"

	"google.golang.org/grpc/codes"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// The ErrorInfo reasons of a write's answers that say what became of it.
// An outcome-unknown answer (DeadlineExceeded, HTTP 504) carries
// reasonOutcomeUnknown with metadata "outcome": "unknown", "request_id"
// (the server's own "server-..." id when the request came without one),
// and "applied_index" (the request cannot apply at or before that log
// index; GetRequestOutcome's after_index), or "change" for a membership
// change, which has no request id. An Unavailable answer of the member
// carries reasonNotProposed: nothing of the request was proposed, so a
// client may send it anywhere again, and knows it is not waiting in some
// leader's log.
const (
	reasonOutcomeUnknown = "OUTCOME_UNKNOWN"
	reasonNotProposed    = "NOT_PROPOSED"
)

// outcomeUnknown is the status of a write whose change may still apply:
// DeadlineExceeded with the ErrorInfo of reasonOutcomeUnknown.
func outcomeUnknown(err error, oe *member.OutcomeUnknownError) error {
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
	return withInfo(codes.DeadlineExceeded, err.Error(), reasonOutcomeUnknown, md)
}

// GetRequestOutcome answers what became of a request id, as the member
// remembers it after a linearizable read; a scoped reader is told only of
// requests it could see in the history.
func (s *service) GetRequestOutcome(ctx context.Context, req *pb.GetRequestOutcomeRequest) (*pb.GetRequestOutcomeResponse, error) {
	out, err := s.m.RequestOutcome(ctx, member.RequestQuery{ID: req.GetRequestId(), AfterIndex: req.GetAfterIndex(), Visible: visible(ctx)})
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.GetRequestOutcomeResponse{
		RequestId: out.ID, State: out.State, AsOfEpoch: out.Epoch, AsOfIndex: out.Index,
		Remembered: uint64(out.Remembered), MaxRemembered: metadata.MaxRememberedRequests,
		OldestEpoch: out.OldestEpoch, OldestIndex: out.OldestIndex, Message: out.Message,
		Results: []*pb.StatementResult{}, Warnings: []string{},
	}
	if out.State != member.RequestApplied {
		return resp, nil
	}
	rec := out.Record
	applied := executeResponse(rec.Outcome)
	resp.Epoch, resp.Index, resp.Results, resp.Warnings = rec.Outcome.Epoch, rec.Index, applied.Results, applied.Warnings
	if rec.Err != nil {
		resp.ErrorCode, resp.Error = member.Code(rec.Err).String(), rec.Err.Error()
	}
	return resp, nil
}
