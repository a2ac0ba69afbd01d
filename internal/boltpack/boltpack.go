package boltpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/metalog/metalog/internal/boltformat"
)

// inlineRatio is bbolt's: a bucket without nested buckets whose one
// leaf takes at most a quarter of a page is stored inline.
const inlineRatio = 4

// ErrOrder is matched by the error of a key that is not above the key
// before it in its bucket, or of a write to a bucket that is closed or
// has a nested bucket open.
var ErrOrder = errors.New("boltpack: keys out of order")

// File is a bbolt file being written, all in memory. Keys go into each
// bucket in ascending order, so every page is filled completely and
// written once: the file holds no free pages and no freelist (bbolt
// rebuilds the freelist when it opens a file with NoFreelistSync).
type File struct {
	pageSize int
	buf      []byte // the pages so far; pages 0 and 1, the metas, come last
	next     uint64 // the next page id
	root     *Bucket
}

// New starts a file of pages of pageSize bytes (a power of two from 512
// to 1 MiB, as bbolt accepts), with room for about sizeHint bytes.
func New(pageSize, sizeHint int) *File {
	if pageSize < 512 || pageSize > 1<<20 || pageSize&(pageSize-1) != 0 {
		panic(fmt.Sprintf("boltpack: page size %d", pageSize))
	}
	f := &File{pageSize: pageSize, next: 2, buf: make([]byte, 2*pageSize, max(sizeHint, 4*pageSize))}
	f.root = &Bucket{f: f, levels: []*level{{flags: boltformat.FlagLeaf}}}
	return f
}

// Root returns the root bucket, which holds the top-level buckets.
func (f *File) Root() *Bucket { return f.root }

// Finish closes the root bucket and returns the file's bytes, its meta
// pages written. Every bucket must be closed. The File is done with.
func (f *File) Finish() ([]byte, error) {
	if f.root.open != nil {
		return nil, fmt.Errorf("%w: bucket %q is still open", ErrOrder, f.root.open.key)
	}
	root := f.root.pages()
	for id := range uint64(2) {
		f.writeMeta(id, root)
	}
	return f.buf, nil
}

// writeMeta writes meta page id (0 or 1, whose transaction id it is too)
// for the root bucket's page root.
func (f *File) writeMeta(id, root uint64) {
	p := f.buf[int(id)*f.pageSize:]
	binary.LittleEndian.PutUint64(p, id)
	binary.LittleEndian.PutUint16(p[8:], boltformat.FlagMeta)
	m := p[boltformat.PageHeaderSize:]
	binary.LittleEndian.PutUint32(m, boltformat.Magic)
	binary.LittleEndian.PutUint32(m[4:], boltformat.Version)
	binary.LittleEndian.PutUint32(m[8:], uint32(f.pageSize))
	binary.LittleEndian.PutUint64(m[16:], root) // the root bucket: root page, sequence 0
	binary.LittleEndian.PutUint64(m[32:], boltformat.NoFreelist)
	binary.LittleEndian.PutUint64(m[40:], f.next) // the high water mark
	binary.LittleEndian.PutUint64(m[48:], id)     // the transaction id
	h := fnv.New64a()
	h.Write(m[:boltformat.MetaSumOffset])
	binary.LittleEndian.PutUint64(m[boltformat.MetaSumOffset:], h.Sum64())
}

// Bucket is a bucket being written. Its keys come in strictly ascending
// order, each a value (Put) or a nested bucket (Bucket, written whole and
// closed before the next key). Nested buckets have sequence 0.
type Bucket struct {
	f      *File
	key    []byte // its key in its parent
	parent *Bucket
	// levels are the pages being filled, leaves first, then the branch
	// levels above them.
	levels []*level
	nested bool    // it holds a nested bucket, so it is not inline
	last   []byte  // the last key put, in levels[0] or a page written
	open   *Bucket // the nested bucket being written
	closed bool
}

// level is the page being filled at one level of a bucket's tree.
type level struct {
	flags uint16 // boltformat.FlagLeaf or FlagBranch
	elems []element
	data  []byte // the keys and values of elems, one after the other
	pages int    // pages written at this level
}

// element is one key of a page: in data from off, its key of klen bytes
// and (in a leaf) its value of vlen bytes; in a branch, the child page.
type element struct {
	flags      uint32
	off        int
	klen, vlen int
	child      uint64
}

// Put puts value under key, which must be above the last key of b.
func (b *Bucket) Put(key, value []byte) error {
	if err := b.next(key); err != nil {
		return err
	}
	b.add(0, 0, key, value, 0)
	return nil
}

// Bucket starts the nested bucket under key, which must be above the last
// key of b. Close it before anything else is put into b.
func (b *Bucket) Bucket(key []byte) (*Bucket, error) {
	if err := b.next(key); err != nil {
		return nil, err
	}
	b.nested = true
	n := &Bucket{f: b.f, key: bytes.Clone(key), parent: b, levels: []*level{{flags: boltformat.FlagLeaf}}}
	b.open = n
	return n, nil
}

// Close ends the nested bucket b and puts it into its parent.
func (b *Bucket) Close() error {
	switch {
	case b.parent == nil:
		return fmt.Errorf("%w: the root bucket closes with Finish", ErrOrder)
	case b.closed || b.parent.open != b:
		return fmt.Errorf("%w: bucket %q is closed", ErrOrder, b.key)
	case b.open != nil:
		return fmt.Errorf("%w: bucket %q is still open", ErrOrder, b.open.key)
	}
	b.closed = true
	p := b.parent
	p.open = nil
	if value, ok := b.inline(); ok {
		p.add(0, boltformat.LeafBucket, b.key, value, 0)
		return nil
	}
	var head [boltformat.BucketHeader]byte
	binary.LittleEndian.PutUint64(head[:], b.pages())
	p.add(0, boltformat.LeafBucket, b.key, head[:], 0)
	return nil
}

// next checks that key may come next in b, and records it as the last.
func (b *Bucket) next(key []byte) error {
	switch {
	case b.closed:
		return fmt.Errorf("%w: bucket %q is closed", ErrOrder, b.key)
	case b.open != nil:
		return fmt.Errorf("%w: bucket %q is still open", ErrOrder, b.open.key)
	case len(key) == 0:
		return fmt.Errorf("%w: an empty key", ErrOrder)
	case b.last != nil && bytes.Compare(key, b.last) <= 0:
		return fmt.Errorf("%w: key %q after %q", ErrOrder, key, b.last)
	}
	b.last = append(b.last[:0], key...)
	return nil
}

// inline returns the value of b as an inline bucket, if it is one: a
// single leaf without nested buckets, at most a quarter of a page.
func (b *Bucket) inline() ([]byte, bool) {
	l := b.levels[0]
	size := boltformat.PageHeaderSize + len(l.elems)*boltformat.ElementSize + len(l.data)
	if len(b.levels) > 1 || l.pages > 0 || b.nested || size > b.f.pageSize/inlineRatio {
		return nil, false
	}
	v := make([]byte, boltformat.BucketHeader+size)
	l.layout(v[boltformat.BucketHeader:], 0, 0)
	return v, true
}

// add adds an element to the page of level n, writing that page first
// when the element does not fit beside what it holds.
func (b *Bucket) add(n int, flags uint32, key, value []byte, child uint64) {
	l := b.levels[n]
	size := boltformat.PageHeaderSize + (len(l.elems)+1)*boltformat.ElementSize + len(l.data) + len(key) + len(value)
	if len(l.elems) > 0 && size > b.f.pageSize {
		b.flush(n)
	}
	off := len(l.data)
	l.data = append(append(l.data, key...), value...)
	l.elems = append(l.elems, element{flags: flags, off: off, klen: len(key), vlen: len(value), child: child})
}

// flush writes the page of level n and adds it, under its first key, to
// the level above.
func (b *Bucket) flush(n int) {
	l := b.levels[n]
	first := l.data[:l.elems[0].klen]
	id := b.f.write(l)
	if n+1 == len(b.levels) {
		b.levels = append(b.levels, &level{flags: boltformat.FlagBranch})
	}
	b.add(n+1, 0, first, nil, id)
	l.elems, l.data = l.elems[:0], l.data[:0]
}

// pages writes what is left of b's tree and returns its root page.
func (b *Bucket) pages() uint64 {
	for n := 0; ; n++ {
		l := b.levels[n]
		if n == len(b.levels)-1 && l.pages == 0 {
			return b.f.write(l)
		}
		b.flush(n)
	}
}

// write writes the page of level l at the end of the file (with overflow
// pages when it holds more than a page) and returns its id.
func (f *File) write(l *level) uint64 {
	size := boltformat.PageHeaderSize + len(l.elems)*boltformat.ElementSize + len(l.data)
	count := (size + f.pageSize - 1) / f.pageSize
	id := f.next
	f.next += uint64(count)
	start := len(f.buf)
	f.buf = append(f.buf, make([]byte, count*f.pageSize)...)
	l.layout(f.buf[start:], id, uint32(count-1))
	l.pages++
	return id
}

// layout writes the page of l, with id and overflow (the pages after
// its first), into p.
func (l *level) layout(p []byte, id uint64, overflow uint32) {
	elems := boltformat.PageHeaderSize + len(l.elems)*boltformat.ElementSize
	binary.LittleEndian.PutUint64(p, id)
	binary.LittleEndian.PutUint16(p[8:], l.flags)
	binary.LittleEndian.PutUint16(p[10:], uint16(len(l.elems)))
	binary.LittleEndian.PutUint32(p[12:], overflow)
	copy(p[elems:], l.data)
	for i, e := range l.elems {
		at := boltformat.PageHeaderSize + i*boltformat.ElementSize
		pos := uint32(elems + e.off - at)
		q := p[at:]
		if l.flags == boltformat.FlagBranch {
			binary.LittleEndian.PutUint32(q, pos)
			binary.LittleEndian.PutUint32(q[4:], uint32(e.klen))
			binary.LittleEndian.PutUint64(q[8:], e.child)
			continue
		}
		binary.LittleEndian.PutUint32(q, e.flags)
		binary.LittleEndian.PutUint32(q[4:], pos)
		binary.LittleEndian.PutUint32(q[8:], uint32(e.klen))
		binary.LittleEndian.PutUint32(q[12:], uint32(e.vlen))
	}
}
