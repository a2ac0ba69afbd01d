package member

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc/metadata"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/raftlog"
)

// peerClusterKey is the metadata key of the caller's cluster id on the
// peer RPCs, which a member of another cluster refuses.
const peerClusterKey = "x-metalog-cluster-id"

// peerContext is ctx with this member's cluster id, member id and name
// for a peer RPC: a member of another cluster refuses it, and a member
// without peer TLS believes the caller it names (raftlog.PeerGate).
func (ms *membership) peerContext(ctx context.Context) context.Context {
	kv := []string{raftlog.PeerMemberNameKey, ms.name}
	if ms.id != 0 {
		kv = append(kv, raftlog.PeerMemberIDKey, FormatID(ms.id))
	}
	if id := ms.node.ClusterID(); id != 0 {
		kv = append(kv, peerClusterKey, raftlog.FormatID(id))
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// checkCaller refuses a peer RPC from a member of another cluster (the
// streaming RPCs call it themselves). The refusal names this member's
// cluster (raftlog.MismatchStatus), so that a caller listing its members
// sees a member that answers for another cluster; a caller of a cluster
// this member was forced from is told so (raftlog.ForcedStatus) and
// stops, while this member goes on.
func (ms *membership) checkCaller(ctx context.Context) error {
	// One key read, not a copy of the whole metadata.
	v := metadata.ValueFromIncomingContext(ctx, peerClusterKey)
	local := ms.node.ClusterID()
	if len(v) != 1 || local == 0 {
		return nil
	}
	caller, err := strconv.ParseUint(v[0], 16, 64)
	if err == nil && caller == local {
		return nil
	}
	if f, ok := ms.node.ForcedFrom(caller); ok && err == nil {
		ms.logger.Warn("refused a peer call of a member of the cluster this member was forced from; told it to stop",
			"peer_cluster", v[0], "cluster", raftlog.FormatID(local), "forced_at_index", f.Index)
		return raftlog.ForcedStatus(f, fmt.Sprintf("%v: the caller belongs to cluster %s, which this member (%s) was forced from into cluster %s at index %d (--force-new-cluster): the caller's data dir belongs to the old cluster and must not be started again",
			raftlog.ErrClusterMismatch, v[0], ms.name, raftlog.FormatID(local), f.Index))
	}
	return raftlog.MismatchStatus(local, fmt.Sprintf("%v: the caller belongs to cluster %s, this member (%s) to cluster %s",
		raftlog.ErrClusterMismatch, v[0], ms.name, raftlog.FormatID(local)))
}

// peerServer serves metalog.v1.PeerService on the peer listener: the
// member-to-member calls of `cluster status`, `cluster check` and
// `cluster repair`. (The raft transport serves its own snapshot service on
// the same gRPC server.)
type peerServer struct {
	pb.UnimplementedPeerServiceServer
	ms *membership
}

// NodeStatus implements pb.PeerServiceServer: this member's own status.
// The members ask often (cluster status, the prober): the caller is
// logged at DEBUG.
func (p *peerServer) NodeStatus(ctx context.Context, _ *pb.NodeStatusRequest) (*pb.Member, error) {
	p.ms.logger.Debug("status asked by a peer", "caller", callerOf(ctx).String())
	return p.ms.selfStatus(), nil
}

// Repair implements pb.PeerServiceServer: it rebuilds this member's
// metadata from its raft log and newest snapshot, saying which member
// asked.
func (p *peerServer) Repair(ctx context.Context, req *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error) {
	p.ms.logger.Info("repair asked by a peer", "caller", callerOf(ctx).String(), "want", req.GetId())
	return p.ms.repairSelf(ctx, req.GetId())
}
