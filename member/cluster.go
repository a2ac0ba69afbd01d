package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/connfail"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// statusTimeout bounds the NodeStatus call to each member in ListMembers.
const statusTimeout = 2 * time.Second

// membership is a member's side of the cluster's membership: who the
// members are and where the transport reaches them, their status (cluster
// status, the agreement check), and adding, removing and repairing one.
// Member embeds it, so its exported methods are the Member's.
type membership struct {
	id                 uint64
	name, peerAddr     string // this member's, as configured
	grpcAddr, httpAddr string // this member's client listeners, for its status
	timeout            time.Duration
	peerDial           grpc.DialOption // credentials for other members' peer ports
	logger             *slog.Logger
	statusCalls        prometheus.Counter

	// Set by Start, in this order, before anything is served.
	space     *spaceAlarm // the NOSPACE alarm
	sm        *metadata.StateMachine
	transport *raftlog.Transport
	applier   *applier
	node      *raftlog.Node
}

// ListMembers lists the members and asks each, in parallel and in one
// round, for its own status (term, indexes, epoch, digest and its recent
// history). A member that cannot be reached has its Error set.
func (ms *membership) ListMembers(ctx context.Context) (*pb.ListMembersResponse, error) {
	st := ms.node.Status()
	members := ms.node.Members()
	resp := &pb.ListMembersResponse{Term: st.Term, Members: make([]*pb.Member, len(members))}
	if st.Leader != 0 {
		resp.Leader = FormatID(st.Leader)
	}
	if id := ms.node.ClusterID(); id != 0 {
		resp.ClusterId = raftlog.FormatClusterID(id)
	}
	var wg sync.WaitGroup
	for i, rm := range members {
		info, err := parseMemberInfo(rm.Context)
		pm := &pb.Member{Id: FormatID(rm.ID), Name: info.Name, PeerAddr: info.PeerAddr, Role: "voter", Leader: rm.ID == st.Leader}
		if rm.Learner {
			pm.Role = "learner"
		}
		resp.Members[i] = pm
		switch {
		case err != nil:
			pm.Error = err.Error()
		case rm.ID == ms.id:
			fillStatus(pm, ms.selfStatus())
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := askStatus(ms.peerContext(ctx), ms.peerDial, info.PeerAddr)
				if err != nil {
					// Why in a few words ("connection refused", "timeout"),
					// not gRPC's transport text.
					_, pm.Error = connfail.Of(err)
					return
				}
				fillStatus(pm, got)
			}()
		}
	}
	wg.Wait()
	slices.SortFunc(resp.Members, func(a, b *pb.Member) int { return strings.Compare(a.Name, b.Name) })
	ms.statusCalls.Add(float64(len(members) - 1))
	return resp, nil
}

func fillStatus(pm, got *pb.Member) {
	pm.GrpcAddr, pm.HttpAddr = got.GrpcAddr, got.HttpAddr
	pm.Reachable = true
	pm.Term, pm.CommitIndex, pm.AppliedIndex = got.Term, got.CommitIndex, got.AppliedIndex
	pm.Epoch, pm.Digest = got.Epoch, got.Digest
	pm.History = got.History
	pm.Alarms = got.Alarms
}

// askStatus calls PeerService.NodeStatus on a member's peer address.
func askStatus(ctx context.Context, creds grpc.DialOption, peerAddr string) (*pb.Member, error) {
	conn, err := grpc.NewClient(peerAddr, creds)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	return pb.NewPeerServiceClient(conn).NodeStatus(ctx, &pb.NodeStatusRequest{})
}

// selfStatus is this member's own view, as PeerService.NodeStatus reports it.
func (ms *membership) selfStatus() *pb.Member {
	st := ms.node.Status()
	md := ms.sm.Current()
	d := md.Schema.Digest()
	return &pb.Member{
		Id:           FormatID(ms.id),
		Name:         ms.name,
		PeerAddr:     ms.peerAddr,
		GrpcAddr:     ms.grpcAddr,
		HttpAddr:     ms.httpAddr,
		Leader:       st.Leader == ms.id,
		Reachable:    true,
		Term:         st.Term,
		CommitIndex:  st.Commit,
		AppliedIndex: st.Applied,
		Epoch:        md.Epoch,
		Digest:       fmt.Sprintf("%x", d[:]),
		History:      digestHistory(ms.sm.DigestHistory()),
		Alarms:       ms.space.alarms(),
	}
}

func digestHistory(h []metadata.EpochDigest) []*pb.EpochDigest {
	out := make([]*pb.EpochDigest, len(h))
	for i, e := range h {
		out[i] = &pb.EpochDigest{Epoch: e.Epoch, Digest: fmt.Sprintf("%x", e.Digest[:])}
	}
	return out
}

// AddMember adds a member as a learner, under name with its peer address;
// the leader promotes it to voter once it has caught up.
func (ms *membership) AddMember(ctx context.Context, name, addr string) (*pb.Member, error) {
	if err := checkMemberName(name); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "add member %s: peer_addr %q: %v", name, addr, err)
	}
	id := ID(name)
	for _, rm := range ms.node.Members() {
		info, _ := parseMemberInfo(rm.Context)
		if rm.ID == id || info.Name == name {
			return nil, status.Errorf(codes.AlreadyExists, "add member %s: already a member (id %s, peer %s)", name, FormatID(rm.ID), info.PeerAddr)
		}
		if info.PeerAddr == addr {
			return nil, status.Errorf(codes.AlreadyExists, "add member %s: peer address %s is already used by member %s", name, addr, info.Name)
		}
	}
	ctx, cancel := withTimeout(ctx, ms.timeout)
	defer cancel()
	if err := ms.node.AddLearner(ctx, id, memberInfo{Name: name, PeerAddr: addr}.marshal()); err != nil {
		return nil, membershipError("add member "+name, err)
	}
	ms.logger.Info("member added as learner", "name", name, "id", FormatID(id), "peer", addr)
	return &pb.Member{Id: FormatID(id), Name: name, PeerAddr: addr, Role: "learner"}, nil
}

// checkMemberName checks a member name: non-empty, no separators that would
// break --initial-cluster.
func checkMemberName(name string) error {
	if name == "" || strings.ContainsAny(name, ",= \t") {
		return status.Errorf(codes.InvalidArgument, "member name %q: want a non-empty name without ',', '=' or spaces", name)
	}
	return nil
}

// RemoveMember removes the member named by want, a name or a hex id. The
// removed member stops; removing the leader works (it steps down).
func (ms *membership) RemoveMember(ctx context.Context, want string) error {
	found, info, _, ok := ms.find(want)
	if !ok {
		return status.Errorf(codes.NotFound, "remove member %s: no member has that name or id", want)
	}
	ctx, cancel := withTimeout(ctx, ms.timeout)
	defer cancel()
	if err := ms.node.RemoveMember(ctx, found.ID); err != nil {
		if errors.Is(err, raftlog.ErrConfChangeRefused) {
			return status.Errorf(codes.FailedPrecondition, "remove member %s: %v", info.Name, err)
		}
		return membershipError("remove member "+info.Name, err)
	}
	ms.logger.Info("member removed", "name", info.Name, "id", FormatID(found.ID))
	return nil
}

// find returns the member whose name or hex id is want, with what its
// context records (infoErr when that does not decode).
func (ms *membership) find(want string) (found raftlog.Peer, info memberInfo, infoErr error, ok bool) {
	id, isID := parseID(want)
	for _, rm := range ms.node.Members() {
		mi, err := parseMemberInfo(rm.Context)
		if (isID && id == rm.ID) || (err == nil && mi.Name == want) {
			return rm, mi, err, true
		}
	}
	return raftlog.Peer{}, memberInfo{}, nil, false
}
