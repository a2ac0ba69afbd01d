package api

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
)

// historyTimes sets the time range of q from req's since and until,
// refusing a timestamp that is not one (out of range or malformed).
func historyTimes(q *member.HistoryQuery, req *pb.HistoryRequest) error {
	for _, f := range []struct {
		name string
		ts   *timestamppb.Timestamp
		to   *time.Time
	}{{"since", req.GetSince(), &q.Since}, {"until", req.GetUntil(), &q.Until}} {
		if f.ts == nil {
			continue
		}
		if err := f.ts.CheckValid(); err != nil {
			return status.Errorf(codes.InvalidArgument, "history: %s: %v; give a time as RFC 3339 text, e.g. 2026-12-01T10:00:00Z", f.name, err)
		}
		*f.to = f.ts.AsTime()
	}
	return nil
}
