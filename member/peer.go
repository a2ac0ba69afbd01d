package member

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"google.golang.org/grpc/metadata"

	"github.com/metalog/metalog/member/internal/peerrpc"
	"github.com/metalog/metalog/raftlog"
)

// peerClusterKey is the metadata key of the caller's cluster id on the
// peer RPCs, which a member of another cluster refuses.
const peerClusterKey = "x-metalog-cluster-id"

// peerContext is ctx with this member's cluster id, member id and name
// for a peer RPC: a member of another cluster refuses it, and a member
// without peer TLS believes the caller it names (raftlog.PeerGate).
func (c *core) peerContext(ctx context.Context) context.Context {
	kv := []string{raftlog.PeerMemberNameKey, c.name}
	if c.id != 0 {
		kv = append(kv, raftlog.PeerMemberIDKey, FormatID(c.id))
	}
	if id := c.node.ClusterID(); id != 0 {
		kv = append(kv, peerClusterKey, raftlog.FormatID(id))
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// checkCaller refuses a peer RPC from a member of another cluster with a
// *peerrpc.CallerError naming this member's cluster, so that a caller
// listing its members sees a member that answers for another cluster; a
// caller of a cluster this member was forced from is told so (Forcing
// set) and stops, while this member goes on.
func (c *core) checkCaller(ctx context.Context) error {
	// One key read, not a copy of the whole metadata.
	v := metadata.ValueFromIncomingContext(ctx, peerClusterKey)
	local := c.node.ClusterID()
	if len(v) != 1 || local == 0 {
		return nil
	}
	caller, err := strconv.ParseUint(v[0], 16, 64)
	if err == nil && caller == local {
		return nil
	}
	if f, ok := c.node.ForcedFrom(caller); ok && err == nil {
		c.logger.Warn("refused a peer call of a member of the cluster this member was forced from; told it to stop",
			"peer_cluster", v[0], "cluster", raftlog.FormatID(local), "forced_at_index", f.Index)
		return &peerrpc.CallerError{Local: local, Forcing: &f, Msg: fmt.Sprintf("%v: the caller belongs to cluster %s, which this member (%s) was forced from into cluster %s at index %d (--force-new-cluster): the caller's data dir belongs to the old cluster and must not be started again",
			raftlog.ErrClusterMismatch, v[0], c.name, raftlog.FormatID(local), f.Index)}
	}
	return &peerrpc.CallerError{Local: local, Msg: fmt.Sprintf("%v: the caller belongs to cluster %s, this member (%s) to cluster %s",
		raftlog.ErrClusterMismatch, v[0], c.name, raftlog.FormatID(local))}
}

// peerServer is the member's side of metalog.v1.PeerService on the peer
// listener (peerrpc.Handler): the member-to-member calls of `cluster
// status`, `cluster check`, `cluster repair` and of history copying.
// (The raft transport serves its own snapshot service on the same gRPC
// server.)
type peerServer struct {
	c     *core
	trust *peerTrust
}

var _ peerrpc.Handler = (*peerServer)(nil)

// CheckCaller implements peerrpc.Handler.
func (p *peerServer) CheckCaller(ctx context.Context) error { return p.c.checkCaller(ctx) }

// Caller implements peerrpc.Handler: the peer gate's verdict.
func (p *peerServer) Caller(ctx context.Context) (raftlog.PeerCall, error) {
	return p.trust.gate.Caller(ctx)
}

// NodeStatus implements peerrpc.Handler: this member's own status, once
// it has applied minEpoch or waited statusCatchUp for it, brief or not. A
// leader asked at an epoch first releases the commit index it holds back
// from its followers, whom the caller is asking too. The members ask
// often (cluster status, the prober, the CQL listener): the caller is
// logged at DEBUG.
func (p *peerServer) NodeStatus(ctx context.Context, minEpoch uint64, brief bool) *peerrpc.PeerMember {
	if p.c.logger.Enabled(ctx, slog.LevelDebug) {
		p.c.logger.Debug("status asked by a peer", "caller", peerrpc.CallerOf(ctx).String(), "min_epoch", minEpoch, "brief", brief)
	}
	p.c.releaseCommitUpdates(minEpoch)
	if minEpoch > 0 {
		wctx, cancel := context.WithTimeout(ctx, statusCatchUp)
		p.c.sm.WaitEpoch(wctx, minEpoch) // behind after the wait: said as it is
		cancel()
	}
	return toPeerMember(p.c.ownStatus(brief))
}

// Repair implements peerrpc.Handler: it rebuilds this member's metadata
// from its raft log and newest snapshot, saying which member asked.
func (p *peerServer) Repair(ctx context.Context, id string) (*peerrpc.PeerRepairResponse, error) {
	p.c.logger.Info("repair asked by a peer", "caller", peerrpc.CallerOf(ctx).String(), "want", id)
	r, err := p.c.repairSelf(ctx, id)
	if err != nil {
		return nil, err
	}
	return &peerrpc.PeerRepairResponse{Name: r.Name, Epoch: r.Epoch, Digest: r.Digest}, nil
}

// HistoryRecords implements peerrpc.Handler: this member's encoded
// history, for a peer that copies the records of (from, to].
func (p *peerServer) HistoryRecords(ctx context.Context, from, to uint64) peerrpc.HistorySource {
	p.c.logger.Info("history records asked by a peer", "caller", peerrpc.CallerOf(ctx).String(), "from_epoch", from, "to_epoch", to)
	return p.c.sm
}

// toPeerMember is a member's status as NodeStatus answers it.
func toPeerMember(s *MemberStatus) *peerrpc.PeerMember {
	pm := &peerrpc.PeerMember{
		Id: s.ID, Name: s.Name, PeerAddr: s.PeerAddr, GrpcAddr: s.GRPCAddr, HttpAddr: s.HTTPAddr, CqlAddr: s.CQLAddr, Role: s.Role,
		Leader: s.Leader, Reachable: s.Reachable, Term: s.Term, CommitIndex: s.CommitIndex, AppliedIndex: s.AppliedIndex,
		Epoch: s.Epoch, Digest: s.Digest, Error: s.Error, Alarms: s.Alarms, ClusterId: s.ClusterID, KnownLeader: s.KnownLeader,
	}
	for _, e := range s.History {
		pm.History = append(pm.History, &peerrpc.PeerEpochDigest{Epoch: e.Epoch, Digest: e.Digest})
	}
	for _, c := range s.Configuration {
		pm.Configuration = append(pm.Configuration, &peerrpc.PeerConfigMember{Id: c.ID, Name: c.Name, Role: c.Role, PeerAddr: c.PeerAddr})
	}
	return pm
}

// fromPeerMember is a member's status as its NodeStatus answer gives it.
func fromPeerMember(pm *peerrpc.PeerMember) *MemberStatus {
	s := &MemberStatus{
		ID: pm.GetId(), Name: pm.GetName(), PeerAddr: pm.GetPeerAddr(), GRPCAddr: pm.GetGrpcAddr(), HTTPAddr: pm.GetHttpAddr(), CQLAddr: pm.GetCqlAddr(),
		Role: pm.GetRole(), Leader: pm.GetLeader(), Reachable: pm.GetReachable(), Term: pm.GetTerm(),
		CommitIndex: pm.GetCommitIndex(), AppliedIndex: pm.GetAppliedIndex(), Epoch: pm.GetEpoch(), Digest: pm.GetDigest(),
		Error: pm.GetError(), Alarms: pm.GetAlarms(), ClusterID: pm.GetClusterId(), KnownLeader: pm.GetKnownLeader(),
	}
	for _, e := range pm.GetHistory() {
		s.History = append(s.History, EpochDigest{Epoch: e.GetEpoch(), Digest: e.GetDigest()})
	}
	for _, c := range pm.GetConfiguration() {
		s.Configuration = append(s.Configuration, ConfigMember{ID: c.GetId(), Name: c.GetName(), Role: c.GetRole(), PeerAddr: c.GetPeerAddr()})
	}
	return s
}
