package metadata

import (
	"fmt"

	"github.com/metalog/metalog/guardrails"
)

// Reset replaces the state machine's metadata with the empty one, as before
// the first log entry: no schema, no remembered requests, the default
// guardrails, epoch 0 and index 0. Like Restore it rewrites the schema
// store completely in one synchronous transaction, drops the changes
// pending in the flusher and then publishes; if the store write fails the
// store, the pending changes and the published metadata are unchanged.
//
// It is how a member rebuilds its store from the raft log when no snapshot
// is stored (raftlog.Resetter): the log is replayed onto it afterwards.
// Like Apply it must be called on the raft goroutine, never concurrently
// with Apply or Restore.
func (sm *StateMachine) Reset() error {
	prev := sm.working
	m := &ClusterMetadata{Guardrails: guardrails.Defaults()}
	if err := sm.replace(m); err != nil {
		return fmt.Errorf("metadata: reset to empty: %w", err)
	}
	// The digests remembered before belong to the replaced state.
	sm.digests.reset()
	sm.publish(m)
	sm.logger.Info("metadata reset to empty", "previous_epoch", prev.Epoch, "previous_index", prev.Index)
	return nil
}
