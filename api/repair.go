package api

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

// RepairMember rebuilds the metadata of a member named by name or hex id
// from that member's own raft log and newest snapshot: this member directly,
// any other through PeerService.Repair on its peer address, within the
// request's deadline. It is for a member whose schema store went wrong (its
// digest differs at the same epoch); the log itself must be good.
func (s *service) RepairMember(ctx context.Context, req *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error) {
	want := req.GetId()
	if want == "" {
		return nil, status.Error(codes.InvalidArgument, "repair member: the member's name or id is required")
	}
	var (
		found   *raftlog.Peer
		info    memberInfo
		infoErr error
	)
	for _, m := range s.srv.node.Members() {
		mi, err := parseMemberInfo(m.Context)
		if id, ok := parseID(want); (ok && id == m.ID) || (err == nil && mi.Name == want) {
			found, info, infoErr = &m, mi, err
			break
		}
	}
	if found == nil {
		return nil, status.Errorf(codes.NotFound, "repair member %s: no member has that name or id", want)
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if found.ID == MemberID(s.srv.cfg.Name) {
		return s.srv.repairSelf(ctx, formatID(found.ID))
	}
	if infoErr != nil {
		return nil, status.Errorf(codes.Unavailable, "repair member %s: no usable peer address: %v", want, infoErr)
	}
	resp, err := askRepair(ctx, s.srv.peerDialOption(), info.PeerAddr, formatID(found.ID))
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
	check, err := s.CheckCluster(ctx, &pb.CheckClusterRequest{})
	if err == nil {
		err = stillDiverged(check, resp.GetName())
	}
	if err != nil {
		s.logger.Error("repair did not bring the member back into agreement", "name", resp.GetName(), "err", err)
		return nil, err
	}
	s.logger.Info("member repaired", "name", resp.GetName(), "id", formatID(found.ID), "epoch", resp.GetEpoch(), "digest", resp.GetDigest())
	return resp, nil
}

// stillDiverged returns an error when the check says member name still
// diverges from the reference member after its rebuild.
func stillDiverged(check *pb.CheckClusterResponse, name string) error {
	for _, m := range check.GetMembers() {
		if m.GetName() != name || m.GetState() != "diverged" {
			continue
		}
		return status.Errorf(codes.FailedPrecondition,
			"repair member %s: rebuilt from its own log and newest snapshot, it still differs from %s at epoch %d, so that snapshot already holds the divergence; "+
				"replace the member instead: `metalog cluster remove %s`, delete its data dir, `metalog cluster add` it again and start it with --join (it is then rebuilt from the leader's snapshot)",
			name, check.GetReference(), m.GetDivergedSinceEpoch(), name)
	}
	return nil
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

// Repair implements pb.PeerServiceServer: it rebuilds this member's
// metadata from its raft log and newest snapshot.
func (p *peerService) Repair(ctx context.Context, req *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error) {
	return p.srv.repairSelf(ctx, req.GetId())
}

// repairSelf rebuilds this member's metadata (the schema store rewritten
// completely) with raftlog.Node.Resync and reports its name, epoch and
// digest after it. want, if not empty, must name this member: a request
// meant for another member that reached this one's address is refused.
func (s *Server) repairSelf(ctx context.Context, want string) (*pb.RepairMemberResponse, error) {
	name, self := s.cfg.Name, MemberID(s.cfg.Name)
	if id, ok := parseID(want); want != "" && want != name && (!ok || id != self) {
		return nil, status.Errorf(codes.FailedPrecondition, "repair member %s: this member is %s (id %s)", want, name, formatID(self))
	}
	if err := s.applier.failed(); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "repair member %s: applying the log failed earlier (%v); restart the member instead", name, err)
	}
	before := s.sm.Current()
	bd := before.Schema.Digest()
	start := time.Now()
	if err := s.node.Resync(ctx); err != nil {
		code := codeOf(err)
		if errors.Is(err, raftlog.ErrResyncUnsupported) {
			code = codes.FailedPrecondition
		}
		s.logger.Error("repair failed", "name", name, "epoch", before.Epoch, "err", err)
		return nil, status.Errorf(code, "repair member %s: %v", name, err)
	}
	if err := s.applier.failed(); err != nil {
		return nil, status.Errorf(codes.Internal, "repair member %s: replaying the log failed: %v", name, err)
	}
	m := s.sm.Current()
	d := m.Schema.Digest()
	digest := hex.EncodeToString(d[:])
	s.logger.Info("metadata rebuilt from the raft log", "name", name, "epoch", m.Epoch, "digest", digest,
		"previous_epoch", before.Epoch, "previous_digest", hex.EncodeToString(bd[:]), "changed", d != bd,
		"duration", time.Since(start))
	return &pb.RepairMemberResponse{Name: name, Epoch: m.Epoch, Digest: digest}, nil
}
