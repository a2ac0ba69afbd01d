package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// Magic is the first four bytes of every snapshot.
const Magic = "MLSN"

// Version is the format version this build writes and reads. A change that
// old decoders cannot read (other than adding a section) bumps it.
const Version = 1

// checksumSize is the size of the trailing SHA-256.
const checksumSize = sha256.Size

// headerSize is the magic and the version byte.
const headerSize = len(Magic) + 1

// SectionTag identifies a section of a snapshot.
type SectionTag uint64

// The sections this package encodes itself, in the order they are written.
// Contents.Sections may not use these tags.
const (
	sectionKeyspaces SectionTag = iota + 1
	sectionTypes
	sectionTables
	sectionIndexes
	sectionRequests
	// sectionFunctions holds the functions and aggregates. It is written
	// only when the schema has some, so that a snapshot of a schema
	// without them encodes as before they existed; the sections before it
	// are always written.
	sectionFunctions
	numBuiltinSections = int(sectionRequests)
)

// SectionGuardrails is the opaque section holding the cluster's guardrail
// settings. Package metadata writes it, in the encoding of
// guardrails.AppendSettings, once the settings have been set through the
// log, and reads it back on restore; without it the defaults apply. This
// package neither writes nor reads it by itself.
const SectionGuardrails SectionTag = 16

// SectionKeyspaceGuardrails is the opaque section holding the cluster's
// per-keyspace guardrail overrides, in the encoding of
// guardrails.AppendOverrides; package metadata writes it when there are
// any. Snapshots written before it existed lack it: no overrides.
const SectionKeyspaceGuardrails SectionTag = 18

// SectionHistoryName is the opaque section holding the name of the
// cluster's history (package metadata's HistoryName: the cluster id it
// names the history of and a random nonce), once the cluster named it.
// Snapshots written before it existed, or before the naming, lack it.
const SectionHistoryName SectionTag = 19

// SectionHistory is the opaque section of a backup holding the history
// records kept up to its epoch (package metadata encodes them); the
// snapshots members send each other leave it out.
const SectionHistory SectionTag = 17

var sectionNames = [...]string{
	sectionKeyspaces: "keyspaces",
	sectionTypes:     "types",
	sectionTables:    "tables",
	sectionIndexes:   "indexes",
	sectionRequests:  "requests",
	sectionFunctions: "functions",
}

// builtin reports whether t is one of the sections this package encodes.
func (t SectionTag) builtin() bool { return t >= sectionKeyspaces && t <= sectionFunctions }

// String returns the section's name, or "section N" for an opaque one.
func (t SectionTag) String() string {
	if t.builtin() {
		return sectionNames[t]
	}
	return fmt.Sprintf("section %d", uint64(t))
}

// Contents is what a snapshot holds: one version of the cluster metadata.
type Contents struct {
	// Epoch is the metadata epoch.
	Epoch uint64
	// Index is the raft log index the snapshot covers.
	Index uint64
	// Schema is the schema at Epoch.
	Schema schema.Schema
	// Requests are the remembered request ids and their results, oldest
	// first. Ids must be non-empty and distinct.
	Requests []Request
	// Sections are opaque sections for data this package does not
	// interpret (SectionGuardrails, and whatever a newer writer added).
	// Tags must be distinct, non-zero and outside the built-in range 1..6;
	// Encode writes them in tag order and Decode returns them in that
	// order.
	Sections []Section
}

// Request is one remembered request.
type Request struct {
	// ID is the client's request id.
	ID string
	// Record is the request's result, encoded and decoded by package
	// metadata; this package treats it as opaque bytes.
	Record []byte
}

// Section is an opaque, tagged part of a snapshot.
type Section struct {
	// Tag identifies the section.
	Tag SectionTag
	// Data is the section's content.
	Data []byte
}

// Errors. Every error Decode returns is a *CorruptError matching ErrCorrupt;
// the checksum and version failures also match their own value.
var (
	// ErrCorrupt is matched by every Decode error: the bytes are not a
	// snapshot this build can read.
	ErrCorrupt = errors.New("snapshot: corrupt snapshot")
	// ErrChecksum means the trailing SHA-256 does not match the content.
	ErrChecksum = errors.New("snapshot: checksum mismatch")
	// ErrUnsupportedVersion means the snapshot was written in a format
	// version this build does not read.
	ErrUnsupportedVersion = errors.New("snapshot: unsupported version")
)

// CorruptError says why bytes are not a valid snapshot and where.
type CorruptError struct {
	// Offset is the byte offset in the snapshot where the problem was found.
	Offset int
	// Reason is the description, e.g. "truncated at byte 17".
	Reason string
	// Kind is ErrChecksum, ErrUnsupportedVersion or nil.
	Kind error
	// Err is the underlying error, e.g. a *schema.Error; nil if none.
	Err error
}

// Error returns the reason, prefixed with "snapshot: ".
func (e *CorruptError) Error() string { return "snapshot: " + e.Reason }

// Is matches ErrCorrupt and the error's Kind.
func (e *CorruptError) Is(target error) bool {
	return target == ErrCorrupt || (e.Kind != nil && target == e.Kind)
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Encode appends the encoding of c to dst and returns the extended slice.
// Equal contents give equal bytes. It walks the whole schema, allocating
// the per-keyspace object lists; the output grows dst as needed (pass a dst
// with capacity from the previous snapshot to avoid regrowth). It panics if
// c.Sections holds a built-in or duplicate tag, which is a caller bug.
//
// The encoding, of which this comment is the specification (all integers
// are unsigned varints unless noted):
//
//	"MLSN" version(1 byte)
//	epoch index schema-digest(32 bytes)
//	sections: tag length body, tags strictly increasing
//	  1 keyspaces  count, then per record: length, schema.AppendKeyspace
//	  2 types      count, then length, schema.AppendUserType
//	  3 tables     count, then length, schema.AppendTable (views among them)
//	  4 indexes    count, then length, schema.AppendIndex
//	  5 requests   count, then per request: length id, length record
//	  6 functions  count, then length, schema.AppendFunction (aggregates
//	               too); only when the schema has functions or aggregates
//	  others       opaque (Contents.Sections): SectionGuardrails (16),
//	               SectionHistory (17) in backups only,
//	               SectionKeyspaceGuardrails (18), SectionHistoryName (19)
//	SHA-256 of everything before it (32 bytes)
//
// Objects are in keyspace order and, within a keyspace, in name order, so
// that Decode rebuilds the schema with schema.Schema's builders (keyspaces,
// then types, tables, indexes and functions) and checks the result against
// the stored digest. Sections 1 to 5 are always present. A section with a
// tag Decode does not know is kept in Contents.Sections, so that nodes carry
// along the sections added after them.
func Encode(dst []byte, c *Contents) []byte {
	start := len(dst)
	dst = appendHeader(dst, c)
	keyspaces := c.Schema.Keyspaces()
	dst = appendSection(dst, sectionKeyspaces, func(dst []byte) []byte {
		dst = binary.AppendUvarint(dst, uint64(len(keyspaces)))
		for _, k := range keyspaces {
			dst = appendPrefixed(dst, func(dst []byte) []byte { return schema.AppendKeyspace(dst, k) })
		}
		return dst
	})
	dst = appendSection(dst, sectionTypes, func(dst []byte) []byte {
		return appendKeyspaceObjects(dst, keyspaces, (*schema.Keyspace).UserTypes, schema.AppendUserType)
	})
	dst = appendSection(dst, sectionTables, func(dst []byte) []byte {
		return appendTables(dst, c.Schema.TableCount()+c.Schema.ViewCount(), keyspaces)
	})
	dst = appendSection(dst, sectionIndexes, func(dst []byte) []byte {
		return appendKeyspaceObjects(dst, keyspaces, (*schema.Keyspace).Indexes, schema.AppendIndex)
	})
	dst = appendSection(dst, sectionRequests, func(dst []byte) []byte { return appendRequests(dst, c.Requests) })
	if functions := keyspaceFunctions(keyspaces); functions != nil {
		dst = appendSection(dst, sectionFunctions, func(dst []byte) []byte {
			return appendKeyspaceObjects(dst, keyspaces, func(k *schema.Keyspace) []*schema.Function { return functions[k.Name] }, schema.AppendFunction)
		})
	}
	dst = appendOpaqueSections(dst, c.Sections)
	sum := sha256.Sum256(dst[start:])
	return append(dst, sum[:]...)
}

// appendHeader appends the magic, the version, the epoch and index, and the
// schema digest that Decode checks the rebuilt schema against.
func appendHeader(dst []byte, c *Contents) []byte {
	dst = append(dst, Magic...)
	dst = append(dst, Version)
	dst = binary.AppendUvarint(dst, c.Epoch)
	dst = binary.AppendUvarint(dst, c.Index)
	digest := c.Schema.Digest()
	return append(dst, digest[:]...)
}

// appendKeyspaceObjects appends the body of the types or the indexes
// section: the count of the objects list returns for all keyspaces, then
// each object, length-prefixed, keyspace by keyspace. The schema keeps no
// schema-wide count of these, so it lists every keyspace's objects first
// to write the count ahead of them.
func appendKeyspaceObjects[T any](dst []byte, keyspaces []*schema.Keyspace, list func(*schema.Keyspace) []T, appendObject func([]byte, T) []byte) []byte {
	n := 0
	lists := make([][]T, len(keyspaces))
	for i, k := range keyspaces {
		lists[i] = list(k)
		n += len(lists[i])
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	for _, l := range lists {
		for _, v := range l {
			dst = appendPrefixed(dst, func(dst []byte) []byte { return appendObject(dst, v) })
		}
	}
	return dst
}

// keyspaceFunctions returns the functions and aggregates of each keyspace
// that has some, by keyspace name; nil when none has any.
func keyspaceFunctions(keyspaces []*schema.Keyspace) map[string][]*schema.Function {
	var out map[string][]*schema.Function
	for _, k := range keyspaces {
		if k.FunctionCount() == 0 {
			continue
		}
		if out == nil {
			out = map[string][]*schema.Function{}
		}
		out[k.Name] = k.Functions()
	}
	return out
}

// appendTables appends the body of the tables section: the count of
// tables and materialized views, which the schema keeps, then every table
// and view, length-prefixed, keyspace by keyspace, listing one keyspace's
// tables at a time (in name order, views among them).
func appendTables(dst []byte, count int, keyspaces []*schema.Keyspace) []byte {
	dst = binary.AppendUvarint(dst, uint64(count))
	for _, k := range keyspaces {
		for _, t := range k.Tables() {
			dst = appendPrefixed(dst, func(dst []byte) []byte { return schema.AppendTable(dst, t) })
		}
	}
	return dst
}

// appendRequests appends the body of the requests section: the count, then
// each request's id and record, each length-prefixed.
func appendRequests(dst []byte, requests []Request) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(requests)))
	for _, r := range requests {
		dst = binary.AppendUvarint(dst, uint64(len(r.ID)))
		dst = append(dst, r.ID...)
		dst = binary.AppendUvarint(dst, uint64(len(r.Record)))
		dst = append(dst, r.Record...)
	}
	return dst
}

// appendOpaqueSections appends the sections this package does not
// interpret, in tag order after the built-in ones, as Decode requires. It
// panics on a reserved or repeated tag, which is a caller bug.
func appendOpaqueSections(dst []byte, sections []Section) []byte {
	if !slices.IsSortedFunc(sections, compareSections) {
		sections = slices.SortedFunc(slices.Values(sections), compareSections)
	}
	for i, s := range sections {
		if s.Tag == 0 || s.Tag.builtin() {
			panic(fmt.Sprintf("snapshot: Contents.Sections holds reserved tag %d", uint64(s.Tag)))
		}
		if i > 0 && sections[i-1].Tag == s.Tag {
			panic(fmt.Sprintf("snapshot: Contents.Sections holds tag %d twice", uint64(s.Tag)))
		}
		dst = binary.AppendUvarint(dst, uint64(s.Tag))
		dst = binary.AppendUvarint(dst, uint64(len(s.Data)))
		dst = append(dst, s.Data...)
	}
	return dst
}

// compareSections orders sections by tag, the order Encode writes them in.
func compareSections(a, b Section) int {
	switch {
	case a.Tag < b.Tag:
		return -1
	case a.Tag > b.Tag:
		return 1
	}
	return 0
}

// appendSection appends tag, the length of the body fn appends, and the body.
func appendSection(dst []byte, tag SectionTag, fn func([]byte) []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(tag))
	return appendPrefixed(dst, fn)
}

// appendPrefixed appends the uvarint length of what fn appends, then that.
// It reserves one length byte, which suffices for most records, and shifts
// the body when the length needs more.
func appendPrefixed(dst []byte, fn func([]byte) []byte) []byte {
	at := len(dst)
	dst = fn(append(dst, 0))
	n := len(dst) - at - 1
	if n < 0x80 {
		dst[at] = byte(n)
		return dst
	}
	var lenBuf [binary.MaxVarintLen64]byte
	l := binary.PutUvarint(lenBuf[:], uint64(n))
	dst = append(dst, lenBuf[:l-1]...) // grow by the extra length bytes
	copy(dst[at+l:], dst[at+1:at+1+n])
	copy(dst[at:], lenBuf[:l])
	return dst
}

// Decode decodes a snapshot produced by Encode. It checks the magic, the
// version and the checksum before anything else, then decodes and
// validates every object, rebuilds the schema and compares its digest with
// the stored one. Any problem is a *CorruptError matching ErrCorrupt. The
// result does not retain b.
func Decode(b []byte) (*Contents, error) {
	if n := min(len(b), len(Magic)); string(b[:n]) != Magic[:n] {
		return nil, &CorruptError{Reason: fmt.Sprintf("bad magic %q, not a metalog snapshot", b[:n])}
	}
	if len(b) < headerSize {
		return nil, truncated(len(b), "header")
	}
	if v := b[len(Magic)]; v != Version {
		return nil, &CorruptError{Offset: len(Magic), Kind: ErrUnsupportedVersion,
			Reason: fmt.Sprintf("unsupported version %d (this build reads version %d)", v, Version)}
	}
	if len(b) < headerSize+checksumSize {
		return nil, truncated(len(b), "checksum")
	}
	end := len(b) - checksumSize
	if sum := sha256.Sum256(b[:end]); !bytes.Equal(sum[:], b[end:]) {
		return nil, &CorruptError{Offset: end, Kind: ErrChecksum,
			Reason: fmt.Sprintf("checksum mismatch (stored %x, computed %x): the snapshot is damaged or truncated", b[end:end+8], sum[:8])}
	}
	d := &decoder{r: reader{b: b[:end], off: headerSize}, sch: new(schema.Builder)}
	return d.decode()
}

// truncated is the error for input that ends at off while reading what.
func truncated(off int, what string) *CorruptError {
	return &CorruptError{Offset: off, Reason: fmt.Sprintf("truncated at byte %d (reading %s)", off, what)}
}

// reader reads fields from b, keeping the first error. Offsets are
// absolute in the snapshot.
type reader struct {
	b   []byte
	off int
	err *CorruptError
}

// failf records a corruption found at off, unless an error is already
// recorded.
func (r *reader) failf(off int, format string, args ...any) {
	if r.err == nil {
		r.err = &CorruptError{Offset: off, Reason: fmt.Sprintf(format, args...) + fmt.Sprintf(" at byte %d", off)}
	}
}

// uvarint reads an unsigned varint; what names the field in the error.
func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		r.err = truncated(r.off, what)
		return 0
	case n < 0:
		r.failf(r.off, "bad varint in %s", what)
		return 0
	}
	r.off += n
	return v
}

// bytes returns the next n bytes (aliasing b).
func (r *reader) bytes(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.err = truncated(r.off, fmt.Sprintf("%s: %d bytes needed, %d left", what, n, len(r.b)-r.off))
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

// count reads a count of items of at least minSize bytes each and checks
// that they can fit in what is left, so a corrupt count cannot make the
// decoder allocate much.
func (r *reader) count(minSize int, what string) int {
	at := r.off
	n := r.uvarint(what + " count")
	if r.err == nil && n > uint64((len(r.b)-r.off)/minSize) {
		r.failf(at, "%s count %d exceeds the remaining %d bytes", what, n, len(r.b)-r.off)
		return 0
	}
	return int(n)
}

// decoder rebuilds Contents from a checked snapshot body.
type decoder struct {
	r      reader
	c      Contents
	sch    *schema.Builder // shared by the decoders of the sections
	digest [32]byte
}

// decode reads the epoch, the index, the digest and the sections, which
// must come in increasing tag order with every built-in one present, and
// checks the rebuilt schema against the digest.
func (d *decoder) decode() (*Contents, error) {
	r := &d.r
	d.c.Epoch, d.c.Index, d.digest = r.header()
	var prev SectionTag
	seen := 0
	for r.err == nil && r.off < len(r.b) {
		at := r.off
		tag, bodyAt, body := r.section()
		if r.err != nil {
			break
		}
		if tag == 0 || tag <= prev {
			r.failf(at, "section tag %d after %d (tags must increase)", uint64(tag), uint64(prev))
			break
		}
		prev = tag
		if !tag.builtin() {
			d.c.Sections = append(d.c.Sections, Section{Tag: tag, Data: bytes.Clone(body)})
			continue
		}
		if int(tag) != seen+1 {
			r.failf(at, "section %s without section %s", tag, SectionTag(seen+1))
			break
		}
		seen++
		// Parse the section with a reader limited to it, then require that
		// it consumed the whole section.
		sub := &decoder{r: reader{b: r.b[:bodyAt+len(body)], off: bodyAt}, sch: d.sch}
		sub.section(tag)
		if sub.r.err == nil && sub.r.off != len(sub.r.b) {
			sub.r.failf(sub.r.off, "%d trailing bytes in section %s", len(sub.r.b)-sub.r.off, tag)
		}
		if sub.r.err != nil {
			return nil, sub.r.err
		}
		d.c.Requests = append(d.c.Requests, sub.c.Requests...)
	}
	if r.err != nil {
		return nil, r.err
	}
	if seen < numBuiltinSections {
		r.failf(r.off, "section %s missing", SectionTag(seen+1))
		return nil, r.err
	}
	sch := d.sch.Schema()
	if got := sch.Digest(); got != d.digest {
		return nil, &CorruptError{Offset: headerSize, Reason: fmt.Sprintf("schema digest mismatch: stored %x, rebuilt schema has %x", d.digest[:8], got[:8])}
	}
	d.c.Schema = sch
	return &d.c, nil
}

// header reads the epoch, the index and the schema digest that follow the
// magic and the version.
func (r *reader) header() (epoch, index uint64, digest [32]byte) {
	epoch = r.uvarint("epoch")
	index = r.uvarint("index")
	copy(digest[:], r.bytes(32, "schema digest"))
	return epoch, index, digest
}

// section reads a section's tag and length and returns the tag, the
// offset of its body and the body (aliasing b).
func (r *reader) section() (tag SectionTag, bodyAt int, body []byte) {
	tag = SectionTag(r.uvarint("section tag"))
	size := r.uvarint(tag.String() + " length")
	bodyAt = r.off
	return tag, bodyAt, r.bytes(size, tag.String())
}

// section decodes the body of built-in section tag.
func (d *decoder) section(tag SectionTag) {
	switch tag {
	case sectionKeyspaces:
		prev := ""
		d.records("keyspace", func(i, at int, rec []byte) {
			k, err := schema.DecodeKeyspace(rec)
			if err != nil {
				d.objectError(at, "keyspace", i, rec, err)
				return
			}
			if i > 0 && k.Name <= prev {
				d.r.failf(at, "keyspace %s after %s (not in name order)", k.Name, prev)
				return
			}
			prev = k.Name
			d.sch.PutKeyspace(k)
		})
	case sectionTypes:
		putObjects(d, "type", schema.DecodeUserType, func(ut *schema.UserType) (ks, name string) { return ut.Keyspace, ut.Name },
			d.sch.PutUserType)
	case sectionTables:
		// Tables come keyspace by keyspace: the builder builds each
		// keyspace's table map in place instead of copying a path of it
		// for every table, and the decoder shares the keyspace's name and
		// the names and types its tables repeat.
		td := schema.NewTableDecoder(d.sch.Schema())
		putObjects(d, "table", td.Decode, func(t *schema.Table) (ks, name string) { return t.Keyspace, t.Name }, d.sch.PutTable)
	case sectionIndexes:
		putObjects(d, "index", schema.DecodeIndex, func(ix *schema.Index) (ks, name string) { return ix.Keyspace, ix.Name },
			d.sch.PutIndex)
	case sectionRequests:
		d.requests()
	case sectionFunctions:
		if d.r.off < len(d.r.b) && d.r.b[d.r.off] == 0 {
			d.r.failf(d.r.off, "empty functions section (a snapshot without functions has none)")
			return
		}
		putObjects(d, "function", schema.DecodeFunction, func(f *schema.Function) (ks, name string) { return f.Keyspace, f.Signature() },
			d.sch.PutFunction)
	}
}

// putObjects decodes the records of the types, tables or indexes section
// with decode, checks that they come in (keyspace, name) order, which
// keeps the encoding canonical, and adds each to the schema being rebuilt
// with put. The first failure becomes the decoder's error, naming the
// object's number and offset.
func putObjects[T any](d *decoder, what string, decode func([]byte) (T, error), key func(T) (ks, name string), put func(T) error) {
	var o order
	d.records(what, func(i, at int, rec []byte) {
		v, err := decode(rec)
		if err == nil {
			err = o.check(key(v))
		}
		if err == nil {
			err = put(v)
		}
		if err != nil {
			d.objectError(at, what, i, rec, err)
		}
	})
}

// records reads a count and that many length-prefixed records, calling fn
// with each record's number, offset and bytes.
func (d *decoder) records(what string, fn func(i, at int, rec []byte)) {
	r := &d.r
	n := r.count(2, what)
	lengthWhat := what + " length" // once, not per record
	for i := 0; i < n && r.err == nil; i++ {
		l := r.uvarint(lengthWhat)
		at := r.off
		rec := r.bytes(l, what)
		if r.err == nil {
			fn(i, at, rec)
		}
	}
}

// objectError records that object i of kind what, the record rec at
// offset at, is invalid, keeping err (often a *schema.Error) as the cause.
// The error names the object too when the record's header is readable.
func (d *decoder) objectError(at int, what string, i int, rec []byte, err error) {
	if d.r.err != nil {
		return
	}
	name := ""
	if ks, n, kerr := schema.RecordKey(rec); kerr == nil && what == "keyspace" {
		name = " " + clip.Quote(string(n))
	} else if kerr == nil {
		name = " " + clip.Quote(string(ks)+"."+string(n))
	}
	d.r.err = &CorruptError{Offset: at, Reason: fmt.Sprintf("%s %d%s at byte %d: %v", what, i, name, at, err), Err: err}
}

// requests decodes the requests section. Ids and records are copied into
// one allocation, so the result does not retain the input.
func (d *decoder) requests() {
	r := &d.r
	n := r.count(2, "request")
	if r.err != nil || n == 0 {
		return
	}
	arena := bytes.Clone(r.b[r.off:])
	base := r.off
	d.c.Requests = make([]Request, n)
	seen := make(map[string]struct{}, n)
	for i := range d.c.Requests {
		at := r.off
		id := r.bytes(r.uvarint("request id length"), "request id")
		rec := r.bytes(r.uvarint("request record length"), "request record")
		if r.err != nil {
			return
		}
		if len(id) == 0 {
			r.failf(at, "request %d has an empty id", i)
			return
		}
		recAt := r.off - len(rec) - base
		req := Request{ID: string(id), Record: arena[recAt : recAt+len(rec) : recAt+len(rec)]}
		if _, dup := seen[req.ID]; dup {
			r.failf(at, "request id %q appears twice", req.ID)
			return
		}
		seen[req.ID] = struct{}{}
		d.c.Requests[i] = req
	}
}

// order checks that objects come in (keyspace, name) order, which makes the
// encoding canonical and rules out duplicates.
type order struct {
	ks, name string
	started  bool
}

// check returns an error unless (ks, name) comes after the previous object.
func (o *order) check(ks, name string) error {
	if o.started {
		if c := strings.Compare(ks, o.ks); c < 0 || c == 0 && name <= o.name {
			return fmt.Errorf("%s.%s after %s.%s (not in keyspace, name order)", ks, name, o.ks, o.name)
		}
	}
	o.ks, o.name, o.started = ks, name, true
	return nil
}
