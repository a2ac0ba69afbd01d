package raftlog

import (
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The entry cache keeps the most recent entries in memory: followers and
// the apply path read entries right after they are written, and serving
// them from memory saves a read from the wal and a decode per entry.
const (
	tailCacheEntries = 512
	tailCacheBytes   = 4 << 20
)

// entryCache holds the newest entries of the log, [first, first+len(ents)),
// the last of them the log's last entry when it is not empty. Its entries
// are immutable; its backing array is never handed out. It is not safe for
// concurrent use: Storage calls it under its mutex.
type entryCache struct {
	ents  []*raftpb.Entry
	first uint64
	bytes int // of the entries' data
}

// append adds ents, which follow the log's entries up to ents[0]'s index
// (replacing what the cache holds from there on), and drops the oldest
// entries beyond the cache's bounds.
func (c *entryCache) append(ents []*raftpb.Entry) {
	first := ents[0].GetIndex()
	if len(c.ents) > 0 && first >= c.first && first <= c.first+uint64(len(c.ents)) {
		cut := int(first - c.first)
		for _, e := range c.ents[cut:] {
			c.bytes -= len(e.GetData())
		}
		clear(c.ents[cut:])
		c.ents = c.ents[:cut]
	} else {
		c.reset()
		c.first = first
	}
	for _, e := range ents {
		c.bytes += len(e.GetData())
	}
	c.ents = append(c.ents, ents...)
	drop := 0
	for len(c.ents)-drop > tailCacheEntries || (c.bytes > tailCacheBytes && len(c.ents)-drop > 1) {
		c.bytes -= len(c.ents[drop].GetData())
		drop++
	}
	c.dropFront(drop)
}

// compact drops the entries at or before index.
func (c *entryCache) compact(index uint64) {
	if len(c.ents) > 0 && c.first <= index {
		drop := min(int(index-c.first+1), len(c.ents))
		for _, e := range c.ents[:drop] {
			c.bytes -= len(e.GetData())
		}
		c.dropFront(drop)
	}
}

// dropFront drops the first n entries, whose bytes are already uncounted.
func (c *entryCache) dropFront(n int) {
	if n == 0 {
		return
	}
	k := copy(c.ents, c.ents[n:])
	clear(c.ents[k:])
	c.ents = c.ents[:k]
	c.first += uint64(n)
}

// reset empties the cache.
func (c *entryCache) reset() {
	clear(c.ents)
	c.ents = c.ents[:0]
	c.first = 0
	c.bytes = 0
}

// term returns the term of entry i, if cached.
func (c *entryCache) term(i uint64) (uint64, bool) {
	if len(c.ents) == 0 || i < c.first || i-c.first >= uint64(len(c.ents)) {
		return 0, false
	}
	return c.ents[i-c.first].GetTerm(), true
}

// entries returns, if lo is cached, entries [lo, hi) as Storage.Entries
// does: at least one, and no more than maxSize encoded bytes beyond the
// first, in a new slice (its only allocation). hi must not be past the
// last entry + 1.
func (c *entryCache) entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, bool) {
	if len(c.ents) == 0 || lo < c.first {
		return nil, false
	}
	src := c.ents[lo-c.first : hi-c.first]
	n, size := 1, uint64(proto.Size(src[0]))
	for ; n < len(src); n++ {
		size += uint64(proto.Size(src[n]))
		if size > maxSize {
			break
		}
	}
	out := make([]*raftpb.Entry, n)
	copy(out, src)
	return out, true
}
