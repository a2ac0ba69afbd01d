package member

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/raftlog"
)

// RepairMember rebuilds the metadata of the member named by want (a name or
// a hex id) from that member's own raft log and newest snapshot: this
// member directly, any other through PeerService.Repair on its peer
// address, within the request's deadline. It is for a member whose schema
// store went wrong (its digest differs at the same epoch); the log itself
// must be good. Afterwards it checks the cluster again and fails loudly,
// with the steps to replace the member, when the member still differs.
func (ms *membership) RepairMember(ctx context.Context, want string) (*pb.RepairMemberResponse, error) {
	if want == "" {
		return nil, status.Error(codes.InvalidArgument, "repair member: the member's name or id is required")
	}
	found, info, infoErr, ok := ms.find(want)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "repair member %s: no member has that name or id", want)
	}
	ctx, cancel := withTimeout(ctx, ms.timeout)
	defer cancel()
	if found.ID == ms.id {
		return ms.repairSelf(ctx, FormatID(found.ID))
	}
	if infoErr != nil {
		return nil, status.Errorf(codes.Unavailable, "repair member %s: no usable peer address: %v", want, infoErr)
	}
	resp, err := askRepair(ms.peerContext(ctx), ms.peerDial, info.PeerAddr, FormatID(found.ID))
	if err != nil {
		st := status.Convert(err)
		if st.Code() == codes.Unavailable {
			return nil, status.Errorf(codes.Unavailable, "repair member %s: cannot reach it at %s: %s", info.Name, info.PeerAddr, st.Message())
		}
		return nil, st.Err() // the member's own answer names it
	}
	// A rebuild from the member's own log and snapshot cannot fix a member
	// whose newest snapshot already holds the divergence: check, and say
	// so loudly rather than report a repair that did not repair.
	check, err := ms.CheckCluster(ctx)
	if err == nil {
		err = stillDiverged(check, resp.GetName())
	}
	if err != nil {
		ms.logger.Error("repair did not bring the member back into agreement", "name", resp.GetName(), "err", err)
		return nil, err
	}
	ms.logger.Info("member repaired", "name", resp.GetName(), "id", FormatID(found.ID), "epoch", resp.GetEpoch(), "digest", resp.GetDigest())
	return resp, nil
}

// askRepair calls PeerService.Repair on a member's peer address.
func askRepair(ctx context.Context, creds grpc.DialOption, peerAddr, id string) (*pb.RepairMemberResponse, error) {
	conn, err := grpc.NewClient(peerAddr, creds)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "peer address %s: %v", peerAddr, err)
	}
	defer conn.Close()
	return pb.NewPeerServiceClient(conn).Repair(ctx, &pb.RepairMemberRequest{Id: id})
}

// repairSelf rebuilds this member's metadata (the schema store rewritten
// completely) with raftlog.Node.Repair and reports its name, epoch and
// digest after it. want, if not empty, must name this member: a request
// meant for another member that reached this one's address is refused.
func (ms *membership) repairSelf(ctx context.Context, want string) (*pb.RepairMemberResponse, error) {
	name := ms.name
	if id, ok := parseID(want); want != "" && want != name && (!ok || id != ms.id) {
		return nil, status.Errorf(codes.FailedPrecondition, "repair member %s: this member is %s (id %s)", want, name, FormatID(ms.id))
	}
	if err := ms.applier.failed(); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "repair member %s: applying the log failed earlier (%v); restart the member instead", name, err)
	}
	before := ms.sm.Current()
	bd := before.Schema.Digest()
	start := time.Now()
	if err := ms.node.Repair(ctx); err != nil {
		code := Code(err)
		if errors.Is(err, raftlog.ErrRepairUnsupported) {
			code = codes.FailedPrecondition
		}
		ms.logger.Error("repair failed", "name", name, "epoch", before.Epoch, "err", err)
		return nil, status.Errorf(code, "repair member %s: %v", name, err)
	}
	if err := ms.applier.failed(); err != nil {
		return nil, status.Errorf(codes.Internal, "repair member %s: replaying the log failed: %v", name, err)
	}
	md := ms.sm.Current()
	d := md.Schema.Digest()
	digest := hex.EncodeToString(d[:])
	ms.logger.Info("metadata rebuilt from the raft log", "name", name, "epoch", md.Epoch, "digest", digest,
		"previous_epoch", before.Epoch, "previous_digest", hex.EncodeToString(bd[:]), "changed", d != bd,
		"duration", time.Since(start))
	return &pb.RepairMemberResponse{Name: name, Epoch: md.Epoch, Digest: digest}, nil
}
