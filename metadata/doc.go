// Package metadata holds ClusterMetadata, the immutable view of the
// cluster's schema at one epoch, and the StateMachine that applies committed
// log commands to it, persists the changes in a bbolt schema store and
// publishes each new view atomically.
//
// It owns the command encoding (Command: what one request puts in the
// log), the deterministic execution of a command on a view (Execute, which
// runs schema.Apply and the guardrails around every statement), the
// remembered request ids (with a fingerprint of each request, so that a
// retry is told from another request reusing the id), the schema store
// (schema.db) and its coalesced flush, the digest history of the
// agreement check, and the state machine's side of raft snapshots:
// Capture (an immutable view, encoded with the snapshot codec under the
// size guard) and Restore.
//
// It does not own consensus (raftlog calls Apply, Capture and Restore),
// when snapshots are taken, or the write path on the member that receives
// a request (member asks Requests.Answer and Precheck, then proposes).
//
// Readers never lock:
//
//	m := sm.Current()
//	t, ok := m.Schema.Table("shop", "orders")
//
// The raft loop applies committed entries in batches:
//
//	results, err := sm.Apply([]metadata.Entry{{Index: i, Data: cmd.Marshal(nil)}})
//
// Every node computes the same result from the same entries: nothing on the
// apply path reads the clock or random numbers, and nothing walks all tables.
//
// A Scrubber re-reads the live store in the background, paced, and
// rewrites a damaged one from the applied metadata:
//
//	s := metadata.NewScrubber(sm, metadata.ScrubConfig{})
//	res, err := s.Scrub(ctx)
//	if err == nil && res.Damage != nil {
//		aside, err := s.Repair(kind) // kind: res.Damage's boltcheck.Error.Kind
//	}
package metadata
