package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/benbjohnson/immutable"

	"github.com/metalog/metalog/internal/clip"
)

// recordKeyspaceObjects is the record kind of a keyspace encoded with all
// its objects (AppendKeyspaceObjects), distinct from recordKeyspace, the
// keyspace's own record.
const recordKeyspaceObjects = 'O'

// minNestedRecord is the fewest bytes a nested record takes: its length
// and its version and kind bytes. It bounds the counts read.
const minNestedRecord = 3

// AppendKeyspaceObjects appends the canonical encoding of k together with
// all its user types, tables and indexes to dst and returns the extended
// slice; it is how a change history stores the prior of a DROP KEYSPACE.
// The layout is the version and the record kind, the keyspace record
// (AppendKeyspace), then the user types (AppendUserType), the tables
// (AppendTable; materialized views among them, in name order) and the
// indexes (AppendIndex), each kind as a uvarint count
// followed by its records in name order; every nested record is prefixed
// by its uvarint length. The functions and aggregates (AppendFunction)
// follow the indexes in the same form only when the keyspace has some, so
// that a keyspace without functions encodes as before they existed and
// older encodings decode unchanged. Equal keyspaces encode to equal bytes.
//
// It walks all of k's objects, so it costs O(objects): it is made once per
// dropped keyspace, off the apply path. It allocates a scratch buffer and
// the map iterators besides growing dst. k must not be nil.
func AppendKeyspaceObjects(dst []byte, k *Keyspace) []byte {
	dst = append(dst, EncodingVersion, recordKeyspaceObjects)
	buf := make([]byte, 0, 256)
	buf = AppendKeyspace(buf, k)
	dst = appendRecord(dst, buf)
	dst, buf = appendRecords(dst, buf, k.types, AppendUserType)
	dst, buf = appendRecords(dst, buf, k.tables, AppendTable)
	dst, buf = appendRecords(dst, buf, k.indexes, AppendIndex)
	if k.FunctionCount() > 0 {
		dst, _ = appendRecords(dst, buf, k.functions, AppendFunction)
	}
	return dst
}

// appendRecord appends rec with its uvarint length.
func appendRecord(dst, rec []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rec)))
	return append(dst, rec...)
}

// appendRecords appends the count of m's values, then each value encoded by
// enc, in key order, as a nested record. buf is scratch space, returned
// for reuse. A nil m is empty.
func appendRecords[V any](dst, buf []byte, m *immutable.SortedMap[string, V], enc func([]byte, V) []byte) ([]byte, []byte) {
	if m == nil {
		return binary.AppendUvarint(dst, 0), buf
	}
	dst = binary.AppendUvarint(dst, uint64(m.Len()))
	it := m.Iterator()
	for !it.Done() {
		_, v, _ := it.Next()
		buf = enc(buf[:0], v)
		dst = appendRecord(dst, buf)
	}
	return dst, buf
}

// record reads a nested record written by appendRecord; the result aliases
// the input.
func (d *decoder) record() []byte {
	n := d.uvarint(math.MaxUint64)
	if left := uint64(len(d.b) - d.off); d.err == nil && n > left {
		d.fail("record length %d exceeds the %d bytes left", n, left)
		return nil
	}
	return d.bytes(int(n))
}

// records reads a count of nested records, bounded by the input left
// (every record takes minNestedRecord bytes) rather than by maxDecodeLen:
// a keyspace may hold more objects than one record holds parts.
func (d *decoder) records() int {
	n := d.uvarint(math.MaxUint64)
	if left := uint64(len(d.b) - d.off); d.err == nil && n > left/minNestedRecord {
		d.fail("count %d exceeds what the %d bytes left can hold", n, left)
		return 0
	}
	return int(n)
}

// DecodeKeyspaceObjects decodes a keyspace encoded by
// AppendKeyspaceObjects. The result is a full Keyspace, as if taken from a
// Schema: its objects, the per-keyspace indexes and its digest are built by
// loading each object into an empty schema with a Builder (PutKeyspace,
// PutUserType, PutTable, PutIndex, PutFunction), so every object is
// checked as those check it, plus that it belongs to the keyspace, that
// objects of a kind come in strictly increasing name order (so none is
// lost to a duplicate), that the user types used exist, and that the base
// of every materialized view is a table of the keyspace. Corrupt or
// invalid input returns an *Error matching ErrInvalid; b is not retained.
// It costs O(objects log objects).
func DecodeKeyspaceObjects(b []byte) (*Keyspace, error) {
	d := &decoder{b: b}
	d.header(recordKeyspaceObjects)
	rec := d.record()
	if d.err != nil {
		return nil, d.err
	}
	k, err := DecodeKeyspace(rec)
	if err != nil {
		return nil, nestedError("the keyspace record", 2, err)
	}
	l := keyspaceLoad{d: d, name: k.Name}
	l.b.PutKeyspace(k)
	if err := l.types(); err != nil {
		return nil, err
	}
	if err := l.tables(); err != nil {
		return nil, err
	}
	if err := l.indexes(); err != nil {
		return nil, err
	}
	if d.err == nil && d.off < len(d.b) {
		if err := l.functions(); err != nil {
			return nil, err
		}
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	return l.keyspace(), nil
}

// keyspaceLoad is the state of DecodeKeyspaceObjects past the keyspace
// record: the decoder, the keyspace's name and the builder of the schema
// being loaded.
type keyspaceLoad struct {
	d    *decoder
	name string
	b    Builder
}

// keyspace returns the keyspace as loaded so far.
func (l *keyspaceLoad) keyspace() *Keyspace {
	k, _ := l.b.Schema().Keyspace(l.name)
	return k
}

// next reads the next nested record and returns it with its offset in the
// input, or d.err.
func (l *keyspaceLoad) next() ([]byte, int, error) {
	at := l.d.off
	rec := l.d.record()
	return rec, at, l.d.err
}

// check fails the i-th object of kind what (e.g. "table"), named name,
// when it belongs to another keyspace or does not sort after prev, the
// name of the one before it.
func (l *keyspaceLoad) check(what string, i int, ks, name, prev string) error {
	switch {
	case ks != l.name:
		return l.corrupt(what, i, clip.String(name)+" belongs to keyspace "+clip.String(ks))
	case i > 0 && name <= prev:
		return l.corrupt(what, i, clip.String(name)+" does not sort after "+clip.String(prev)+": names are not sorted and unique")
	}
	return nil
}

// corrupt returns the error for the i-th object of kind what.
func (l *keyspaceLoad) corrupt(what string, i int, reason string) error {
	return &Error{Statement: "DECODE", Object: l.name, Reason: fmt.Sprintf("%v: %s %d: %s", errCorrupt, what, i, reason), Code: ErrInvalid}
}

// types loads the user types, then checks that the types they use exist.
func (l *keyspaceLoad) types() error {
	n := l.d.records()
	loaded := make([]*UserType, 0, min(n, 64))
	prev := ""
	for i := range n {
		rec, at, err := l.next()
		if err != nil {
			return err
		}
		ut, err := DecodeUserType(rec)
		if err != nil {
			return nestedError(fmt.Sprintf("type %d", i), at, err)
		}
		if err := l.check("type", i, ut.Keyspace, ut.Name, prev); err != nil {
			return err
		}
		if err := l.b.PutUserType(ut); err != nil {
			return nestedError(fmt.Sprintf("type %d", i), at, err)
		}
		loaded = append(loaded, ut)
		prev = ut.Name
	}
	k := l.keyspace()
	for i, ut := range loaded {
		if r := missingTypeReason(k, userTypeRefs(ut)); r != "" {
			return l.corrupt("type", i, clip.String(ut.Name)+": "+r)
		}
	}
	return l.d.err
}

// tables loads the tables, which may use only the types loaded before.
func (l *keyspaceLoad) tables() error {
	n := l.d.records()
	k := l.keyspace()
	td := NewTableDecoder(l.b.Schema())
	prev := ""
	for i := range n {
		rec, at, err := l.next()
		if err != nil {
			return err
		}
		t, err := td.Decode(rec)
		if err != nil {
			return nestedError(fmt.Sprintf("table %d", i), at, err)
		}
		if err := l.check("table", i, t.Keyspace, t.Name, prev); err != nil {
			return err
		}
		if r := missingTypeReason(k, tableTypeRefs(t)); r != "" {
			return l.corrupt("table", i, clip.String(t.Name)+": "+r)
		}
		if err := l.b.PutTable(t); err != nil {
			return nestedError(fmt.Sprintf("table %d", i), at, err)
		}
		prev = t.Name
	}
	if l.d.err != nil {
		return l.d.err
	}
	return l.viewBases()
}

// viewBases checks that the base table of every materialized view
// loaded is a table of the keyspace.
func (l *keyspaceLoad) viewBases() error {
	k := l.keyspace()
	if k.ViewCount() == 0 {
		return nil
	}
	it := k.byBase.Iterator()
	for !it.Done() {
		_, v, _ := it.Next()
		if base, ok := k.Table(v.View().Base); !ok || base.View() != nil {
			return &Error{Statement: "DECODE", Object: l.name, Code: ErrInvalid,
				Reason: fmt.Sprintf("%v: materialized view %s: its base table %s is not a table of the keyspace", errCorrupt, clip.String(v.Name), clip.String(v.View().Base))}
		}
	}
	return nil
}

// indexes loads the indexes, whose tables are loaded.
func (l *keyspaceLoad) indexes() error {
	n := l.d.records()
	prev := ""
	for i := range n {
		rec, at, err := l.next()
		if err != nil {
			return err
		}
		ix, err := DecodeIndex(rec)
		if err != nil {
			return nestedError(fmt.Sprintf("index %d", i), at, err)
		}
		if err := l.check("index", i, ix.Keyspace, ix.Name, prev); err != nil {
			return err
		}
		if err := l.b.PutIndex(ix); err != nil {
			return nestedError(fmt.Sprintf("index %d", i), at, err)
		}
		prev = ix.Name
	}
	return l.d.err
}

// nestedError turns err, about the nested record what (e.g. "table 3")
// read at byte at of the input, into an ErrInvalid *Error saying so,
// whatever code err had: a record that does not load makes the whole
// encoding corrupt.
func nestedError(what string, at int, err error) error {
	e := &Error{Statement: "DECODE", Reason: fmt.Sprintf("%s (record at byte %d): %v", what, at, err), Code: ErrInvalid}
	var se *Error
	if errors.As(err, &se) {
		e.Object = se.Object
		e.Reason = fmt.Sprintf("%s (record at byte %d): %s", what, at, se.Reason)
	}
	return e
}

// functions loads the functions and aggregates, which AppendKeyspaceObjects
// writes only when there are some (so at least one), then checks that the
// types and functions they use exist. A count of zero is no section: it is
// left for end to report as trailing bytes.
func (l *keyspaceLoad) functions() error {
	at := l.d.off
	n := l.d.records()
	if l.d.err == nil && n == 0 {
		l.d.off = at
		return nil
	}
	loaded := make([]*Function, 0, min(n, 64))
	prev := ""
	for i := range n {
		rec, at, err := l.next()
		if err != nil {
			return err
		}
		f, err := DecodeFunction(rec)
		if err != nil {
			return nestedError(fmt.Sprintf("function %d", i), at, err)
		}
		if err := l.check("function", i, f.Keyspace, f.Signature(), prev); err != nil {
			return err
		}
		if err := l.b.PutFunction(f); err != nil {
			return nestedError(fmt.Sprintf("function %d", i), at, err)
		}
		loaded = append(loaded, f)
		prev = f.Signature()
	}
	k := l.keyspace()
	for i, f := range loaded {
		if r := missingFunctionReason(k, f); r != "" {
			return l.corrupt("function", i, clip.String(f.Signature())+": "+r)
		}
	}
	return l.d.err
}
