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
	c := m.core
	// Who the members are until the log holds them: the join target's
	// list (the transport's first dials check it).
	c.trust.setJoin(plan.joinPeers)
	c.transport = raftlog.NewTransport(c.transportConfig())
	m.peerSrv = newPeerServer(c)
	c.applier = &applier{sm: c.sm, fatal: m.fatal}

	rc := raftlog.Config{
		ID:           c.id,
		Dir:          c.cfg.DataDir,
		Applier:      c.applier,
		Applied:      c.sm.Current().Index,
		Logger:       c.logger,
		Metrics:      c.metrics.raft,
		Transport:    c.transport,
		OnConfChange: c.onConfChange,
		Promotable:   promotable,

		SnapshotEntries:        c.cfg.SnapshotEntries,
		SnapshotCatchUpEntries: c.cfg.SnapshotCatchUpEntries,
		OnSnapshot:             m.onSnapshot,
		AppendGate:             c.space.check,
		OnMembersRestored: func(members []raftlog.Peer) {
			for _, p := range members {
				c.addPeer(p.ID, p.Context)
			}
		},
	}
	rc.ClusterID = plan.clusterID
	rc.Naming = plan.naming(legacyHistory(&c.cfg))
	if c.cfg.Join != "" {
		rc.Join = true
	} else if !plan.dir.HasMembership {
		// Only a new log is bootstrapped from Peers: a restart knows its
		// members from its log, and a member added later has an id that
		// is not its name's, which Peers would not list.
		for _, im := range c.cfg.initialCluster() {
			rc.Peers = append(rc.Peers, raftlog.Peer{ID: ID(im.Name), Context: memberInfo{Name: im.Name, PeerAddr: im.PeerAddr}.marshal()})
		}
	}
	if plan.force {
		if err := c.forceNewCluster(plan.dir); err != nil {
			return err
		}
	}
	rc.FromSnapshot = plan.rebuilt
	node, err := raftlog.Start(rc)
	switch {
	case errors.Is(err, raftlog.ErrBadSnapshotFile):
		return refuseDamaged(err, "the log before it is compacted", &c.cfg)
	case errors.Is(err, raftlog.ErrDamaged):
		return refuseDamaged(err, "nothing else on this member holds its raft log", &c.cfg)
	case err != nil:
		return err
	}
	c.node = node
	c.trust.started.Store(node)
	c.transport.SetNode(node)
	for _, p := range node.Members() {
		c.addPeer(p.ID, p.Context)
	}
	for _, p := range plan.joinPeers {
		if id, ok := parseID(p.Id); ok && id != c.id {
			if err := c.transport.AddPeer(id, p.PeerAddr); err != nil {
				return fmt.Errorf("join: member %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

// newPeerServer returns the gRPC server of c's peer port: the peer
// transport's streams and snapshots, and PeerService.
func newPeerServer(c *core) *grpc.Server {
	peers := &peerServer{c: c, trust: c.trust}
	peerOpts := append(raftlog.ServerOptions(), peerrpc.ServerOptions(peers)...)
	if c.cfg.PeerServerTLS != nil {
		// Mutual TLS: a member without a certificate signed by the
		// cluster's peer CA, and naming a current member (PeerGate), can
		// neither connect nor be connected to, by gRPC or by the log
		// stream. Failed handshakes are logged and shown by /readyz
		// (HandshakeLog).
		peerOpts = append(peerOpts, grpc.Creds(c.handshakes.Credentials(credentials.NewTLS(c.trust.gate.ServerTLS(c.cfg.PeerServerTLS)))))
	}
	srv := grpc.NewServer(peerOpts...)
	c.transport.Register(srv)
	peerrpc.Register(srv, peers)
	return srv
}

// transportConfig is the peer transport's configuration: plaintext, or
// mutual TLS on both the log streams and gRPC.
func (c *core) transportConfig() raftlog.TransportConfig {
	tc := raftlog.TransportConfig{
		ID: c.id, Logger: c.logger, Faults: c.peerFaults(), HandshakeLog: c.handshakes, Gate: c.trust.gate,
		SnapshotChunkSize:          c.cfg.SnapshotChunkSize,
		MaxConcurrentSnapshotSends: c.cfg.SnapshotMaxConcurrentSends,
		OnSnapshotSent:             c.metrics.snapshotSent,
		OnSnapshotReceived:         c.metrics.snapshotReceived,
		// A peer's messages and snapshots are bounded by what this
		// member proposes and snapshots, before anything is allocated.
		MaxEntryBytes: c.cfg.MaxMutationSize,
		Dir:           c.cfg.DataDir,
	}
	if c.cfg.PeerServerTLS != nil {
		tc.DialOptions = []grpc.DialOption{c.peerDial}
		tc.TLS, tc.ServerTLS = c.cfg.PeerClientTLS, c.cfg.PeerServerTLS
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
func (c *core) addPeer(id uint64, context []byte) {
	if id == c.id || len(context) == 0 {
		// Bootstrap members get their context when their conf change applies.
		return
	}
	info, err := parseMemberInfo(context)
	if err != nil {
		c.logger.Error("member without a usable address", "id", FormatID(id), "err", err)
		return
	}
	if err := c.transport.AddPeer(id, info.PeerAddr); err != nil {
		c.logger.Error("add peer", "id", FormatID(id), "name", info.Name, "err", err)
	}
}

// onConfChange runs on the raft goroutine after a membership change
// applies; it must not block.
func (c *core) onConfChange(cc raftlog.ConfChangeApplied) {
	switch cc.Type {
	case raftpb.ConfChangeType_ConfChangeAddNode, raftpb.ConfChangeType_ConfChangeAddLearnerNode:
		c.addPeer(cc.ID, cc.Context)
	case raftpb.ConfChangeType_ConfChangeRemoveNode:
		if cc.ID != c.id {
			// RemovePeer waits (bounded) for queued messages to go out.
			go c.transport.RemovePeer(cc.ID)
		}
	}
	c.logger.Info("membership changed", "index", cc.Index, "change", cc.Type.String(), "id", FormatID(cc.ID), "members", len(cc.Members))
}

// forceNewCluster makes this member the only voter of a new cluster
// (Config.ForceNewCluster, once planForce allowed it), saying loudly what
// it did. dd is the data dir as it was before: it names the members.
func (c *core) forceNewCluster(dd raftlog.DataDir) error {
	forced, err := raftlog.ForceNewCluster(c.cfg.DataDir, c.id)
	if err != nil {
		return err
	}
	if len(forced.Removed) == 0 {
		c.logger.Warn("--force-new-cluster: this member is its cluster's only member already; start it without the flag", "data_dir", c.cfg.DataDir)
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
	c.logger.Warn(fmt.Sprintf("--force-new-cluster: this member is now the only voter of the new cluster %s, forced from cluster %s at index %d; the other members are removed, and changes they had committed that this member never received are lost. "+
		"Do not start the removed members again: they belong to the old cluster, and are refused and stop at their first contact with this one. Add fresh ones with cluster add and --join, and start this one without the flag from now on",
		raftlog.FormatID(f.To), raftlog.FormatID(f.From), f.Index),
		"removed", strings.Join(names, ","), "cluster", raftlog.FormatID(f.To), "forced_from", raftlog.FormatID(f.From), "forced_at_index", f.Index, "data_dir", c.cfg.DataDir)
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
