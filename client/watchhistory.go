package client

import (
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// A watch remembers the history its epochs count in (the history_id of
// the request, or of the first message that has one) and names it on
// every resume, so that a member of another history (the cluster was
// restored from a backup or forced into a new cluster meanwhile) refuses
// it with HISTORY_CHANGED rather than going on with epochs that name
// other changes. A message of another history ends the watch the same way
// (a member that does not check the request's history id).

// checkHistory notes the history id of m, received from endpoint i, and
// returns the HISTORY_CHANGED error that ends the watch when it is not
// the watch's.
func (s *watchStream) checkHistory(m *pb.WatchResponse, i int) error {
	switch id := m.GetHistoryId(); {
	case id == "" || id == s.historyID:
		return nil
	case s.historyID == "":
		s.historyID = id
		return nil
	default:
		return historyChanged(s.historyID, m, s.c.eps[i].addr)
	}
}

// historyChanged is the error of a watch of history known that received
// m, of another history, from the member at addr: as the member would
// have refused it.
func historyChanged(known string, m *pb.WatchResponse, addr string) error {
	msg := fmt.Sprintf("watch: the member at %s answers for history %s (cluster %s), not for history %s that the watch's epochs count in: "+
		"the cluster was restored from a backup or forced into a new cluster (--force-new-cluster), so its epoch numbers may name other changes: "+
		"read the schema again and follow from its epoch", addr, m.GetHistoryId(), m.GetClusterId(), known)
	st := status.New(codes.FailedPrecondition, msg)
	md := map[string]string{"history_id": m.GetHistoryId(), "requested_history_id": known, "cluster_id": m.GetClusterId()}
	if with, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reasonHistoryChanged, Domain: errorDomain, Metadata: md}); err == nil {
		st = with
	}
	return st.Err()
}
