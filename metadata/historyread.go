package metadata

import (
	"fmt"

	"github.com/metalog/metalog/schema"
)

// History returns the records of the epochs in (from, to], oldest first,
// at most max of them (the first ones) when max > 0. Epochs before the
// oldest kept give an error matching ErrHistoryPruned; epochs this member
// is still copying from a peer, one matching ErrHistoryIncomplete.
// Records up to the epoch of Current() are always there.
func (sm *StateMachine) History(from, to uint64, max int) ([]*Record, error) {
	return sm.history.read(from, to, max)
}

// HistoryTail returns the newest records up to epoch to whose events
// that f keeps number at least n, oldest first, with only the kept events;
// fewer when the history kept ends first.
func (sm *StateMachine) HistoryTail(to uint64, n int, f EventFilter) ([]*Record, error) {
	return sm.history.readBack(to, n, func(r *Record) (*Record, bool) { return r.Filter(f) })
}

// OldestEpoch returns the oldest epoch whose record this member keeps:
// history and at-epoch reads reach back to the schema at the epoch before
// it. When no record is kept it is the epoch after the current one.
func (sm *StateMachine) OldestEpoch() uint64 { return sm.history.Oldest() }

// HistoryRetention returns how many epochs of history are kept.
func (sm *StateMachine) HistoryRetention() uint64 { return sm.history.retention }

// SchemaAt returns the schema as it was at epoch, rebuilt from m (which
// must be metadata this state machine published) by undoing the changes
// of the epochs after it, newest first: O(changes since epoch), without a
// walk of the schema. An epoch past m's is an error, as are epochs whose
// history is no longer kept (ErrHistoryPruned) or not copied yet
// (ErrHistoryIncomplete).
func (sm *StateMachine) SchemaAt(m *ClusterMetadata, epoch uint64) (schema.Schema, error) {
	if epoch > m.Epoch {
		return schema.Schema{}, fmt.Errorf("metadata: epoch %d is after the current epoch %d", epoch, m.Epoch)
	}
	s := m.Schema
	var undoErr error
	err := sm.history.walkBack(epoch, m.Epoch, false, func(r *Record) bool {
		s, undoErr = undoRecord(s, r)
		return undoErr == nil
	})
	if err == nil {
		err = undoErr
	}
	if err != nil {
		return schema.Schema{}, err
	}
	return s, nil
}

// undoRecord undoes every change of r, newest first. The changes are
// those of the statements' events: a derived event (of a record Feed
// returned) repeats one of them, and is skipped.
func undoRecord(s schema.Schema, r *Record) (schema.Schema, error) {
	for i := len(r.Events) - 1; i >= 0; i-- {
		e := &r.Events[i]
		if e.Cause != nil {
			continue
		}
		for j := len(e.Changes) - 1; j >= 0; j-- {
			var err error
			if s, err = schema.Undo(s, e.Changes[j], e.Priors[j]); err != nil {
				return s, fmt.Errorf("metadata: undo epoch %d (%s): %w", r.Epoch, e.Kind, err)
			}
		}
	}
	return s, nil
}

// Changed returns a channel closed at the next publish: a watcher that
// read up to Current() waits on it for more.
func (sm *StateMachine) Changed() <-chan struct{} {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.changed
}

// HistoryGapSignal returns a channel that receives after a publish that
// leaves a history gap (HistoryGap), for the one goroutine that fills gaps:
// it holds one pending signal, so none is lost between a look at
// HistoryGap and the wait, and it stays quiet while there is no gap.
func (sm *StateMachine) HistoryGapSignal() <-chan struct{} { return sm.gapSignal }

// HistoryGap returns the epochs (from, to] whose records this member
// lacks since it was rebuilt from a snapshot, for FillHistory; to is 0
// when none are missing.
func (sm *StateMachine) HistoryGap() (from, to uint64) {
	v := sm.history.now()
	return v.gap.from, v.gap.to
}

// EncodedHistory returns the encoded records of the epochs in (from, to],
// oldest first, at most limit of them, and the oldest epoch kept: what a
// peer sends to a member filling its gap. Epochs already pruned are left
// out (the first record says where the history starts).
func (sm *StateMachine) EncodedHistory(from, to uint64, limit int) ([][]byte, uint64, error) {
	oldest := sm.history.Oldest()
	recs, err := sm.history.read(max(from, oldest-1), to, limit)
	if err != nil {
		return nil, oldest, err
	}
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = AppendRecord(nil, r)
	}
	return out, oldest, nil
}
