// Package raftlog is metalog's replicated log: it serialises commands (schema
// changes) through a go.etcd.io/raft/v3 group and feeds the committed ones,
// in order and in batches, to a state machine on every node.
//
// One goroutine per Node owns the raft state machine. It ticks, takes
// proposals and peer messages, and handles each Ready in the order raft
// requires: persist (one bbolt transaction in <dir>/raft.db, fsynced), send
// (Transport), apply (Applier), Advance. Proposers wait for the result of
// their own entry; Status, Caught and Ready are safe from any goroutine.
//
// What a command means is not this package's business: the Applier sees only
// the bytes that were proposed.
//
// Transport carries raft messages between members over gRPC: one stream
// per peer fed by a bounded queue, MsgSnap by a unary RPC of its own; the
// caller owns the gRPC server and registers the peer service on it. Faults
// injects drops and delays for tests.
//
// Membership: Config.Peers bootstrap a new cluster, each with an opaque
// context (name, address) kept in raft.db and returned by Node.Members. A
// new member starts with Config.Join, is added with AddLearner on a member,
// and the leader promotes it to voter once it has caught up. RemoveMember
// removes one; a node that applies its own removal stops with ErrRemoved.
// Config.OnConfChange tells the caller about every applied change, so it
// can add and remove transport peers.
//
// ReadIndex gives linearizable reads on any member. Snapshots (sending the
// state machine to a member behind the compacted log) are a later addition.
//
// Usage:
//
//	n, err := raftlog.Start(raftlog.Config{
//		ID:      1,
//		Peers:   []raftlog.Peer{{ID: 1}}, // used only to bootstrap a new log
//		Dir:     dataDir,
//		Applier: stateMachine, // raftlog.Applier
//		Applied: stateMachine.AppliedIndex(),
//	})
//	if err != nil {
//		return err
//	}
//	defer n.Stop()
//
//	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
//	defer cancel()
//	value, err := n.Propose(ctx, command)
//	switch {
//	case errors.Is(err, raftlog.ErrNoLeader):
//		// Unavailable: retry elsewhere or later.
//	case err != nil:
//		// The Applier's error for this command, ctx's, or ErrStopped.
//	}
//	_ = value // the Applier's Result.Value for this command
//
// A member of a cluster wires a Transport in (peers' contexts hold their
// peer addresses here):
//
//	tr := raftlog.NewTransport(raftlog.TransportConfig{ID: id, Logger: logger})
//	tr.Register(grpcServer) // the caller serves it on its peer listener
//	n, err := raftlog.Start(raftlog.Config{
//		ID: id, Peers: peers, Dir: dataDir, Applier: sm, Transport: tr,
//		OnConfChange: func(cc raftlog.ConfChangeApplied) {
//			if cc.Type == raftpb.ConfChangeRemoveNode {
//				tr.RemovePeer(cc.ID)
//			} else {
//				_ = tr.AddPeer(cc.ID, string(cc.Context))
//			}
//		},
//	})
//	// handle err
//	tr.SetNode(n)
//	for _, m := range n.Members() {
//		_ = tr.AddPeer(m.ID, string(m.Context))
//	}
//	// Stop order: n.Stop(), tr.Stop(), grpcServer.Stop().
package raftlog
