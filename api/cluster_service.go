package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/raftlog"
)

// statusTimeout bounds the NodeStatus call to each member in ListMembers.
const statusTimeout = 2 * time.Second

// ListMembers lists the members and asks each, in parallel and in one
// round, for its own status.
func (s *service) ListMembers(ctx context.Context, _ *pb.ListMembersRequest) (*pb.ListMembersResponse, error) {
	st := s.srv.node.Status()
	members := s.srv.node.Members()
	resp := &pb.ListMembersResponse{Term: st.Term, Members: make([]*pb.Member, len(members))}
	if st.Leader != 0 {
		resp.Leader = formatID(st.Leader)
	}
	self := MemberID(s.srv.cfg.Name)
	var wg sync.WaitGroup
	for i, m := range members {
		info, err := parseMemberInfo(m.Context)
		pm := &pb.Member{Id: formatID(m.ID), Name: info.Name, PeerAddr: info.PeerAddr, Role: "voter", Leader: m.ID == st.Leader}
		if m.Learner {
			pm.Role = "learner"
		}
		resp.Members[i] = pm
		switch {
		case err != nil:
			pm.Error = err.Error()
		case m.ID == self:
			fillStatus(pm, s.srv.selfStatus())
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := askStatus(ctx, s.srv.peerDialOption(), info.PeerAddr)
				if err != nil {
					pm.Error = status.Convert(err).Message()
					return
				}
				fillStatus(pm, got)
			}()
		}
	}
	wg.Wait()
	slices.SortFunc(resp.Members, func(a, b *pb.Member) int { return strings.Compare(a.Name, b.Name) })
	s.metrics.statusCalls.Add(float64(len(members) - 1))
	return resp, nil
}

func fillStatus(pm, got *pb.Member) {
	pm.GrpcAddr, pm.HttpAddr = got.GrpcAddr, got.HttpAddr
	pm.Reachable = true
	pm.Term, pm.CommitIndex, pm.AppliedIndex = got.Term, got.CommitIndex, got.AppliedIndex
	pm.Epoch, pm.Digest = got.Epoch, got.Digest
	pm.History = got.History
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

// AddMember adds a member as a learner; raftlog promotes it to voter once
// it has caught up.
func (s *service) AddMember(ctx context.Context, req *pb.AddMemberRequest) (*pb.AddMemberResponse, error) {
	name, addr := req.GetName(), req.GetPeerAddr()
	if err := checkMemberName(name); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "add member %s: peer_addr %q: %v", name, addr, err)
	}
	id := MemberID(name)
	for _, m := range s.srv.node.Members() {
		info, _ := parseMemberInfo(m.Context)
		if m.ID == id || info.Name == name {
			return nil, status.Errorf(codes.AlreadyExists, "add member %s: already a member (id %s, peer %s)", name, formatID(m.ID), info.PeerAddr)
		}
		if info.PeerAddr == addr {
			return nil, status.Errorf(codes.AlreadyExists, "add member %s: peer address %s is already used by member %s", name, addr, info.Name)
		}
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if err := s.srv.node.AddLearner(ctx, id, memberInfo{Name: name, PeerAddr: addr}.marshal()); err != nil {
		return nil, fmt.Errorf("add member %s: %w", name, err)
	}
	s.logger.Info("member added as learner", "name", name, "id", formatID(id), "peer", addr)
	return &pb.AddMemberResponse{Member: &pb.Member{Id: formatID(id), Name: name, PeerAddr: addr, Role: "learner"}}, nil
}

// checkMemberName checks a member name: non-empty, no separators that would
// break --initial-cluster.
func checkMemberName(name string) error {
	if name == "" || strings.ContainsAny(name, ",= \t") {
		return status.Errorf(codes.InvalidArgument, "member name %q: want a non-empty name without ',', '=' or spaces", name)
	}
	return nil
}

// RemoveMember removes a member named by name or hex id.
func (s *service) RemoveMember(ctx context.Context, req *pb.RemoveMemberRequest) (*pb.RemoveMemberResponse, error) {
	want := req.GetId()
	var found *raftlog.Peer
	var name string
	for _, m := range s.srv.node.Members() {
		info, _ := parseMemberInfo(m.Context)
		if id, ok := parseID(want); (ok && id == m.ID) || info.Name == want {
			found, name = &m, info.Name
			break
		}
	}
	if found == nil {
		return nil, status.Errorf(codes.NotFound, "remove member %s: no member has that name or id", want)
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	if err := s.srv.node.RemoveMember(ctx, found.ID); err != nil {
		if errors.Is(err, raftlog.ErrConfChangeRefused) {
			return nil, status.Errorf(codes.FailedPrecondition, "remove member %s: %v", name, err)
		}
		return nil, fmt.Errorf("remove member %s: %w", name, err)
	}
	s.logger.Info("member removed", "name", name, "id", formatID(found.ID))
	return &pb.RemoveMemberResponse{}, nil
}

// consistent applies a read's consistency level before the view is taken.
func (s *service) consistent(ctx context.Context, consistency string) error {
	switch consistency {
	case "", "local":
		return nil
	case "linearizable":
		ctx, cancel := s.withTimeout(ctx)
		defer cancel()
		if _, err := s.srv.node.ReadIndex(ctx); err != nil {
			return status.Errorf(codeOf(err), "linearizable read: %v", err)
		}
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "consistency %q: want \"local\" or \"linearizable\"", consistency)
}
