package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"

	"github.com/metalog/metalog/internal/boltformat"
)

// maxDepth bounds the nesting of pages and buckets walked; bbolt's
// trees are a handful of levels deep, a cycle is caught before this.
const maxDepth = 64

// ErrDamaged is matched (errors.Is) by every *Error.
var ErrDamaged = errors.New("damaged")

// Error is a damage found in a file: which file, what kind of damage,
// where in it (a page, a bucket and key) and what is wrong there.
type Error struct {
	File string
	// Kind is the kind of damage, a metric label: KindPages for the page
	// structure Verify walks; the file's owner adds its own kinds.
	Kind   string
	Where  string
	Detail string
}

// KindPages is the Kind of the damages Verify finds.
const KindPages = "pages"

// KindRead is the Kind of the damages Guard finds.
const KindRead = "read"

func (e *Error) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("%s is damaged: %s", e.File, e.Detail)
	}
	return fmt.Sprintf("%s is damaged at %s: %s", e.File, e.Where, e.Detail)
}

// Is makes every *Error match ErrDamaged.
func (e *Error) Is(target error) bool { return target == ErrDamaged }

// Summary is what Verify found in a sound file.
type Summary struct {
	PageSize int
	// Pages is the high water mark: the file's pages in use.
	Pages uint64
	// Reached is how many pages the walk reached (branches, leaves and
	// their overflow).
	Reached int
	// TxID is the transaction of the meta page in use.
	TxID uint64
}

// Verify checks the page structure of the bbolt file at path. It returns
// an *Error for damage, another error when the file cannot be read at all.
// It never maps the file and never panics on its content.
func Verify(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Summary{}, err
	}
	w := &walker{r: &chunkReader{r: f}, size: fi.Size(), path: path}
	m, err := w.meta()
	if err != nil {
		return Summary{}, err
	}
	w.pageSize, w.hwm = int(m.pageSize), m.pgid
	if m.pgid < 2 || m.pgid > uint64(w.size)/uint64(w.pageSize) {
		return Summary{}, w.damage(loc{}, "the meta page counts %d pages of %d bytes, the file holds %d bytes", w.hwm, w.pageSize, w.size)
	}
	w.reached = make([]uint64, (w.hwm+63)/64)
	if m.freelist != boltformat.NoFreelist {
		if _, err := w.page(m.freelist, boltformat.FlagFreelist, loc{freelist: true}, 0); err != nil {
			return Summary{}, err
		}
	}
	if err := w.tree(m.root, loc{root: true}, nil, nil, 1); err != nil {
		return Summary{}, err
	}
	return Summary{PageSize: w.pageSize, Pages: w.hwm, Reached: w.count, TxID: m.txid}, nil
}

// meta is the fields of a meta page the walk needs.
type meta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// walker walks the pages of one file.
type walker struct {
	r        io.ReaderAt
	size     int64
	path     string
	pageSize int
	hwm      uint64
	reached  []uint64 // a bit per page below hwm
	count    int      // pages reached
	// bufs holds a page buffer per depth: a page's keys stay valid while
	// the pages below it are read.
	bufs [][]byte
}

// loc is where in the file the walk is: the page and element that point
// to a page or hold a bucket. It becomes text only for an error.
type loc struct {
	page     uint64 // 0: the root bucket, the meta or the freelist
	elem     int
	bucket   []byte // the key of the bucket the element holds
	inline   bool   // in the inline page of bucket
	root     bool
	meta     bool
	freelist bool
}

func (l loc) String() string {
	switch {
	case l.meta:
		return "meta pages 0 and 1"
	case l.freelist:
		return "the freelist"
	case l.root:
		return "the root bucket"
	case l.page == 0:
		return ""
	case l.bucket != nil && l.inline:
		return fmt.Sprintf("the inline bucket %q in page %d element %d", l.bucket, l.page, l.elem)
	case l.bucket != nil:
		return fmt.Sprintf("bucket %q in page %d element %d", l.bucket, l.page, l.elem)
	}
	return fmt.Sprintf("page %d element %d", l.page, l.elem)
}

func (w *walker) damage(at loc, format string, args ...any) error {
	return &Error{File: w.path, Kind: KindPages, Where: at.String(), Detail: fmt.Sprintf(format, args...)}
}

// meta returns the meta page bbolt would use: the valid one of the two
// with the higher transaction id, valid as bbolt validates it (magic,
// version, checksum; not the page's flags, which bbolt never reads). Its
// page size must be sane, and the same as the other valid meta page's.
func (w *walker) meta() (meta, error) {
	if w.size < 2*boltformat.PageHeaderSize+2*boltformat.MetaSize {
		return meta{}, w.damage(loc{}, "%d bytes is too short for a bbolt file", w.size)
	}
	m0, err0 := w.readMeta(0)
	size := int64(4096)
	if err0 == nil && saneSize(m0.pageSize) {
		size = int64(m0.pageSize)
	}
	m1, err1 := w.readMeta(size)
	var m meta
	switch {
	case err0 == nil && err1 == nil:
		if m0.pageSize != m1.pageSize {
			return meta{}, w.damage(loc{meta: true}, "page sizes %d and %d", m0.pageSize, m1.pageSize)
		}
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case err0 == nil:
		m = m0
	case err1 == nil:
		m = m1
	default:
		return meta{}, w.damage(loc{meta: true}, "neither is valid (%v; %v)", err0, err1)
	}
	if !saneSize(m.pageSize) {
		return meta{}, w.damage(loc{meta: true}, "page size %d", m.pageSize)
	}
	return m, nil
}

// saneSize reports whether size is a page size bbolt could have written.
func saneSize(size uint32) bool {
	return size >= 512 && size <= 1<<20 && size&(size-1) == 0
}

// readMeta reads and validates the meta page at offset off, as bbolt
// does.
func (w *walker) readMeta(off int64) (meta, error) {
	buf := make([]byte, boltformat.PageHeaderSize+boltformat.MetaSize)
	if _, err := w.r.ReadAt(buf, off); err != nil {
		return meta{}, fmt.Errorf("read: %w", err)
	}
	b := buf[boltformat.PageHeaderSize:]
	h := fnv.New64a()
	h.Write(b[:boltformat.MetaSumOffset])
	switch {
	case binary.LittleEndian.Uint32(b[0:]) != boltformat.Magic:
		return meta{}, errors.New("bad magic number")
	case binary.LittleEndian.Uint32(b[4:]) != boltformat.Version:
		return meta{}, fmt.Errorf("format version %d, not %d", binary.LittleEndian.Uint32(b[4:]), boltformat.Version)
	case binary.LittleEndian.Uint64(b[boltformat.MetaSumOffset:]) != h.Sum64():
		return meta{}, errors.New("checksum mismatch")
	}
	return meta{
		pageSize: binary.LittleEndian.Uint32(b[8:]),
		root:     binary.LittleEndian.Uint64(b[16:]),
		freelist: binary.LittleEndian.Uint64(b[32:]),
		pgid:     binary.LittleEndian.Uint64(b[40:]),
		txid:     binary.LittleEndian.Uint64(b[48:]),
	}, nil
}

// page reads page id with its overflow into the buffer of depth,
// checking its header: in bounds, its own id, of the kind wanted,
// reached once. from is what points to it.
func (w *walker) page(id uint64, want uint16, from loc, depth int) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, w.damage(from, "page %d is outside the pages in use (2 to %d)", id, w.hwm-1)
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, make([]byte, w.pageSize))
	}
	buf := w.bufs[depth][:w.pageSize]
	off := int64(id) * int64(w.pageSize)
	if _, err := w.r.ReadAt(buf, off); err != nil {
		return nil, w.damage(from, "page %d cannot be read: %v", id, err)
	}
	if self := binary.LittleEndian.Uint64(buf); self != id {
		return nil, w.damage(from, "page %d says it is page %d", id, self)
	}
	flags := binary.LittleEndian.Uint16(buf[8:])
	if flags&want == 0 || flags&(flags-1) != 0 {
		return nil, w.damage(from, "page %d has type %#x where %s is expected", id, flags, kinds(want))
	}
	overflow := uint64(binary.LittleEndian.Uint32(buf[12:]))
	if id+overflow >= w.hwm {
		return nil, w.damage(from, "page %d: %d overflow pages run past the pages in use (%d)", id, overflow, w.hwm)
	}
	for i := id; i <= id+overflow; i++ {
		if w.reached[i/64]&(1<<(i%64)) != 0 {
			return nil, w.damage(from, "page %d is reached twice", i)
		}
		w.reached[i/64] |= 1 << (i % 64)
		w.count++
	}
	if overflow > 0 {
		n := int(overflow+1) * w.pageSize
		if cap(w.bufs[depth]) < n {
			w.bufs[depth] = make([]byte, n)
		}
		buf = w.bufs[depth][:n]
		if _, err := w.r.ReadAt(buf, off); err != nil {
			return nil, w.damage(from, "page %d cannot be read: %v", id, err)
		}
	}
	return buf, nil
}

func kinds(want uint16) string {
	switch want {
	case boltformat.FlagBranch | boltformat.FlagLeaf:
		return "a branch or leaf page"
	case boltformat.FlagFreelist:
		return "a freelist page"
	}
	return fmt.Sprintf("page type %#x", want)
}

// tree walks the page id, pointed to from, and what it points to. Every
// key must be at least low (when not nil) and below high (when not nil).
func (w *walker) tree(id uint64, from loc, low, high []byte, depth int) error {
	if depth > maxDepth {
		return w.damage(from, "pages nest deeper than %d", maxDepth)
	}
	buf, err := w.page(id, boltformat.FlagBranch|boltformat.FlagLeaf, from, depth)
	if err != nil {
		return err
	}
	return w.elements(buf, loc{page: id}, low, high, depth)
}

// elements checks the elements of the page p (header included), which is
// at, and walks what they point to.
func (w *walker) elements(p []byte, at loc, low, high []byte, depth int) error {
	if len(p) < boltformat.PageHeaderSize {
		return w.damage(at, "a page of %d bytes", len(p))
	}
	flags := binary.LittleEndian.Uint16(p[8:])
	count := int(binary.LittleEndian.Uint16(p[10:]))
	if flags != boltformat.FlagBranch && flags != boltformat.FlagLeaf {
		return w.damage(at, "page type %#x, not a branch or leaf", flags)
	}
	if boltformat.PageHeaderSize+count*boltformat.ElementSize > len(p) {
		return w.damage(at, "%d elements do not fit in %d bytes", count, len(p))
	}
	if flags == boltformat.FlagBranch && count == 0 {
		return w.damage(at, "a branch page without elements")
	}
	var prev []byte
	for i := range count {
		at.elem = i
		key, value, err := w.element(p, i, flags == boltformat.FlagBranch, at)
		if err != nil {
			return err
		}
		if (prev != nil && bytes.Compare(key, prev) <= 0) || (i == 0 && low != nil && bytes.Compare(key, low) < 0) || (high != nil && bytes.Compare(key, high) >= 0) {
			return w.damage(at, "key %x is out of order", key)
		}
		prev = key
		if err := w.descend(p, i, flags == boltformat.FlagBranch, key, value, at, high, depth); err != nil {
			return err
		}
	}
	return nil
}

// element returns the key and (for a leaf) the value of element i of page
// p, checking they lie inside the page.
func (w *walker) element(p []byte, i int, branch bool, at loc) (key, value []byte, err error) {
	base := boltformat.PageHeaderSize + i*boltformat.ElementSize
	e := p[base : base+boltformat.ElementSize]
	var pos, ksize, vsize uint64
	if branch {
		pos, ksize = uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
	} else {
		pos, ksize, vsize = uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:])), uint64(binary.LittleEndian.Uint32(e[12:]))
	}
	start := uint64(base) + pos
	if end := start + ksize + vsize; end > uint64(len(p)) {
		return nil, nil, w.damage(at, "the key and value (%d bytes at %d) run past the page (%d bytes)", ksize+vsize, start, len(p))
	}
	return p[start : start+ksize], p[start+ksize : start+ksize+vsize], nil
}

// descend walks what element i of page p, at at, points to: a child page
// for a branch, a nested bucket for a leaf element that holds one.
func (w *walker) descend(p []byte, i int, branch bool, key, value []byte, at loc, high []byte, depth int) error {
	e := p[boltformat.PageHeaderSize+i*boltformat.ElementSize:]
	if branch {
		next := high
		if i+1 < int(binary.LittleEndian.Uint16(p[10:])) {
			next, _, _ = w.element(p, i+1, true, at)
		}
		return w.tree(binary.LittleEndian.Uint64(e[8:]), at, key, next, depth+1)
	}
	switch f := binary.LittleEndian.Uint32(e); f {
	case 0:
		return nil
	case boltformat.LeafBucket:
	default:
		return w.damage(at, "flags %#x", f)
	}
	at.bucket = key
	if len(value) < boltformat.BucketHeader {
		return w.damage(at, "a bucket value of %d bytes", len(value))
	}
	if root := binary.LittleEndian.Uint64(value); root != 0 {
		return w.tree(root, at, nil, nil, depth+1)
	}
	if depth+1 > maxDepth {
		return w.damage(at, "buckets nest deeper than %d", maxDepth)
	}
	at.inline = true
	return w.elements(value[boltformat.BucketHeader:], at, nil, nil, depth+1)
}

// chunkSize and chunks shape the read-ahead of chunkReader: bbolt writes
// the pages of a tree mostly next to each other, so reading a megabyte at
// a time makes one read of many pages.
const (
	chunkSize = 1 << 20
	chunks    = 4
)

// chunkReader reads through a few chunk-sized windows of the file,
// replaced in turn, and copies out of them.
type chunkReader struct {
	r    io.ReaderAt
	off  [chunks]int64 // offset of each window; data[i] empty when unused
	data [chunks][]byte
	next int // the window replaced next
}

// ReadAt fills p from a window holding all of it, reading one in if none
// does; a read larger than a window goes to the file.
func (c *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > chunkSize {
		return c.r.ReadAt(p, off)
	}
	for i := range chunks {
		if d := c.data[i]; off >= c.off[i] && off+int64(len(p)) <= c.off[i]+int64(len(d)) {
			return copy(p, d[off-c.off[i]:]), nil
		}
	}
	i := c.next
	c.next = (c.next + 1) % chunks
	if cap(c.data[i]) < chunkSize {
		c.data[i] = make([]byte, chunkSize)
	}
	n, err := c.r.ReadAt(c.data[i][:chunkSize], off)
	c.off[i], c.data[i] = off, c.data[i][:n]
	if n < len(p) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return copy(p, c.data[i]), nil
}

// Guard runs read, which opens or reads the bbolt file at path, turning a
// panic of bbolt or a memory fault (a page mapped past the end of a file
// cut short) into a damage of path, of kind KindRead: bbolt trusts its
// pages, and Verify walks only their structure.
func Guard(path string, read func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer Recover(&err, path)
	return read()
}

// Recover, deferred, turns a panic into a damage of path in *err, as
// Guard does, for a goroutine that reads a bbolt file (with
// debug.SetPanicOnFault set on it).
func Recover(err *error, path string) {
	if r := recover(); r != nil {
		*err = &Error{File: path, Kind: KindRead, Detail: fmt.Sprintf("reading it failed: %v", r)}
	}
}
