package boltcheck

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// The constants of bbolt's file format, version 2.
const (
	magic          = 0xED0CDAED
	formatVersion  = 2
	pageHeaderSize = 16
	elementSize    = 16
	bucketHeader   = 16
	metaSize       = 64 // magic .. checksum
	metaSumOffset  = 56 // the checksum covers the meta up to here
	noFreelist     = ^uint64(0)

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagFreelist = 0x10

	leafBucket = 0x01

	// maxDepth bounds the nesting of pages and buckets walked; bbolt's
	// trees are a handful of levels deep, a cycle is caught before this.
	maxDepth = 64
)

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
	w := &walker{r: f, size: fi.Size(), path: path, reached: map[uint64]bool{}}
	m, err := w.meta()
	if err != nil {
		return Summary{}, err
	}
	w.pageSize, w.hwm = int(m.pageSize), m.pgid
	if int64(w.hwm)*int64(w.pageSize) > w.size {
		return Summary{}, w.damage("", "the meta page counts %d pages of %d bytes, the file holds %d bytes", w.hwm, w.pageSize, w.size)
	}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return Summary{}, err
		}
	}
	if err := w.bucket(m.root, nil, "root bucket", 0); err != nil {
		return Summary{}, err
	}
	return Summary{PageSize: w.pageSize, Pages: w.hwm, Reached: len(w.reached), TxID: m.txid}, nil
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
	reached  map[uint64]bool
}

func (w *walker) damage(where, format string, args ...any) error {
	return &Error{File: w.path, Kind: KindPages, Where: where, Detail: fmt.Sprintf(format, args...)}
}

// meta returns the meta page bbolt would use: the valid one of the two
// with the higher transaction id, valid as bbolt validates it (magic,
// version, checksum; not the page's flags, which bbolt never reads). Its
// page size must be sane, and the same as the other valid meta page's.
func (w *walker) meta() (meta, error) {
	if w.size < 2*pageHeaderSize+2*metaSize {
		return meta{}, w.damage("", "%d bytes is too short for a bbolt file", w.size)
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
			return meta{}, w.damage("meta pages 0 and 1", "page sizes %d and %d", m0.pageSize, m1.pageSize)
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
		return meta{}, w.damage("meta pages 0 and 1", "neither is valid (%v; %v)", err0, err1)
	}
	if !saneSize(m.pageSize) {
		return meta{}, w.damage("meta page", "page size %d", m.pageSize)
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
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := w.r.ReadAt(buf, off); err != nil {
		return meta{}, fmt.Errorf("read: %w", err)
	}
	b := buf[pageHeaderSize:]
	h := fnv.New64a()
	h.Write(b[:metaSumOffset])
	switch {
	case binary.LittleEndian.Uint32(b[0:]) != magic:
		return meta{}, errors.New("bad magic number")
	case binary.LittleEndian.Uint32(b[4:]) != formatVersion:
		return meta{}, fmt.Errorf("format version %d, not %d", binary.LittleEndian.Uint32(b[4:]), formatVersion)
	case binary.LittleEndian.Uint64(b[metaSumOffset:]) != h.Sum64():
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

// page reads page id with its overflow, checking its header: in bounds,
// its own id, of the kind wanted, reached once.
func (w *walker) page(id uint64, want uint16, where string) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, w.damage(where, "page %d is outside the pages in use (2 to %d)", id, w.hwm-1)
	}
	hdr := make([]byte, pageHeaderSize)
	if _, err := w.r.ReadAt(hdr, int64(id)*int64(w.pageSize)); err != nil {
		return nil, w.damage(where, "page %d cannot be read: %v", id, err)
	}
	at := fmt.Sprintf("page %d", id)
	if self := binary.LittleEndian.Uint64(hdr); self != id {
		return nil, w.damage(at, "the page says it is page %d", self)
	}
	flags := binary.LittleEndian.Uint16(hdr[8:])
	if flags&want == 0 || flags&(flags-1) != 0 {
		return nil, w.damage(at, "page type %#x where %s expects %s", flags, where, kinds(want))
	}
	overflow := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if id+overflow >= w.hwm {
		return nil, w.damage(at, "%d overflow pages run past the pages in use (%d)", overflow, w.hwm)
	}
	for i := id; i <= id+overflow; i++ {
		if w.reached[i] {
			return nil, w.damage(at, "page %d is reached twice", i)
		}
		w.reached[i] = true
	}
	buf := make([]byte, (overflow+1)*uint64(w.pageSize))
	if _, err := w.r.ReadAt(buf, int64(id)*int64(w.pageSize)); err != nil {
		return nil, w.damage(at, "cannot be read: %v", err)
	}
	return buf, nil
}

func kinds(want uint16) string {
	switch want {
	case flagBranch | flagLeaf:
		return "a branch or leaf page"
	case flagFreelist:
		return "a freelist page"
	}
	return fmt.Sprintf("page type %#x", want)
}

// freelist checks the freelist page of a file that keeps one.
func (w *walker) freelist(id uint64) error {
	_, err := w.page(id, flagFreelist, "the freelist")
	return err
}

// bucket walks the bucket whose 16-byte header (and inline page, if any)
// is value. root is the header of the root bucket (value nil).
func (w *walker) bucket(root uint64, value []byte, where string, depth int) error {
	if value != nil {
		if len(value) < bucketHeader {
			return w.damage(where, "a bucket value of %d bytes", len(value))
		}
		root = binary.LittleEndian.Uint64(value)
		if root == 0 {
			return w.elements(value[bucketHeader:], where+" (inline)", nil, nil, depth+1)
		}
	}
	return w.tree(root, where, nil, nil, depth+1)
}

// tree walks the page id and what it points to. Every key must be at
// least low (when not nil) and below high (when not nil).
func (w *walker) tree(id uint64, where string, low, high []byte, depth int) error {
	if depth > maxDepth {
		return w.damage(where, "pages nest deeper than %d", maxDepth)
	}
	buf, err := w.page(id, flagBranch|flagLeaf, where)
	if err != nil {
		return err
	}
	return w.elements(buf, fmt.Sprintf("page %d", id), low, high, depth)
}

// elements checks the elements of the page p (header included) and walks
// what they point to.
func (w *walker) elements(p []byte, at string, low, high []byte, depth int) error {
	if len(p) < pageHeaderSize {
		return w.damage(at, "a page of %d bytes", len(p))
	}
	flags := binary.LittleEndian.Uint16(p[8:])
	count := int(binary.LittleEndian.Uint16(p[10:]))
	if flags != flagBranch && flags != flagLeaf {
		return w.damage(at, "page type %#x, not a branch or leaf", flags)
	}
	if pageHeaderSize+count*elementSize > len(p) {
		return w.damage(at, "%d elements do not fit in %d bytes", count, len(p))
	}
	if flags == flagBranch && count == 0 {
		return w.damage(at, "a branch page without elements")
	}
	var prev []byte
	for i := range count {
		e := p[pageHeaderSize+i*elementSize:]
		key, value, err := w.element(p, e, i, flags == flagBranch, at)
		if err != nil {
			return err
		}
		if (prev != nil && bytes.Compare(key, prev) <= 0) || (i == 0 && low != nil && bytes.Compare(key, low) < 0) || (high != nil && bytes.Compare(key, high) >= 0) {
			return w.damage(at, "key %d (%x) is out of order", i, key)
		}
		prev = key
		if err := w.descend(p, e, i, flags == flagBranch, key, value, at, high, depth); err != nil {
			return err
		}
	}
	return nil
}

// element returns the key and (for a leaf) the value of element i, whose
// 16 bytes are e, checking they lie inside the page p.
func (w *walker) element(p, e []byte, i int, branch bool, at string) (key, value []byte, err error) {
	base := len(p) - len(e) // offset of the element in p
	var pos, ksize, vsize uint64
	if branch {
		pos, ksize = uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
	} else {
		pos, ksize, vsize = uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:])), uint64(binary.LittleEndian.Uint32(e[12:]))
	}
	start := uint64(base) + pos
	if end := start + ksize + vsize; end > uint64(len(p)) {
		return nil, nil, w.damage(at, "element %d's key and value (%d bytes at %d) run past the page (%d bytes)", i, ksize+vsize, start, len(p))
	}
	return p[start : start+ksize], p[start+ksize : start+ksize+vsize], nil
}

// descend walks what element i of page p points to: a child page for a
// branch, a nested bucket for a leaf element that holds one.
func (w *walker) descend(p, e []byte, i int, branch bool, key, value []byte, at string, high []byte, depth int) error {
	if branch {
		next := high
		if i+1 < int(binary.LittleEndian.Uint16(p[10:])) {
			n := p[pageHeaderSize+(i+1)*elementSize:]
			next, _, _ = w.element(p, n, i+1, true, at)
		}
		child := binary.LittleEndian.Uint64(e[8:])
		return w.tree(child, fmt.Sprintf("%s element %d", at, i), key, next, depth+1)
	}
	switch binary.LittleEndian.Uint32(e) {
	case 0:
		return nil
	case leafBucket:
	default:
		return w.damage(at, "element %d has flags %#x", i, binary.LittleEndian.Uint32(e))
	}
	return w.bucket(0, value, fmt.Sprintf("bucket %q (%s)", key, at), depth)
}
