package metadata

import "sync"

// recentDigests is how many (epoch, digest) pairs a state machine remembers
// for the agreement check.
const recentDigests = 256

// EpochDigest is the schema digest the state machine had at one epoch.
type EpochDigest struct {
	Epoch  uint64
	Digest [32]byte
}

// digestRing is a ring of the latest published (epoch, digest) pairs.
type digestRing struct {
	mu   sync.Mutex // guards ring, next, full
	ring [recentDigests]EpochDigest
	next int
	full bool
}

// add records m's epoch and digest if the epoch moved on. O(1).
func (h *digestRing) add(m *ClusterMetadata) {
	h.mu.Lock()
	defer h.mu.Unlock()
	last := (h.next + recentDigests - 1) % recentDigests
	if (h.next > 0 || h.full) && h.ring[last].Epoch == m.Epoch {
		h.ring[last].Digest = m.Schema.Digest() // a restore at the same epoch
		return
	}
	h.ring[h.next] = EpochDigest{Epoch: m.Epoch, Digest: m.Schema.Digest()}
	h.next = (h.next + 1) % recentDigests
	if h.next == 0 {
		h.full = true
	}
}

// list returns the pairs oldest first; the caller owns the slice.
func (h *digestRing) list() []EpochDigest {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.full {
		return append([]EpochDigest(nil), h.ring[:h.next]...)
	}
	return append(append([]EpochDigest(nil), h.ring[h.next:]...), h.ring[:h.next]...)
}

// RecentDigests returns the most recent (epoch, digest) pairs this state
// machine published, oldest first, at most 256: enough for an agreement
// check to name the epoch where two members' schemas parted.
func (sm *StateMachine) RecentDigests() []EpochDigest { return sm.digests.list() }

// reset forgets every pair (the state they describe was replaced).
func (h *digestRing) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next, h.full = 0, false
}
