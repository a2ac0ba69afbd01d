package schema

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/metalog/metalog/internal/clip"
)

// EncodingVersion is the format version written as the first byte of every
// encoded keyspace, table, user type and index.
const EncodingVersion = 1

// Record kinds, the second byte of an encoding, so that a keyspace record
// cannot be decoded as a table or the other way round.
const (
	recordKeyspace = 'K'
	recordTable    = 'T'
	recordType     = 'U'
	recordIndex    = 'I'
)

// Replication class codes; 0 means the class name follows as a string.
const (
	classCustom = iota
	classSimple
	classNetworkTopology
)

// Type codes: native types use their NativeType value (codes up to 31 are
// kept for them); the others follow.
const (
	codeList   = 32
	codeSet    = 33
	codeMap    = 34
	codeFrozen = 35
	codeTuple  = 36
	codeVector = 37
	codeUser   = 38 // followed by the type name
)

// Table flags.
const (
	flagTextID  = 1 << iota // the id is stored as text (read only: a Table's id is 16 bytes)
	flagDropped             // dropped columns follow the options
	// flagTriggers marks triggers after the dropped columns. A table
	// without triggers encodes as before they existed (the same bytes,
	// so the same digest), and records written before them decode
	// unchanged; only a binary that knows the flag reads a table that has
	// triggers.
	flagTriggers
)

// Index flags.
const (
	indexCustom = 1 << iota // a custom index: the class follows
)

// maxDecodeLen bounds counts and lengths read while decoding, so corrupt
// input cannot make the decoder allocate much.
const maxDecodeLen = 1 << 20

// AppendKeyspace appends the canonical encoding of k, without its tables,
// to dst and returns the extended slice. Equal keyspaces encode to equal
// bytes (options are sorted). It allocates only when dst must grow.
func AppendKeyspace(dst []byte, k *Keyspace) []byte {
	dst = append(dst, EncodingVersion, recordKeyspace)
	dst = appendString(dst, k.Name)
	switch k.Replication.Class {
	case SimpleStrategy:
		dst = append(dst, classSimple)
	case NetworkTopologyStrategy:
		dst = append(dst, classNetworkTopology)
	default:
		dst = append(dst, classCustom)
		dst = appendString(dst, k.Replication.Class)
	}
	dst = appendStringMap(dst, k.Replication.Options)
	var flags byte
	if k.DurableWrites {
		flags = 1
	}
	return append(dst, flags)
}

// AppendTable appends the canonical encoding of t to dst and returns the
// extended slice. The id is stored as its 16 bytes, columns by name, type
// code and kind, and key columns by index, so a small table takes a few
// dozen bytes. Dropped columns (name, type, epoch, and the kind under
// flagDroppedKinds) follow the options when there are any, then the triggers (name, class) when there are any, then
// the column masks when there are any, and last, for a materialized view,
// its view section (flagView: the base, SELECT *, the WHERE relations).
func AppendTable(dst []byte, t *Table) []byte {
	var flags byte
	dropped, triggers := t.DroppedColumns(), t.Triggers()
	if len(dropped) > 0 {
		flags |= flagDropped
		if hasDroppedKinds(dropped) {
			flags |= flagDroppedKinds
		}
	}
	if len(triggers) > 0 {
		flags |= flagTriggers
	}
	if t.HasMasks() {
		flags |= flagMasks
	}
	if t.View() != nil {
		flags |= flagView
	}
	dst = append(dst, EncodingVersion, recordTable, flags)
	dst = appendString(dst, t.Keyspace)
	dst = appendString(dst, t.Name)
	dst = append(dst, t.ID[:]...)
	dst = binary.AppendUvarint(dst, uint64(len(t.Columns)))
	for i := range t.Columns {
		c := &t.Columns[i]
		dst = appendString(dst, c.Name)
		dst = appendType(dst, c.Type)
		dst = append(dst, byte(c.Kind))
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.PartitionKey)))
	for _, name := range t.PartitionKey {
		dst = binary.AppendUvarint(dst, uint64(columnIndex(t, name)))
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Clustering)))
	for _, cc := range t.Clustering {
		dst = binary.AppendUvarint(dst, uint64(columnIndex(t, cc.Name)))
		dst = append(dst, byte(cc.Order))
	}
	dst = appendStringMap(dst, t.Options())
	if flags&flagDropped != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(dropped)))
		for i := range dropped {
			d := &dropped[i]
			dst = appendString(dst, d.Name)
			dst = appendType(dst, d.Type)
			dst = binary.AppendUvarint(dst, d.Epoch)
			if flags&flagDroppedKinds != 0 {
				dst = append(dst, byte(d.Kind))
			}
		}
	}
	if flags&flagTriggers != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(triggers)))
		for i := range triggers {
			dst = appendString(dst, triggers[i].Name)
			dst = appendString(dst, triggers[i].Class)
		}
	}
	if flags&flagMasks != 0 {
		dst = appendMasks(dst, t)
	}
	if flags&flagView != 0 {
		dst = appendView(dst, t.View())
	}
	return dst
}

// AppendUserType appends the canonical encoding of ut to dst and returns
// the extended slice: keyspace, name, then each field's name and type.
func AppendUserType(dst []byte, ut *UserType) []byte {
	dst = append(dst, EncodingVersion, recordType)
	dst = appendString(dst, ut.Keyspace)
	dst = appendString(dst, ut.Name)
	dst = binary.AppendUvarint(dst, uint64(len(ut.Fields)))
	for i := range ut.Fields {
		dst = appendString(dst, ut.Fields[i].Name)
		dst = appendType(dst, ut.Fields[i].Type)
	}
	return dst
}

// AppendIndex appends the canonical encoding of ix to dst and returns the
// extended slice: flags, keyspace, table, name, target column and kind,
// then for a custom index its class and options.
func AppendIndex(dst []byte, ix *Index) []byte {
	var flags byte
	if ix.Custom {
		flags |= indexCustom
	}
	dst = append(dst, EncodingVersion, recordIndex, flags)
	dst = appendString(dst, ix.Keyspace)
	dst = appendString(dst, ix.Table)
	dst = appendString(dst, ix.Name)
	dst = appendString(dst, ix.Target.Column)
	dst = append(dst, byte(ix.Target.Kind))
	if ix.Custom {
		dst = appendString(dst, ix.Class)
		dst = appendStringMap(dst, ix.Options)
	}
	return dst
}

// columnIndex returns the index of column name, or len(t.Columns) (which
// decodes as an error) when there is none.
func columnIndex(t *Table, name string) int {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return i
		}
	}
	return len(t.Columns)
}

// appendString appends s with its uvarint length.
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendStringMap appends the size of m, then its entries in key order, so
// that equal maps encode equally.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	if len(m) == 0 {
		return dst
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		dst = appendString(dst, k)
		dst = appendString(dst, m[k])
	}
	return dst
}

// appendType appends t as its type code followed by its parts.
func appendType(dst []byte, t Type) []byte {
	switch t := t.(type) {
	case NativeType:
		return append(dst, byte(t))
	case ListType:
		return appendType(append(dst, codeList), t.Elem)
	case SetType:
		return appendType(append(dst, codeSet), t.Elem)
	case MapType:
		return appendType(appendType(append(dst, codeMap), t.Key), t.Value)
	case FrozenType:
		return appendType(append(dst, codeFrozen), t.Inner)
	case TupleType:
		dst = append(dst, codeTuple)
		dst = binary.AppendUvarint(dst, uint64(len(t.Elems)))
		for _, e := range t.Elems {
			dst = appendType(dst, e)
		}
		return dst
	case VectorType:
		dst = appendType(append(dst, codeVector), t.Elem)
		return binary.AppendUvarint(dst, uint64(t.Dimension))
	case UserTypeRef:
		// The keyspace is always the enclosing object's; see UserTypeRef.
		return appendString(append(dst, codeUser), t.Name)
	}
	// A nil or unknown type encodes as code 0, which never decodes.
	return append(dst, 0)
}

// errCorrupt is wrapped by every decoding error.
var errCorrupt = errors.New("corrupt encoding")

// decoder reads one record from b, keeping the first error; once it is
// set, reads return zero values, so decoding code checks d.err only where
// it must.
type decoder struct {
	b   []byte
	off int
	err error
}

// fail records a corruption at the current offset, unless an error is
// already recorded.
func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &Error{Statement: "DECODE", Reason: fmt.Sprintf("%v at byte %d: %s", errCorrupt, d.off, fmt.Sprintf(format, args...)), Code: ErrInvalid}
	}
}

// textID reads a table id stored as a string (flagTextID), which only
// lowercase UUID text passes: a table holds its id as 16 bytes, so
// AppendTable writes none of these, but a record that holds one decodes.
func (d *decoder) textID() UUID {
	s := d.string()
	if d.err != nil {
		return UUID{}
	}
	u, ok := ParseUUID(s)
	if !ok || formatUUID(u) != s {
		d.fail("table id %s is not lowercase UUID text", clip.Quote(s))
	}
	return u
}

// byte reads one byte.
func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail("unexpected end of input")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

// uvarint reads an unsigned varint of at most max.
func (d *decoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	if v > max {
		d.fail("value %d exceeds %d", v, max)
		return 0
	}
	return v
}

// count reads a count and checks that at least count*minSize bytes are left.
func (d *decoder) count(minSize int) int {
	n := int(d.uvarint(maxDecodeLen))
	if d.err == nil && n*minSize > len(d.b)-d.off {
		d.fail("count %d exceeds the remaining input", n)
		return 0
	}
	return n
}

// bytes returns the next n bytes, aliasing the input.
func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.fail("unexpected end of input")
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// string reads a length-prefixed UTF-8 string, copied out of the input.
func (d *decoder) string() string {
	p := d.rawString()
	if d.err != nil {
		return ""
	}
	return string(p)
}

// stringMap reads a map written by appendStringMap, whose keys must be
// sorted and distinct (nil for an empty map).
func (d *decoder) stringMap() map[string]string {
	n := d.count(2)
	if d.err != nil || n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	prev := ""
	for i := 0; i < n && d.err == nil; i++ {
		k := d.string()
		v := d.string()
		if i > 0 && k <= prev {
			d.fail("map keys are not sorted and unique")
		}
		prev = k
		m[k] = v
	}
	return m
}

// typ reads a type written by appendType; depth bounds the nesting.
func (d *decoder) typ(depth int) Type {
	if depth > maxTypeDepth {
		d.fail("type nested too deeply")
		return nil
	}
	code := d.byte()
	if d.err != nil {
		return nil
	}
	switch {
	case code >= byte(TypeAscii) && code <= byte(maxNativeType):
		return NativeType(code)
	case code == codeList:
		return ListType{Elem: d.typ(depth + 1)}
	case code == codeSet:
		return SetType{Elem: d.typ(depth + 1)}
	case code == codeMap:
		k := d.typ(depth + 1)
		return MapType{Key: k, Value: d.typ(depth + 1)}
	case code == codeFrozen:
		return FrozenType{Inner: d.typ(depth + 1)}
	case code == codeTuple:
		n := d.count(1)
		if d.err != nil {
			return nil
		}
		elems := make([]Type, n)
		for i := range elems {
			elems[i] = d.typ(depth + 1)
		}
		return TupleType{Elems: elems}
	case code == codeVector:
		e := d.typ(depth + 1)
		return VectorType{Elem: e, Dimension: int(d.uvarint(maxVectorDimension))}
	case code == codeUser:
		return UserTypeRef{Name: d.string()}
	}
	d.off--
	d.fail("unknown type code %d", code)
	return nil
}

// header reads the version and the record kind, which must be record.
func (d *decoder) header(record byte) {
	if v := d.byte(); d.err == nil && v != EncodingVersion {
		d.off--
		d.fail("unsupported format version %d", v)
	}
	if r := d.byte(); d.err == nil && r != record {
		d.off--
		d.fail("record kind %q, want %q", r, record)
	}
}

// end fails on bytes left after the record.
func (d *decoder) end() {
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d trailing bytes", len(d.b)-d.off)
	}
}

// DecodeKeyspace decodes a keyspace encoded by AppendKeyspace. The result
// has no tables. Corrupt or invalid input returns an *Error matching
// ErrInvalid; b is not retained.
func DecodeKeyspace(b []byte) (*Keyspace, error) {
	d := &decoder{b: b}
	d.header(recordKeyspace)
	k := &Keyspace{Name: d.string()}
	switch c := d.byte(); c {
	case classSimple:
		k.Replication.Class = SimpleStrategy
	case classNetworkTopology:
		k.Replication.Class = NetworkTopologyStrategy
	case classCustom:
		k.Replication.Class = d.string()
	default:
		d.off--
		d.fail("unknown replication class code %d", c)
	}
	k.Replication.Options = d.stringMap()
	switch f := d.byte(); f {
	case 0:
	case 1:
		k.DurableWrites = true
	default:
		d.off--
		d.fail("unknown keyspace flags %#x", f)
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if r := nameReason("keyspace", k.Name); r != "" {
		return nil, &Error{Statement: "DECODE", Object: k.Name, Reason: r, Code: ErrInvalid}
	}
	return k, nil
}

// DecodeTable decodes a table encoded by AppendTable and checks that it is
// a valid table. Corrupt or invalid input returns an *Error matching
// ErrInvalid; b is not retained.
func DecodeTable(b []byte) (*Table, error) {
	return decodeTable(b, nil, true)
}

// decodeTable is DecodeTable, with the names and types of td when it is
// not nil (TableDecoder.Decode), checking that the table is valid when
// check is set (not: TableDecoder.DecodeUnchecked).
func decodeTable(b []byte, td *TableDecoder, check bool) (*Table, error) {
	d := &decoder{b: b}
	d.header(recordTable)
	flags := d.tableFlags()
	t := &Table{Keyspace: td.keyspace(d), Name: d.string()}
	t.ID = d.tableID(flags)
	// A plain table's shape is one stretch of the record (reuseShape).
	plain, start := flags&^flagTextID == 0, d.off
	reused := plain && d.reuseShape(t)
	var extra TableExtra
	if !reused {
		d.columns(t, td)
		d.primaryKey(t)
		extra.Options = d.stringMap()
	}
	end := d.off
	if flags&flagDropped != 0 {
		extra.DroppedColumns = d.droppedColumns(flags&flagDroppedKinds != 0)
	}
	if d.err == nil && flags&flagDroppedKinds != 0 && !hasDroppedKinds(extra.DroppedColumns) {
		d.fail("dropped-kinds flag with no known kind")
	}
	if flags&flagTriggers != 0 {
		extra.Triggers = d.triggers()
	}
	if flags&flagMasks != 0 {
		d.masks(t)
	}
	if flags&flagView != 0 {
		extra.View = d.view()
	}
	if !reused {
		t.Extra = extra.orNil()
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if check {
		if r := validateTable(t); r != "" {
			return nil, &Error{Statement: "DECODE", Object: t.QualifiedName(), Reason: r, Code: ErrInvalid}
		}
	}
	if !reused {
		if s := shareShape(t, true); s != nil && plain {
			lastShape.Store(&rawShape{raw: bytes.Clone(b[start:end]), shape: s})
		}
	}
	return t, nil
}

// tableFlags reads the flags of a table record, failing on one this build
// does not know.
func (d *decoder) tableFlags() byte {
	flags := d.byte()
	if d.err == nil && flags&^(flagTextID|flagDropped|flagTriggers|flagMasks|flagView|flagDroppedKinds) != 0 {
		d.off--
		d.fail("unknown table flags %#x", flags)
	}
	return flags
}

// tableID reads a table's id: its text under flagTextID, else its 16
// bytes.
func (d *decoder) tableID(flags byte) UUID {
	if flags&flagTextID != 0 {
		return d.textID()
	}
	var id UUID
	if p := d.bytes(16); d.err == nil {
		id = UUID(p)
	}
	return id
}

// columns reads t's columns: the name, type and kind of each, the name
// and type shared by td when it is not nil.
func (d *decoder) columns(t *Table, td *TableDecoder) {
	if n := d.count(3); d.err == nil && n > 0 {
		t.Columns = make([]Column, n)
		for i := range t.Columns {
			c := &t.Columns[i]
			c.Name = td.name(d)
			c.Type = td.columnType(d)
			c.Kind = ColumnKind(d.byte())
		}
	}
}

// primaryKey reads t's partition key, then its clustering columns with
// their orders, each column as its position in t.Columns.
func (d *decoder) primaryKey(t *Table) {
	if n := d.count(1); d.err == nil && n > 0 {
		t.PartitionKey = make([]string, n)
		for i := range t.PartitionKey {
			t.PartitionKey[i] = d.columnName(t)
		}
	}
	if n := d.count(2); d.err == nil && n > 0 {
		t.Clustering = make([]ClusteringColumn, n)
		for i := range t.Clustering {
			t.Clustering[i] = ClusteringColumn{Name: d.columnName(t), Order: Order(d.byte())}
		}
	}
}

// columnName reads the position of a column of t and returns its name, or
// "" on an error.
func (d *decoder) columnName(t *Table) string {
	i := d.uvarint(uint64(len(t.Columns)))
	if d.err != nil {
		return ""
	}
	if i >= uint64(len(t.Columns)) {
		d.fail("column index %d out of range", i)
		return ""
	}
	return t.Columns[i].Name
}

// droppedColumns reads the dropped columns AppendTable writes under
// flagDropped: at least one (a table without any has no flag, so that its
// encoding is canonical), each with its kind when withKinds
// (flagDroppedKinds).
func (d *decoder) droppedColumns(withKinds bool) []DroppedColumn {
	n := d.count(3)
	if d.err == nil && n == 0 {
		d.fail("dropped-columns flag with no dropped columns")
	}
	if d.err != nil {
		return nil
	}
	out := make([]DroppedColumn, n)
	for i := range out {
		dc := &out[i]
		dc.Name = d.string()
		dc.Type = d.typ(0)
		dc.Epoch = d.uvarint(math.MaxUint64)
		if withKinds {
			dc.Kind = DroppedKind(d.byte())
		}
	}
	return out
}

// triggers reads the triggers AppendTable writes under flagTriggers: at
// least one (a table without triggers has no flag, so that its encoding is
// canonical).
func (d *decoder) triggers() []Trigger {
	n := d.count(2)
	if d.err == nil && n == 0 {
		d.fail("triggers flag with no triggers")
	}
	if d.err != nil {
		return nil
	}
	out := make([]Trigger, n)
	for i := range out {
		out[i] = Trigger{Name: d.string(), Class: d.string()}
	}
	return out
}

// DecodeUserType decodes a user type encoded by AppendUserType and checks
// that it is valid (not that the types it uses exist). Corrupt or invalid
// input returns an *Error matching ErrInvalid; b is not retained.
func DecodeUserType(b []byte) (*UserType, error) {
	d := &decoder{b: b}
	d.header(recordType)
	ut := &UserType{Keyspace: d.string(), Name: d.string()}
	if n := d.count(2); d.err == nil && n > 0 {
		ut.Fields = make([]Field, n)
		for i := range ut.Fields {
			ut.Fields[i].Name = d.string()
			ut.Fields[i].Type = d.typ(0)
		}
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if r := validateUserType(ut); r != "" {
		return nil, &Error{Statement: "DECODE", Object: ut.QualifiedName(), Reason: r, Code: ErrInvalid}
	}
	return ut, nil
}

// DecodeIndex decodes an index encoded by AppendIndex and checks that it is
// valid (not that its table exists). Corrupt or invalid input returns an
// *Error matching ErrInvalid; b is not retained.
func DecodeIndex(b []byte) (*Index, error) {
	d := &decoder{b: b}
	d.header(recordIndex)
	flags := d.byte()
	if d.err == nil && flags&^indexCustom != 0 {
		d.off--
		d.fail("unknown index flags %#x", flags)
	}
	ix := &Index{Keyspace: d.string(), Table: d.string(), Name: d.string()}
	ix.Target.Column = d.string()
	ix.Target.Kind = TargetKind(d.byte())
	if flags&indexCustom != 0 {
		ix.Custom = true
		ix.Class = d.string()
		ix.Options = d.stringMap()
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if r := validateIndex(ix); r != "" {
		return nil, &Error{Statement: "DECODE", Object: ix.QualifiedName(), Reason: r, Code: ErrInvalid}
	}
	return ix, nil
}
