package metadata

import "sync"

// historySize is how many (epoch, digest) pairs a state machine remembers
// for the agreement check.
const historySize = 256

// EpochDigest is the schema digest the state machine had at one epoch.
type EpochDigest struct {
	Epoch  uint64
	Digest [32]byte
}

// digestHistory is a ring of the latest published (epoch, digest) pairs.
type digestHistory struct {
	mu   sync.Mutex // guards ring, next, full
	ring [historySize]EpochDigest
	next int
	full bool
}

// add records m's epoch and digest if the epoch moved on. O(1).
func (h *digestHistory) add(m *ClusterMetadata) {
	h.mu.Lock()
	defer h.mu.Unlock()
	last := (h.next + historySize - 1) % historySize
	if (h.next > 0 || h.full) && h.ring[last].Epoch == m.Epoch {
		h.ring[last].Digest = m.Schema.Digest() // a restore at the same epoch
		return
	}
	h.ring[h.next] = EpochDigest{Epoch: m.Epoch, Digest: m.Schema.Digest()}
	h.next = (h.next + 1) % historySize
	if h.next == 0 {
		h.full = true
	}
}

// list returns the pairs oldest first; the caller owns the slice.
func (h *digestHistory) list() []EpochDigest {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.full {
		return append([]EpochDigest(nil), h.ring[:h.next]...)
	}
	return append(append([]EpochDigest(nil), h.ring[h.next:]...), h.ring[:h.next]...)
}

// DigestHistory returns the most recent (epoch, digest) pairs this state
// machine published, oldest first, at most 256: enough for an agreement
// check to name the epoch where two members' schemas parted.
func (sm *StateMachine) DigestHistory() []EpochDigest { return sm.history.list() }

// reset forgets every pair (the state they describe was replaced).
func (h *digestHistory) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next, h.full = 0, false
}
