// Package raftlog is metalog's replicated log: it serialises commands (schema
// changes) through a go.etcd.io/raft/v3 group and feeds the committed ones,
// in order and in batches, to a state machine on every node.
//
// It owns the raft node loop, the durable log, the peer transport, the
// waiting of proposals and reads, membership changes and the taking,
// sending and installing of snapshots. It does not own what a command
// means (the Applier sees only the bytes that were proposed, and snapshots
// are the Applier's bytes), how a command or a snapshot is encoded, the
// gRPC server and listener the transport is served on, or the members'
// names and addresses (opaque contexts to raftlog). It imports neither
// schema nor metadata.
//
// # The node
//
// Node is the public face of one member. One goroutine (loop.go) owns the
// raft state machine: it ticks, takes proposals and peer messages, and
// handles each Ready in the order raft requires: persist (one record
// appended to the write-ahead log in <dir>/wal, one fdatasync; metadata in
// <dir>/raft.db), send (Transport), apply (Applier), Advance. Proposers and
// readers wait in a registry (waiters.go) for the result of their own entry
// or read; Status, Members, Caught and Ready read what the loop published,
// without a lock. Storage (storage.go) is the raft.Storage the loop writes
// to, composed of the write-ahead log (wal.go), raft.db (raftdb.go) and the
// snapshot files (snapstore.go).
//
// # Transport
//
// Transport carries raft messages between members: the log traffic on one
// plain TCP stream per peer (stream.go; TLS when configured) fed by a
// bounded queue, and MsgSnap by a gRPC client stream of its own in chunks
// (snaptransfer.go; checked by size and SHA-256 on arrival), with a global
// limit on concurrent snapshot sends. Both share the peer port: the caller
// owns the gRPC server, registers the transport's service on it (Register)
// and serves it on Listen's listener. The transport talks to its node
// through the small LocalNode interface, which *Node implements.
// TransportConfig.Faults injects drops, delays and corrupted snapshot
// chunks for tests (package raftlog/faults).
//
// What a peer sends costs the receiver only what actually arrives, within
// bounds derived from TransportConfig.MaxEntryBytes (peerbounds.go): a
// frame's buffer grows as its bytes come (framereader.go), under a limit
// per frame and a budget shared by all streams; a snapshot is written to a
// temporary file as it arrives, refused up front when it announces more
// than the member accepts, and read back only once complete and checked
// (snaprecv.go). Refusals and failed handshakes from peers are logged once
// a minute per source host, with a summary of those held back
// (sourcelog.go).
//
// # Membership
//
// Config.Peers bootstrap a new cluster, each with an opaque context (name,
// address) kept in raft.db and returned by Node.Members. A new member
// starts with Config.Join, is added with AddLearner on a member, and the
// leader promotes it to voter once it has caught up and answers (heard
// from within two heartbeat intervals), and only when the voters answering
// with it make a quorum of the grown voter set. RemoveMember removes one; a
// node that applies its own removal stops with ErrRemoved. Ids are never
// reused: every node keeps the ids it removed (in raft.db and in
// snapshots), AddLearner refuses them (ErrIDRemoved), and any member
// answers a removed member's traffic with "you were removed", so a member
// removed while it was down stops when it comes back. Config.OnConfChange
// tells the caller about every applied change, so it can add and remove
// transport peers.
//
// # Identity
//
// A new log records Config.ClusterID and whether it was begun to
// bootstrap or to join (identity.go), and its member's id (memberid.go;
// Start refuses another Config.ID); Inspect reads them before Start. The
// id opens every log stream (a hello frame) and rides on every snapshot
// stream: a peer of another cluster is refused, and a node that the leader
// of another cluster sends to stops with ErrClusterMismatch. A log begun to
// join that never received its membership starts again only as a join
// (ErrJoinIncomplete), never as a cluster of its own.
//
// ForceNewCluster makes a member the only voter of a new cluster, offline,
// with a new cluster id derived from the old one, the index and the member
// (ForcedClusterID), and records the forcing in raft.db (forced.go). The
// forced node never stops on the old cluster's traffic: it refuses it and
// tells the sender, which stops with a ForcedError and never starts again
// from that data dir.
//
// ReadIndex gives linearizable reads on any member.
//
// # Snapshots
//
// An Applier that also implements Snapshotter gets its state captured every
// Config.SnapshotEntries applied entries (Capture on the node's goroutine,
// encoding on another; snapsched.go). The node stores the snapshot in
// <dir>/snap/<term>-<index>.snap (metadata in raft.db; the newest two files
// are kept) and compacts the log to Config.SnapshotCatchUpEntries behind
// it; Config.OnSnapshot reports every attempt. An attempt that failed for
// want of file descriptors or space (EMFILE, ENFILE, ENOSPC, from encoding
// or storing) is made again a second later, then further apart up to a
// minute, though nothing was applied since. A snapshot carries the
// member contexts and the removed ids with the Applier's bytes
// (envelope.go). A member too far
// behind the compacted log (or new) receives the leader's newest snapshot
// and Restores it; Config.OnMembersRestored then gives the caller the
// members to add as transport peers. Start restores the stored snapshot
// when the log no longer holds the entries right after Config.Applied.
//
// # Metrics
//
// Config.Metrics (NewMetrics) observes the write-ahead log's fsync, the
// persist step of each Ready and each Apply batch, and counts the applied
// entries.
//
// # Usage
//
// A single node, with a state machine that knows the log index it has
// durably applied (applied):
//
//	n, err := raftlog.Start(raftlog.Config{
//		ID:      1,
//		Peers:   []raftlog.Peer{{ID: 1}}, // used only to bootstrap a new log
//		Dir:     dataDir,
//		Applier: stateMachine, // raftlog.Applier
//		Applied: applied,      // 0 replays the whole log
//		Metrics: raftlog.NewMetrics(prometheus.DefaultRegisterer),
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
//	case errors.Is(err, raftlog.ErrOutcomeUnknown):
//		// Raft took the entry and the wait ended: it may still apply.
//	case errors.Is(err, raftlog.ErrNoLeader):
//		// Unavailable, nothing in the log: retry elsewhere or later.
//	case err != nil:
//		// The Applier's error for this command, ctx's, or ErrStopped.
//	}
//	_ = value // the Applier's Result.Value for this command
//
// A member of a cluster wires a Transport in (peers' contexts hold their
// peer addresses here):
//
//	tr := raftlog.NewTransport(raftlog.TransportConfig{ID: id, Logger: logger})
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
