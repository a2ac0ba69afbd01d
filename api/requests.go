package api

import (
	"context"

	"github.com/metalog/metalog/api/apierr"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// GetRequestOutcome answers what became of a request id, as the member
// remembers it after a linearizable read; a scoped reader is told only of
// requests it could see in the history.
func (s *service) GetRequestOutcome(ctx context.Context, req *pb.GetRequestOutcomeRequest) (*pb.GetRequestOutcomeResponse, error) {
	out, err := s.r.RequestOutcome(ctx, member.RequestQuery{ID: req.GetRequestId(), AfterIndex: req.GetAfterIndex(), Visible: visible(ctx)})
	if err != nil {
		return nil, toStatus(err)
	}
	msg := out.Message
	if msg == "" && out.State == member.RequestApplied && out.Record.Err != nil {
		// The member leaves the message of a failed request to the
		// listener: it names the error's code.
		msg = out.FailedMessage(apierr.Code(out.Record.Err).String())
	}
	resp := &pb.GetRequestOutcomeResponse{
		RequestId: out.ID, State: out.State, AsOfEpoch: out.Epoch, AsOfIndex: out.Index,
		Remembered: uint64(out.Remembered), MaxRemembered: metadata.MaxRememberedRequests,
		OldestEpoch: out.OldestEpoch, OldestIndex: out.OldestIndex, Message: msg,
		Results: []*pb.StatementResult{}, Warnings: []string{},
	}
	if out.State != member.RequestApplied {
		return resp, nil
	}
	rec := out.Record
	applied := executeResponse(rec.Outcome)
	resp.Epoch, resp.Index, resp.Results, resp.Warnings = rec.Outcome.Epoch, rec.Index, applied.Results, applied.Warnings
	if rec.Err != nil {
		resp.ErrorCode, resp.Error = apierr.Code(rec.Err).String(), rec.Err.Error()
	}
	return resp, nil
}
