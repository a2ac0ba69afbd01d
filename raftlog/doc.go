// Package raftlog replicates metalog's commands through an etcd raft group
// and feeds the committed ones, in order, to a state machine on every member.
//
// It owns the raft node's goroutine, the log on disk in Config.Dir (raft.db,
// wal/ and snap/, locked against other processes), the peer Transport,
// membership changes and snapshots. It does not know what a command or a
// snapshot means (both are the Applier's bytes) or who the members are (a
// Peer's Context is opaque to it), and it does not own the gRPC server the
// Transport is served on. It imports neither schema nor metadata.
//
// What a caller must know:
//   - Node's methods are safe for concurrent use. Applier.Apply, the
//     Snapshotter's Capture and Restore and the Config.On* callbacks run on
//     the node's goroutine: they must not block or call the Node's waiting
//     methods.
//   - Apply gets the committed commands in log order, in batches, each on
//     disk before it is applied. Start replays those after Config.Applied,
//     which must be the index the state machine has durably applied.
//   - An error of Propose, AddLearner or RemoveMember that matches
//     ErrOutcomeUnknown means the entry may still apply; any other means
//     nothing of the call is in the log.
//   - Without a Snapshotter the log is never compacted.
//   - Member ids are never reused (ErrIDRemoved). A node stops on its own,
//     closing Done, when it applies its own removal (ErrRemoved), is sent
//     to by another cluster (ErrClusterMismatch) or is told its cluster was
//     forced into a new one (*ForcedError); Err says which.
//
// The example of Start runs a single node. A member of a cluster wires a
// Transport in (here a Peer's Context is its peer address):
//
//	tr := raftlog.NewTransport(raftlog.TransportConfig{ID: id, Dir: dataDir, Logger: logger})
//	grpcServer := grpc.NewServer(raftlog.ServerOptions()...)
//	tr.Register(grpcServer)
//	go grpcServer.Serve(tr.Listen(peerListener)) // log streams and gRPC on one port
//	n, err := raftlog.Start(raftlog.Config{
//		ID: id, Peers: peers, Dir: dataDir, Applier: sm, Applied: applied, Transport: tr,
//		OnConfChange: func(cc raftlog.ConfChangeApplied) {
//			if cc.Type == raftpb.ConfChangeRemoveNode {
//				tr.RemovePeer(cc.ID)
//			} else {
//				_ = tr.AddPeer(cc.ID, string(cc.Context))
//			}
//		},
//		OnMembersRestored: func(ms []raftlog.Peer) { /* AddPeer each */ },
//	})
//	// handle err
//	tr.SetNode(n)
//	for _, m := range n.Members() {
//		_ = tr.AddPeer(m.ID, string(m.Context))
//	}
//	// Stop order: n.Stop(), tr.Stop(), grpcServer.Stop().
package raftlog
