package schema

import (
	"bytes"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// Tables created by statements of one shape (the same columns, key and
// properties, as a benchmark or a tenant-per-table application creates
// them) would each hold their own copy of the same column, key and
// property values, most of a minimal table's memory. Those values are
// never modified in place (every statement that changes a table copies
// the slice or map it changes, see alter.go), so tables of one shape can
// share them: shareShape looks the shape up in a small fixed-size cache
// and, on a hit verified by equality, points the table at the cached
// values. The cache only saves memory: a miss, a collision or an evicted
// slot leaves the table with its own values, which are equal, so what a
// table holds never depends on the cache.

// shapeSlots is the number of cache slots (a power of two): a few hundred
// distinct shapes in use at once are shared, more are shared as far as
// their hashes do not collide.
const shapeSlots = 256

// tableShape is the part of a table that tables of one shape share.
type tableShape struct {
	hash         uint64
	columns      []Column
	partitionKey []string
	clustering   []ClusteringColumn
	// extra is the shape's Extra: nil, or the properties alone.
	extra *TableExtra
}

// shapes is the cache; a slot holds the last shape stored in it. Slots
// are replaced, never modified, so readers on any goroutine need no lock.
var shapes [shapeSlots]atomic.Pointer[tableShape]

// shapeSeed seeds the shape hash; the hash never leaves the process.
var shapeSeed = maphash.MakeSeed()

// shareShape points t's columns, key and Extra (its properties) at the
// cached values of an equal shape, or caches t's own, and returns the
// shape. Unless ownNames says that t's names were allocated for it (a
// decoded table), they are slices of a statement's text, which the cache
// must not keep alive: the cached columns then get names of their own,
// which the key's names share. t must not be shared yet; tables with
// dropped columns, triggers or a view are left as they are (rare, and
// their values are not built in one place): nil.
func shareShape(t *Table, ownNames bool) *tableShape {
	if e := t.Extra; e != nil && (e.DroppedColumns != nil || e.Triggers != nil || e.View != nil) {
		return nil
	}
	h := hashShape(t)
	slot := &shapes[h%shapeSlots]
	if s := slot.Load(); s != nil && s.hash == h && s.matches(t) {
		t.Columns, t.PartitionKey, t.Clustering, t.Extra = s.columns, s.partitionKey, s.clustering, s.extra
		return s
	}
	s := &tableShape{hash: h, columns: t.Columns, partitionKey: t.PartitionKey, clustering: t.Clustering, extra: t.Extra}
	if !ownNames {
		s.columns = cloneColumns(t.Columns)
		s.partitionKey = keyNames(s.columns, t.PartitionKey)
		if t.Clustering != nil {
			s.clustering = slices.Clip(slices.Clone(t.Clustering))
			for i := range s.clustering {
				s.clustering[i].Name = columnName(s.columns, s.clustering[i].Name)
			}
		}
	}
	slot.Store(s)
	t.Columns, t.PartitionKey, t.Clustering = s.columns, s.partitionKey, s.clustering
	return s
}

// Decoding a table record costs most in its columns, key and properties,
// which tables of one shape share anyway. The record of a table that
// has nothing but those (no dropped columns, triggers, masks or view)
// holds them in one stretch, after its id: a record holding the same
// bytes there decodes to the same values, so decodeTable takes the
// cached ones instead of decoding them again. Tables of one shape come in
// runs (a keyspace's, loaded in name order), so one entry, the last shape
// decoded, serves; like the cache, it only saves work.

// rawShape is the stretch of a record that decoded to shape.
type rawShape struct {
	raw   []byte
	shape *tableShape
}

// lastShape is the raw shape decodeTable decoded last; replaced, never
// modified.
var lastShape atomic.Pointer[rawShape]

// reuseShape gives t the values of the last shape decoded and moves d
// past its stretch, if d holds it next; it reports whether it did.
func (d *decoder) reuseShape(t *Table) bool {
	rs := lastShape.Load()
	if d.err != nil || rs == nil || !bytes.HasPrefix(d.b[d.off:], rs.raw) {
		return false
	}
	s := rs.shape
	t.Columns, t.PartitionKey, t.Clustering, t.Extra = s.columns, s.partitionKey, s.clustering, s.extra
	d.off += len(rs.raw)
	return true
}

// matches reports whether t has exactly the shape s.
func (s *tableShape) matches(t *Table) bool {
	return slices.EqualFunc(s.columns, t.Columns, columnsEqual) &&
		slices.Equal(s.partitionKey, t.PartitionKey) &&
		slices.Equal(s.clustering, t.Clustering) &&
		(s.extra == nil) == (t.Extra == nil) && (s.extra == nil || maps.Equal(s.extra.Options, t.Extra.Options))
}

// columnsEqual reports whether a and b are the same column.
func columnsEqual(a, b Column) bool {
	return a.Name == b.Name && a.Kind == b.Kind && TypesEqual(a.Type, b.Type) && MasksEqual(a.Mask, b.Mask)
}

// cloneColumns returns a copy of cols (length and capacity equal, so an
// append by a later statement copies) with names of its own; nil for nil.
func cloneColumns(cols []Column) []Column {
	if cols == nil {
		return nil
	}
	out := slices.Clip(slices.Clone(cols))
	for i := range out {
		out[i].Name = strings.Clone(out[i].Name)
	}
	return out
}

// keyNames returns a copy of names, key column names, with the strings of
// the columns of cols of those names; nil for nil.
func keyNames(cols []Column, names []string) []string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = columnName(cols, name)
	}
	return out
}

// columnName returns the name string of the column of cols named name, or
// a copy of name when there is none (a table validated has one).
func columnName(cols []Column, name string) string {
	for i := range cols {
		if cols[i].Name == name {
			return cols[i].Name
		}
	}
	return strings.Clone(name)
}

// hashShape hashes what matches compares, without allocating.
func hashShape(t *Table) uint64 {
	var h maphash.Hash
	h.SetSeed(shapeSeed)
	for _, c := range t.Columns {
		h.WriteString(c.Name)
		h.WriteByte(byte(c.Kind))
		hashType(&h, c.Type, 0)
		if c.Mask != nil {
			h.WriteString(c.Mask.Function)
		}
		h.WriteByte(0)
	}
	h.WriteByte(1)
	for _, name := range t.PartitionKey {
		h.WriteString(name)
		h.WriteByte(0)
	}
	h.WriteByte(2)
	for _, c := range t.Clustering {
		h.WriteString(c.Name)
		h.WriteByte(byte(c.Order))
	}
	h.WriteByte(3)
	// Map order is random: the pairs' hashes are summed.
	var opts uint64
	for k, v := range t.Options() {
		opts += maphash.String(shapeSeed, k) ^ maphash.String(shapeSeed, v)*31
	}
	var b [8]byte
	for i := range b {
		b[i] = byte(opts >> (8 * i))
	}
	h.Write(b[:])
	return h.Sum64()
}

// hashType writes t's structure to h; depth bounds malformed nesting (the
// hash then stops, and equality still decides).
func hashType(h *maphash.Hash, t Type, depth int) {
	if depth > MaxTypeDepth {
		return
	}
	switch t := t.(type) {
	case NativeType:
		h.WriteByte(byte(t))
	case ListType:
		hashTagged(h, 'l', depth, t.Elem)
	case SetType:
		hashTagged(h, 's', depth, t.Elem)
	case MapType:
		hashTagged(h, 'm', depth, t.Key, t.Value)
	case FrozenType:
		hashTagged(h, 'f', depth, t.Inner)
	case TupleType:
		hashTagged(h, 't', depth, t.Elems...)
		h.WriteByte('>')
	case VectorType:
		h.WriteByte('v')
		hashType(h, t.Elem, depth+1)
		h.WriteByte(byte(t.Dimension))
	case UserTypeRef:
		h.WriteByte('u')
		h.WriteString(t.Name)
		h.WriteByte(0)
	}
}

// hashTagged writes a type constructor's tag and its inner types to h.
func hashTagged(h *maphash.Hash, tag byte, depth int, inner ...Type) {
	h.WriteByte(tag)
	for _, e := range inner {
		hashType(h, e, depth+1)
	}
}
