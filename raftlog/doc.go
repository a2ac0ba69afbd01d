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
// the bytes that were proposed. Peer transport over gRPC, ReadIndex,
// membership changes and snapshots are later additions.
//
// Usage:
//
//	n, err := raftlog.Start(raftlog.Config{
//		ID:      1,
//		Peers:   []uint64{1}, // used only to bootstrap a new log
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
package raftlog
