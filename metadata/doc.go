// Package metadata is metalog's replicated state machine: the StateMachine
// applies committed commands to ClusterMetadata, the cluster's immutable
// state at one epoch, keeps it in a bbolt store (schema.db) and publishes
// each new state atomically.
//
// It owns the Command encoding, applying a command to a state
// (ClusterMetadata.Apply, which runs schema.Apply and the guardrails around every
// statement), the remembered request ids (Requests), the schema store with
// its history and its Scrubber, and the state machine's side of snapshots
// and backups (Capture, Restore). It does not own consensus (raftlog calls
// Apply, Capture and Restore through package member's adapter), when
// snapshots are taken, or the write path of a request (package member asks
// Requests.Answer and Precheck, then proposes).
//
// What a caller must know:
//   - Apply is called from one goroutine only (the raft loop); Current and
//     WaitEpoch from any. A published state is never modified, and readers
//     never lock.
//   - Every member computes the same results from the same entries: they
//     depend on nothing else (no clock, no randomness), and no command walks
//     all tables.
//   - With a Config.FlushWindow, a change is published before it is in the
//     store: the raft log covers it, and a restart replays it from the
//     store's index. An error of Apply means a change could not be made
//     durable: stop the node rather than acknowledge it.
//   - A snapshot (Capture) is a store file holding exactly the captured
//     state, which Restore writes beside schema.db, checks, loads and
//     renames into place; Restore also takes the record streams of earlier
//     releases.
//
// The raft loop applies committed entries in batches, and readers take the
// current state:
//
//	results, err := sm.Apply([]metadata.Entry{{Index: i, Data: cmd.Marshal(nil)}})
//
//	m := sm.Current()
//	t, ok := m.Schema.Table("shop", "orders")
package metadata
