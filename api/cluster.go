package api

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// startRaft starts the peer transport and the raft node: bootstrapping from
// the initial cluster, joining a running cluster, or restarting from the
// data dir. fresh says the data dir holds no raft state; joinPeers are the
// members a fresh member joining through --join was given.
func (s *Server) startRaft(fresh bool, joinPeers []*pb.Member) error {
	self := MemberID(s.cfg.Name)
	var dialOpts []grpc.DialOption // nil: plaintext
	var streamTLS, streamServerTLS *tls.Config
	peerOpts := raftlog.ServerOptions()
	if s.peerTLS != nil {
		// Mutual TLS: a member without a certificate signed by the
		// cluster's peer CA can neither connect nor be connected to, by
		// gRPC or by the log stream.
		dialOpts = []grpc.DialOption{s.peerDialOption()}
		peerOpts = append(peerOpts, grpc.Creds(credentials.NewTLS(s.peerTLS.serverConfig(tls.RequireAndVerifyClientCert, "h2"))))
		streamTLS = s.peerTLS.clientConfig()
		streamServerTLS = s.peerTLS.serverConfig(tls.RequireAndVerifyClientCert)
	}
	s.transport = raftlog.NewTransport(raftlog.TransportConfig{
		ID: self, Logger: s.logger, Faults: s.cfg.PeerFaults, DialOptions: dialOpts,
		TLS: streamTLS, ServerTLS: streamServerTLS,
		SnapshotChunkSize:          s.cfg.SnapshotChunkSize,
		MaxConcurrentSnapshotSends: s.cfg.SnapshotMaxConcurrentSends,
		OnSnapshotSent:             s.snapMetrics.sent,
		OnSnapshotReceived:         s.snapMetrics.received,
	})
	s.peerSrv = grpc.NewServer(peerOpts...)
	s.transport.Register(s.peerSrv)
	pb.RegisterPeerServiceServer(s.peerSrv, &peerService{srv: s})

	s.applier = &applier{sm: s.sm, logger: s.logger, fatal: s.fatal}
	rc := raftlog.Config{
		ID:           self,
		Dir:          s.cfg.DataDir,
		Applier:      s.applier,
		Applied:      s.sm.Current().Index,
		Logger:       s.logger,
		Transport:    s.transport,
		OnConfChange: s.onConfChange,

		SnapshotEntries:        s.cfg.SnapshotIntervalEntries,
		SnapshotCatchUpEntries: s.cfg.SnapshotCatchUpEntries,
		OnSnapshot:             s.onSnapshot,
		OnMembersRestored: func(members []raftlog.Peer) {
			for _, m := range members {
				s.addPeer(m.ID, m.Context)
			}
		},
	}
	switch {
	case fresh && s.cfg.Join != "":
		rc.Join = true
	default:
		// A restart ignores Peers; raft knows its members from its log.
		members, _ := s.cfg.Members() // validated
		for _, m := range members {
			rc.Peers = append(rc.Peers, raftlog.Peer{ID: MemberID(m.Name), Context: memberInfo{Name: m.Name, PeerAddr: m.PeerAddr}.marshal()})
		}
	}
	node, err := raftlog.Start(rc)
	if err != nil {
		return err
	}
	s.node = node
	s.transport.SetNode(node)
	for _, m := range node.Members() {
		s.addPeer(m.ID, m.Context)
	}
	for _, m := range joinPeers {
		if id, ok := parseID(m.Id); ok && id != self {
			if err := s.transport.AddPeer(id, m.PeerAddr); err != nil {
				return fmt.Errorf("join: member %s: %w", m.Name, err)
			}
		}
	}
	return nil
}

// fetchMembers asks a running member for the cluster's members, and checks
// this member has been added (by `metalog cluster add`).
func (s *Server) fetchMembers(addr string) ([]*pb.Member, error) {
	creds, err := s.joinDialOption()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, creds)
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.cfg.RequestTimeout))
	defer cancel()
	resp, err := pb.NewMetadataServiceClient(conn).ListMembers(ctx, &pb.ListMembersRequest{})
	if err != nil {
		return nil, fmt.Errorf("join %s: listing members: %w", addr, err)
	}
	for _, m := range resp.Members {
		if m.Name == s.cfg.Name {
			if m.PeerAddr != s.cfg.PeerAddr {
				return nil, fmt.Errorf("join %s: member %s was added with peer address %s, but this member's --peer-addr is %s", addr, m.Name, m.PeerAddr, s.cfg.PeerAddr)
			}
			return resp.Members, nil
		}
	}
	return nil, fmt.Errorf("join %s: %s is not a member yet; run `metalog cluster add --name %s --peer-addr %s --endpoints %s` first",
		addr, s.cfg.Name, s.cfg.Name, s.cfg.PeerAddr, addr)
}

// addPeer tells the transport where member id is reached.
func (s *Server) addPeer(id uint64, context []byte) {
	if id == MemberID(s.cfg.Name) || len(context) == 0 {
		// Bootstrap members get their context when their conf change applies.
		return
	}
	info, err := parseMemberInfo(context)
	if err != nil {
		s.logger.Error("member without a usable address", "id", formatID(id), "err", err)
		return
	}
	if err := s.transport.AddPeer(id, info.PeerAddr); err != nil {
		s.logger.Error("add peer", "id", formatID(id), "name", info.Name, "err", err)
	}
}

// onConfChange runs on the raft goroutine after a membership change
// applies; it must not block.
func (s *Server) onConfChange(cc raftlog.ConfChangeApplied) {
	switch cc.Type {
	case raftpb.ConfChangeType_ConfChangeAddNode, raftpb.ConfChangeType_ConfChangeAddLearnerNode:
		s.addPeer(cc.ID, cc.Context)
	case raftpb.ConfChangeType_ConfChangeRemoveNode:
		if cc.ID != MemberID(s.cfg.Name) {
			// RemovePeer waits (bounded) for queued messages to go out.
			go s.transport.RemovePeer(cc.ID)
		}
	}
	s.logger.Info("membership changed", "index", cc.Index, "change", cc.Type.String(), "id", formatID(cc.ID), "members", len(cc.Members))
}

// selfStatus is this member's own view, as PeerService.NodeStatus reports it.
func (s *Server) selfStatus() *pb.Member {
	st := s.node.Status()
	m := s.sm.Current()
	d := m.Schema.Digest()
	self := MemberID(s.cfg.Name)
	return &pb.Member{
		Id:           formatID(self),
		Name:         s.cfg.Name,
		PeerAddr:     s.cfg.PeerAddr,
		GrpcAddr:     s.GRPCAddr(),
		HttpAddr:     s.HTTPAddr(),
		Leader:       st.Leader == self,
		Reachable:    true,
		Term:         st.Term,
		CommitIndex:  st.Commit,
		AppliedIndex: st.Applied,
		Epoch:        m.Epoch,
		Digest:       fmt.Sprintf("%x", d[:]),
		History:      history(s.sm.DigestHistory()),
	}
}

func history(h []metadata.EpochDigest) []*pb.EpochDigest {
	out := make([]*pb.EpochDigest, len(h))
	for i, e := range h {
		out[i] = &pb.EpochDigest{Epoch: e.Epoch, Digest: fmt.Sprintf("%x", e.Digest[:])}
	}
	return out
}

// peerService serves PeerService on the peer listener.
type peerService struct {
	pb.UnimplementedPeerServiceServer
	srv *Server
}

// NodeStatus implements pb.PeerServiceServer.
func (p *peerService) NodeStatus(context.Context, *pb.NodeStatusRequest) (*pb.Member, error) {
	return p.srv.selfStatus(), nil
}
