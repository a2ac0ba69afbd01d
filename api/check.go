package api

import (
	"context"
	"fmt"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// CheckCluster runs the agreement check in one round: the member list with
// every member's status and digest history (one NodeStatus call per other
// member, whatever the number of tables), then a comparison of each member
// with the reference member (the leader when it answered).
func (s *service) CheckCluster(ctx context.Context, _ *pb.CheckClusterRequest) (*pb.CheckClusterResponse, error) {
	list, err := s.ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		return nil, err
	}
	resp := &pb.CheckClusterResponse{Agreement: true, Rpcs: uint32(len(list.Members) - 1)}
	var ref *pb.Member
	for _, m := range list.Members {
		if m.Reachable && (ref == nil || m.Leader || (!ref.Leader && m.Epoch > ref.Epoch)) {
			ref = m
		}
	}
	if ref != nil {
		resp.Reference = ref.Name
	}
	for _, m := range list.Members {
		c := &pb.MemberCheck{Name: m.Name, Id: m.Id, Epoch: m.Epoch, Digest: m.Digest, AppliedIndex: m.AppliedIndex}
		switch {
		case !m.Reachable:
			c.State, c.Detail = "unreachable", m.Error
			resp.Agreement = false
		case m == ref:
			c.State = "agrees"
		default:
			c.State, c.DivergedSinceEpoch, c.Detail = compareHistories(ref, m)
			if c.State == "diverged" {
				resp.Agreement = false
			}
		}
		resp.Members = append(resp.Members, c)
	}
	return resp, nil
}

// compareHistories compares member m with the reference at the newest
// epoch both remember: equal digests there mean m agrees (or is only
// behind); different ones mean m diverged, at the oldest shared epoch that
// differs.
func compareHistories(ref, m *pb.Member) (state string, since uint64, detail string) {
	refAt := map[uint64]string{}
	for _, e := range ref.History {
		refAt[e.Epoch] = e.Digest
	}
	refAt[ref.Epoch] = ref.Digest
	var newest, oldestDiff uint64
	shared, differs := false, false
	hist := append(m.History, &pb.EpochDigest{Epoch: m.Epoch, Digest: m.Digest})
	for _, e := range hist {
		d, ok := refAt[e.Epoch]
		if !ok {
			continue
		}
		if !shared || e.Epoch > newest {
			newest = e.Epoch
		}
		shared = true
		if d != e.Digest && (!differs || e.Epoch < oldestDiff) {
			oldestDiff, differs = e.Epoch, true
		}
	}
	switch {
	case differs:
		return "diverged", oldestDiff, fmt.Sprintf("its schema differs from %s's at epoch %d; run `metalog cluster repair %s`", ref.Name, oldestDiff, m.Name)
	case !shared:
		return "behind", 0, fmt.Sprintf("no epoch in common with %s's recent history (at %d, reference at %d)", ref.Name, m.Epoch, ref.Epoch)
	case m.Epoch < ref.Epoch:
		return "behind", 0, fmt.Sprintf("at epoch %d, reference at %d", m.Epoch, ref.Epoch)
	}
	return "agrees", 0, ""
}
