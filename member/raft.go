package member

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/metalog/metalog/member/internal/peerrpc"
	"github.com/metalog/metalog/raftlog"
)

// startRaft starts the peer transport, the peer server and the raft node
// as plan says: joining a running cluster (never bootstrapping one when
// Config.Join is set), bootstrapping from the initial cluster, or
// restarting from the data dir.
func (m *Member) startRaft(plan startup) error {
	// Who the members are until the log holds them: the join target's
	// list (the transport's first dials check it).
	m.setJoin(plan.joinPeers)
	m.transport = raftlog.NewTransport(m.transportConfig())
	peers := &peerServer{ms: m.membership, trust: m.peerTrust}
	peerOpts := append(raftlog.ServerOptions(), peerrpc.ServerOptions(peers)...)
	if m.cfg.PeerServerTLS != nil {
		// Mutual TLS: a member without a certificate signed by the
		// cluster's peer CA, and naming a current member (PeerGate), can
		// neither connect nor be connected to, by gRPC or by the log
		// stream. Failed handshakes are logged and shown by /readyz
		// (HandshakeLog).
		peerOpts = append(peerOpts, grpc.Creds(m.handshakes.Credentials(credentials.NewTLS(m.gate.ServerTLS(m.cfg.PeerServerTLS)))))
	}
	m.peerSrv = grpc.NewServer(peerOpts...)
	m.transport.Register(m.peerSrv)
	m.applier = &applier{sm: m.sm, fatal: m.fatal}
	peerrpc.Register(m.peerSrv, peers)

	rc := raftlog.Config{
		ID:           m.id,
		Dir:          m.cfg.DataDir,
		Applier:      m.applier,
		Applied:      m.sm.Current().Index,
		Logger:       m.logger,
		Metrics:      m.metrics.raft,
		Transport:    m.transport,
		OnConfChange: m.onConfChange,

		SnapshotEntries:        m.cfg.SnapshotEntries,
		SnapshotCatchUpEntries: m.cfg.SnapshotCatchUpEntries,
		OnSnapshot:             m.onSnapshot,
		AppendGate:             m.space.check,
		OnMembersRestored: func(members []raftlog.Peer) {
			for _, p := range members {
				m.addPeer(p.ID, p.Context)
			}
		},
	}
	rc.ClusterID = plan.clusterID
	rc.Naming = plan.naming(legacyHistory(&m.cfg))
	if m.cfg.Join != "" {
		rc.Join = true
	} else if !plan.dir.HasMembership {
		// Only a new log is bootstrapped from Peers: a restart knows its
		// members from its log, and a member added later has an id that
		// is not its name's, which Peers would not list.
		for _, im := range m.cfg.initialCluster() {
			rc.Peers = append(rc.Peers, raftlog.Peer{ID: ID(im.Name), Context: memberInfo{Name: im.Name, PeerAddr: im.PeerAddr}.marshal()})
		}
	}
	if plan.force {
		if err := m.forceNewCluster(plan.dir); err != nil {
			return err
		}
	}
	rc.FromSnapshot = plan.rebuilt
	node, err := raftlog.Start(rc)
	switch {
	case errors.Is(err, raftlog.ErrBadSnapshotFile):
		return refuseDamaged(err, "the log before it is compacted", &m.cfg)
	case errors.Is(err, raftlog.ErrDamaged):
		return refuseDamaged(err, "nothing else on this member holds its raft log", &m.cfg)
	case err != nil:
		return err
	}
	m.node = node
	m.peerTrust.started.Store(node)
	m.transport.SetNode(node)
	for _, p := range node.Members() {
		m.addPeer(p.ID, p.Context)
	}
	for _, p := range plan.joinPeers {
		if id, ok := parseID(p.Id); ok && id != m.id {
			if err := m.transport.AddPeer(id, p.PeerAddr); err != nil {
				return fmt.Errorf("join: member %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

// transportConfig is the peer transport's configuration: plaintext, or
// mutual TLS on both the log streams and gRPC.
func (m *Member) transportConfig() raftlog.TransportConfig {
	tc := raftlog.TransportConfig{
		ID: m.id, Logger: m.logger, Faults: m.peerFaults(), HandshakeLog: m.handshakes, Gate: m.gate,
		SnapshotChunkSize:          m.cfg.SnapshotChunkSize,
		MaxConcurrentSnapshotSends: m.cfg.SnapshotMaxConcurrentSends,
		OnSnapshotSent:             m.metrics.snapshotSent,
		OnSnapshotReceived:         m.metrics.snapshotReceived,
		// A peer's messages and snapshots are bounded by what this
		// member proposes and snapshots, before anything is allocated.
		MaxEntryBytes: m.cfg.MaxMutationSize,
		Dir:           m.cfg.DataDir,
	}
	if m.cfg.PeerServerTLS != nil {
		tc.DialOptions = []grpc.DialOption{m.peerDial}
		tc.TLS, tc.ServerTLS = m.cfg.PeerClientTLS, m.cfg.PeerServerTLS
	}
	return tc
}

// peerDialOption is the transport credential for dialing other members'
// peer listeners: mutual TLS with cfg, whose failed handshakes go to hs,
// or plaintext when cfg is nil.
func peerDialOption(cfg *tls.Config, hs *raftlog.HandshakeLog) grpc.DialOption {
	if cfg == nil {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	return grpc.WithTransportCredentials(hs.Credentials(credentials.NewTLS(cfg)))
}

// addPeer tells the transport where member id is reached.
func (ms *membership) addPeer(id uint64, context []byte) {
	if id == ms.id || len(context) == 0 {
		// Bootstrap members get their context when their conf change applies.
		return
	}
	info, err := parseMemberInfo(context)
	if err != nil {
		ms.logger.Error("member without a usable address", "id", FormatID(id), "err", err)
		return
	}
	if err := ms.transport.AddPeer(id, info.PeerAddr); err != nil {
		ms.logger.Error("add peer", "id", FormatID(id), "name", info.Name, "err", err)
	}
}

// onConfChange runs on the raft goroutine after a membership change
// applies; it must not block.
func (ms *membership) onConfChange(cc raftlog.ConfChangeApplied) {
	switch cc.Type {
	case raftpb.ConfChangeType_ConfChangeAddNode, raftpb.ConfChangeType_ConfChangeAddLearnerNode:
		ms.addPeer(cc.ID, cc.Context)
	case raftpb.ConfChangeType_ConfChangeRemoveNode:
		if cc.ID != ms.id {
			// RemovePeer waits (bounded) for queued messages to go out.
			go ms.transport.RemovePeer(cc.ID)
		}
	}
	ms.logger.Info("membership changed", "index", cc.Index, "change", cc.Type.String(), "id", FormatID(cc.ID), "members", len(cc.Members))
}

// forceNewCluster makes this member the only voter of a new cluster
// (Config.ForceNewCluster, once planForce allowed it), saying loudly what
// it did. dd is the data dir as it was before: it names the members.
func (m *Member) forceNewCluster(dd raftlog.DataDir) error {
	forced, err := raftlog.ForceNewCluster(m.cfg.DataDir, m.id)
	if err != nil {
		return err
	}
	if len(forced.Removed) == 0 {
		m.logger.Warn("--force-new-cluster: this member is its cluster's only member already; start it without the flag", "data_dir", m.cfg.DataDir)
		return nil
	}
	names := make([]string, len(forced.Removed))
	for i, id := range forced.Removed {
		names[i] = FormatID(id)
		if info, err := parseMemberInfo(dd.Members[id]); err == nil && info.Name != "" {
			names[i] = info.Name
		}
	}
	f := forced.Forcing
	m.logger.Warn(fmt.Sprintf("--force-new-cluster: this member is now the only voter of the new cluster %s, forced from cluster %s at index %d; the other members are removed, and changes they had committed that this member never received are lost. "+
		"Do not start the removed members again: they belong to the old cluster, and are refused and stop at their first contact with this one. Add fresh ones with cluster add and --join, and start this one without the flag from now on",
		raftlog.FormatID(f.To), raftlog.FormatID(f.From), f.Index),
		"removed", strings.Join(names, ","), "cluster", raftlog.FormatID(f.To), "forced_from", raftlog.FormatID(f.From), "forced_at_index", f.Index, "data_dir", m.cfg.DataDir)
	return nil
}

// withForcerName returns err, when it is a *raftlog.ForcedError that does
// not name the forcing member, with the name members give that member.
func withForcerName(err error, members []raftlog.Peer) error {
	var fe *raftlog.ForcedError
	if !errors.As(err, &fe) || fe.ByName != "" {
		return err
	}
	for _, p := range members {
		if info, perr := parseMemberInfo(p.Context); p.ID == fe.Forcing.By && perr == nil {
			named := *fe
			named.ByName = info.Name
			return &named
		}
	}
	return err
}
