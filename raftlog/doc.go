// Package raftlog is metalog's replicated log: it serialises commands (schema
// changes) through a go.etcd.io/raft/v3 group and feeds the committed ones,
// in order and in batches, to a state machine on every node.
//
// One goroutine per Node owns the raft state machine. It ticks, takes
// proposals and peer messages, and handles each Ready in the order raft
// requires: persist (one record appended to the write-ahead log in
// <dir>/wal, one fdatasync; metadata in <dir>/raft.db), send
// (Transport), apply (Applier), Advance. Proposers wait for the result of
// their own entry; Status, Caught and Ready are safe from any goroutine.
//
// What a command means is not this package's business: the Applier sees only
// the bytes that were proposed.
//
// Transport carries raft messages between members: the log traffic on one
// plain TCP stream per peer (stream.go; TLS when configured) fed by a
// bounded queue, and MsgSnap by a gRPC client stream of its own in chunks
// (checked by size and SHA-256 on arrival), with a global limit on
// concurrent snapshot sends. Both share the peer port: the caller owns the
// gRPC server, registers the peer service on it (Register) and serves it
// on Listen's listener. TransportConfig.Faults injects drops, delays and
// corrupted snapshot chunks for tests (package raftlog/faults).
//
// Membership: Config.Peers bootstrap a new cluster, each with an opaque
// context (name, address) kept in raft.db and returned by Node.Members. A
// new member starts with Config.Join, is added with AddLearner on a member,
// and the leader promotes it to voter once it has caught up. RemoveMember
// removes one; a node that applies its own removal stops with ErrRemoved.
// Config.OnConfChange tells the caller about every applied change, so it
// can add and remove transport peers.
//
// ReadIndex gives linearizable reads on any member.
//
// Snapshots: an Applier that also implements Snapshotter gets its state
// captured every Config.SnapshotEntries applied entries (Capture on the
// node's goroutine, encoding on another). The node stores the snapshot in
// <dir>/snap/<term>-<index>.snap (metadata in raft.db; the newest two files
// are kept) and compacts the log to Config.SnapshotCatchUpEntries behind
// it; Config.OnSnapshot reports every attempt. A snapshot carries the
// member contexts with the Applier's bytes. A member too far behind the
// compacted log (or new) receives the leader's newest snapshot and Restores
// it; Config.OnMembersRestored then gives the caller the members to add as
// transport peers. Start restores the stored snapshot when the log no
// longer holds the entries right after Config.Applied.
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
//	tr.Register(grpcServer)
//	go grpcServer.Serve(tr.Listen(peerListener)) // log streams and gRPC on one port
//	n, err := raftlog.Start(raftlog.Config{
//		ID: id, Peers: peers, Dir: dataDir, Applier: sm, Transport: tr,
//		OnConfChange: func(cc raftlog.ConfChangeApplied) {
//			if cc.Type == raftpb.ConfChangeRemoveNode {
//				tr.RemovePeer(cc.ID)
//			} else {
//				_ = tr.AddPeer(cc.ID, string(cc.Context))
//			}
//		},
//		OnMembersRestored: func(ms []raftlog.Peer) {
//			for _, m := range ms {
//				_ = tr.AddPeer(m.ID, string(m.Context))
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
