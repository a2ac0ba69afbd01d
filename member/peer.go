package member

import (
	"context"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// peerServer serves metalog.v1.PeerService on the peer listener: the
// member-to-member calls of `cluster status`, `cluster check` and
// `cluster repair`. (The raft transport serves its own snapshot service on
// the same gRPC server.)
type peerServer struct {
	pb.UnimplementedPeerServiceServer
	ms *membership
}

// NodeStatus implements pb.PeerServiceServer: this member's own status.
func (p *peerServer) NodeStatus(context.Context, *pb.NodeStatusRequest) (*pb.Member, error) {
	return p.ms.selfStatus(), nil
}

// Repair implements pb.PeerServiceServer: it rebuilds this member's
// metadata from its raft log and newest snapshot.
func (p *peerServer) Repair(ctx context.Context, req *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error) {
	return p.ms.repairSelf(ctx, req.GetId())
}
