package metadata

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// FillHistory stores records a peer sent (EncodedHistory) for the epochs
// this member lacks (HistoryGap), oldest first, in one durable
// transaction, and returns the epochs still missing. peerOldest is the
// oldest epoch the peer keeps: when it is after the start of the gap, the
// epochs before it are gone everywhere, so this member's history starts
// there too (older records it kept would not join up and are dropped).
// Records outside the gap are ignored; records that do not decode, or
// that skip an epoch, are refused whole.
func (sm *StateMachine) FillHistory(encoded [][]byte, peerOldest uint64) (from, to uint64, err error) {
	f := sm.flusher
	f.writeMu.Lock() // no flush or rebuild in between
	defer f.writeMu.Unlock()
	h := sm.history
	gap := h.now().gap
	if gap.empty() {
		return 0, 0, nil
	}
	start := gap.from + 1 // the first epoch the records must have
	if peerOldest > start {
		start = min(peerOldest, gap.to+1)
	}
	var recs []*Record
	for i, b := range encoded {
		r, err := DecodeRecord(b)
		if err != nil {
			return gap.from, gap.to, fmt.Errorf("metadata: history from a peer, record %d: %w", i+1, err)
		}
		if r.Epoch < start || r.Epoch > gap.to {
			continue
		}
		if want := start + uint64(len(recs)); r.Epoch != want {
			return gap.from, gap.to, fmt.Errorf("metadata: history from a peer: record of epoch %d where epoch %d was due", r.Epoch, want)
		}
		recs = append(recs, r)
	}
	next := epochRange{start - 1 + uint64(len(recs)), gap.to}
	if len(recs) == 0 && start == gap.from+1 {
		return gap.from, gap.to, nil // nothing new
	}
	err = sm.store.update(func(tx *bolt.Tx) error {
		hb := sealed(tx, bucketHistory)
		if start > gap.from+1 {
			// The peer's history starts later: ours starts with it.
			if err := deleteHistoryBefore(hb.b, start); err != nil {
				return err
			}
		}
		var a arena
		for _, r := range recs {
			if err := hb.put(&a, epochKey(r.Epoch), func(b []byte) []byte { return AppendRecord(b, r) }); err != nil {
				return fmt.Errorf("history of epoch %d: %w", r.Epoch, err)
			}
		}
		return writeGap(sealed(tx, bucketMeta), &a, next)
	})
	if err != nil {
		return gap.from, gap.to, fmt.Errorf("metadata: store history from a peer: %w", err)
	}
	h.mu.Lock()
	h.gap = next
	if next.empty() {
		h.gap = epochRange{}
	}
	if len(recs) > 0 {
		h.oldest = min(h.oldest, recs[0].Epoch)
	}
	if start > gap.from+1 {
		h.oldest = start
	}
	h.mu.Unlock()
	sm.logger.Info("history copied from a peer", "from_epoch", start, "records", len(recs), "missing_from", next.from+1, "missing_to", next.to)
	if next.empty() {
		return 0, 0, nil
	}
	return next.from, next.to, nil
}
