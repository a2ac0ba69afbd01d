package member

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// CheckCluster runs the agreement check in one round: the member list with
// every member's status and digest history (one NodeStatus call per other
// member, whatever the number of tables), then a comparison of each member
// with the reference member (the leader when it answered).
func (ms *membership) CheckCluster(ctx context.Context) (*pb.CheckClusterResponse, error) {
	list, err := ms.ListMembers(ctx)
	if err != nil {
		return nil, err
	}
	resp := &pb.CheckClusterResponse{Agreement: true, Rpcs: uint32(len(list.Members) - 1)}
	var ref *pb.Member
	for _, pm := range list.Members {
		if pm.Reachable && (ref == nil || pm.Leader || (!ref.Leader && pm.Epoch > ref.Epoch)) {
			ref = pm
		}
	}
	if ref != nil {
		resp.Reference = ref.Name
	}
	for _, pm := range list.Members {
		c := &pb.MemberCheck{Name: pm.Name, Id: pm.Id, Epoch: pm.Epoch, Digest: pm.Digest, AppliedIndex: pm.AppliedIndex}
		switch {
		case !pm.Reachable:
			c.State, c.Detail = "unreachable", pm.Error
			resp.Agreement = false
		case pm == ref:
			c.State = "agrees"
		default:
			c.State, c.DivergedSinceEpoch, c.Detail = compareHistories(ref, pm)
			if c.State == "diverged" {
				resp.Agreement = false
			}
		}
		resp.Members = append(resp.Members, c)
	}
	return resp, nil
}

// compareHistories compares member pm with the reference at the newest
// epoch both remember: equal digests there mean pm agrees (or is only
// behind); different ones mean pm diverged, at the oldest shared epoch that
// differs.
func compareHistories(ref, pm *pb.Member) (state string, since uint64, detail string) {
	refAt := map[uint64]string{}
	for _, e := range ref.History {
		refAt[e.Epoch] = e.Digest
	}
	refAt[ref.Epoch] = ref.Digest
	var newest, oldestDiff uint64
	shared, differs := false, false
	hist := append(pm.History, &pb.EpochDigest{Epoch: pm.Epoch, Digest: pm.Digest})
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
		return "diverged", oldestDiff, fmt.Sprintf("its schema differs from %s's at epoch %d; run `metalog cluster repair %s`", ref.Name, oldestDiff, pm.Name)
	case !shared:
		return "behind", 0, fmt.Sprintf("no epoch in common with %s's recent history (at %d, reference at %d)", ref.Name, pm.Epoch, ref.Epoch)
	case pm.Epoch < ref.Epoch:
		return "behind", 0, fmt.Sprintf("at epoch %d, reference at %d", pm.Epoch, ref.Epoch)
	}
	return "agrees", 0, ""
}

// stillDiverged returns an error when the check says member name still
// diverges from the reference member after its rebuild.
func stillDiverged(check *pb.CheckClusterResponse, name string) error {
	for _, mc := range check.GetMembers() {
		if mc.GetName() != name || mc.GetState() != "diverged" {
			continue
		}
		return status.Errorf(codes.FailedPrecondition,
			"repair member %s: rebuilt from its own log and newest snapshot, it still differs from %s at epoch %d, so that snapshot already holds the divergence; "+
				"replace the member instead: `metalog cluster remove %s`, delete its data dir, `metalog cluster add` it again and start it with --join (it is then rebuilt from the leader's snapshot)",
			name, check.GetReference(), mc.GetDivergedSinceEpoch(), name)
	}
	return nil
}
