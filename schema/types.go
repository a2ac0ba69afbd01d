package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Type is a CQL data type. Its String method returns the CQL text of the
// type, which the cql package parses back to an equal Type. Values of the
// implementations are comparable with == only for NativeType; use TypesEqual
// for the general case.
//
// The set of implementations is closed: NativeType, ListType, SetType,
// MapType, FrozenType, TupleType, VectorType and UserTypeRef.
type Type interface {
	// String returns the CQL text of the type, e.g. "map<text, int>".
	String() string
	isType()
}

// NativeType is a CQL native (scalar) type.
type NativeType uint8

// The native types. Their numeric values are part of the encoding and must
// never change.
const (
	TypeAscii NativeType = iota + 1
	TypeBigint
	TypeBlob
	TypeBoolean
	TypeCounter
	TypeDate
	TypeDecimal
	TypeDouble
	TypeDuration
	TypeFloat
	TypeInet
	TypeInt
	TypeSmallint
	TypeText
	TypeTime
	TypeTimestamp
	TypeTimeuuid
	TypeTinyint
	TypeUUID
	TypeVarint
	maxNativeType = TypeVarint
)

var nativeNames = [...]string{
	TypeAscii:     "ascii",
	TypeBigint:    "bigint",
	TypeBlob:      "blob",
	TypeBoolean:   "boolean",
	TypeCounter:   "counter",
	TypeDate:      "date",
	TypeDecimal:   "decimal",
	TypeDouble:    "double",
	TypeDuration:  "duration",
	TypeFloat:     "float",
	TypeInet:      "inet",
	TypeInt:       "int",
	TypeSmallint:  "smallint",
	TypeText:      "text",
	TypeTime:      "time",
	TypeTimestamp: "timestamp",
	TypeTimeuuid:  "timeuuid",
	TypeTinyint:   "tinyint",
	TypeUUID:      "uuid",
	TypeVarint:    "varint",
}

// NativeTypeByName returns the native type with the given CQL name (case
// insensitive). "varchar" is an alias of text.
func NativeTypeByName(name string) (NativeType, bool) {
	name = strings.ToLower(name)
	if name == "varchar" {
		return TypeText, true
	}
	for i := TypeAscii; i <= maxNativeType; i++ {
		if nativeNames[i] == name {
			return i, true
		}
	}
	return 0, false
}

// String returns the CQL name of the type, e.g. "bigint".
func (t NativeType) String() string {
	if t >= TypeAscii && t <= maxNativeType {
		return nativeNames[t]
	}
	return "invalid(" + strconv.Itoa(int(t)) + ")"
}

func (NativeType) isType() {}

// ListType is list<Elem>. Unless wrapped in FrozenType it is multi-cell.
type ListType struct{ Elem Type }

// SetType is set<Elem>. Unless wrapped in FrozenType it is multi-cell.
type SetType struct{ Elem Type }

// MapType is map<Key, Value>. Unless wrapped in FrozenType it is multi-cell.
type MapType struct{ Key, Value Type }

// FrozenType is frozen<Inner>: the inner collection is stored as one value.
type FrozenType struct{ Inner Type }

// TupleType is tuple<Elems...>. Tuples are always frozen.
type TupleType struct{ Elems []Type }

// VectorType is vector<Elem, Dimension>, a fixed-length array.
type VectorType struct {
	// Elem is the element type.
	Elem Type
	// Dimension is the number of elements, 1 to 65536.
	Dimension int
}

// UserTypeRef names a user-defined type. Unless wrapped in FrozenType it is
// multi-cell. A user type can only be used in its own keyspace: Keyspace is
// the keyspace as written in a statement (empty when unqualified), checked
// and cleared by Apply, so it is always empty in a stored table or type.
type UserTypeRef struct {
	// Keyspace is the keyspace as written, empty once applied.
	Keyspace string
	// Name is the type name.
	Name string
}

func (UserTypeRef) isType() {}

// String returns the (quoted when needed) type name, qualified when
// Keyspace is set.
func (t UserTypeRef) String() string {
	name := quoteTypeName(t.Name)
	if t.Keyspace != "" {
		return cqltext.QuoteIdentifier(t.Keyspace) + "." + name
	}
	return name
}

// quoteTypeName quotes a user type name that would otherwise read as a
// native or collection type.
func quoteTypeName(name string) string {
	if _, native := NativeTypeByName(name); native || collectionKeywords[name] {
		return `"` + name + `"`
	}
	return cqltext.QuoteIdentifier(name)
}

// collectionKeywords are the type constructors, which cannot name a user
// type unquoted.
var collectionKeywords = map[string]bool{"list": true, "set": true, "map": true, "frozen": true, "tuple": true, "vector": true, "varchar": true}

func (ListType) isType()   {}
func (SetType) isType()    {}
func (MapType) isType()    {}
func (FrozenType) isType() {}
func (TupleType) isType()  {}
func (VectorType) isType() {}

// typeString returns t's CQL text, "<nil>" for a missing type, so that
// messages about malformed input can still print it.
func typeString(t Type) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}

// String returns "list<elem>".
func (t ListType) String() string { return "list<" + typeString(t.Elem) + ">" }

// String returns "set<elem>".
func (t SetType) String() string { return "set<" + typeString(t.Elem) + ">" }

// String returns "map<key, value>".
func (t MapType) String() string {
	return "map<" + typeString(t.Key) + ", " + typeString(t.Value) + ">"
}

// String returns "frozen<inner>".
func (t FrozenType) String() string { return "frozen<" + typeString(t.Inner) + ">" }

// String returns "tuple<a, b, ...>".
func (t TupleType) String() string {
	var b strings.Builder
	b.WriteString("tuple<")
	for i, e := range t.Elems {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(typeString(e))
	}
	b.WriteString(">")
	return b.String()
}

// String returns "vector<elem, n>".
func (t VectorType) String() string {
	return "vector<" + typeString(t.Elem) + ", " + strconv.Itoa(t.Dimension) + ">"
}

// TypesEqual reports whether a and b denote the same type.
func TypesEqual(a, b Type) bool {
	switch a := a.(type) {
	case NativeType:
		b, ok := b.(NativeType)
		return ok && a == b
	case ListType:
		b, ok := b.(ListType)
		return ok && TypesEqual(a.Elem, b.Elem)
	case SetType:
		b, ok := b.(SetType)
		return ok && TypesEqual(a.Elem, b.Elem)
	case MapType:
		b, ok := b.(MapType)
		return ok && TypesEqual(a.Key, b.Key) && TypesEqual(a.Value, b.Value)
	case FrozenType:
		b, ok := b.(FrozenType)
		return ok && TypesEqual(a.Inner, b.Inner)
	case TupleType:
		b, ok := b.(TupleType)
		if !ok || len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !TypesEqual(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	case VectorType:
		b, ok := b.(VectorType)
		return ok && a.Dimension == b.Dimension && TypesEqual(a.Elem, b.Elem)
	case UserTypeRef:
		b, ok := b.(UserTypeRef)
		return ok && a == b
	}
	return false
}

// IsMultiCell reports whether values of t are stored as several cells
// (non-frozen list, set, map and user type), which keeps t out of primary
// keys and collections.
func IsMultiCell(t Type) bool {
	switch t.(type) {
	case ListType, SetType, MapType, UserTypeRef:
		return true
	}
	return false
}

// MaxTypeDepth bounds the nesting of types (each list, set, map, frozen,
// tuple and vector is one level), so that parsing, validation and decoding
// of hostile input cannot exhaust the stack.
const MaxTypeDepth = 64

const maxTypeDepth = MaxTypeDepth

// maxVectorDimension bounds vector<T, n>.
const maxVectorDimension = 1 << 16

// validateType checks t, at depth levels of nesting, and returns a reason
// when it is not a valid column type.
func validateType(t Type, depth int) string {
	if depth > maxTypeDepth {
		return "type is nested too deeply"
	}
	switch t := t.(type) {
	case nil:
		return "missing type"
	case NativeType:
		if t < TypeAscii || t > maxNativeType {
			return "unknown native type " + clip.String(t.String())
		}
		return ""
	case ListType:
		return elementReason(t.Elem, "list element", depth)
	case SetType:
		if containsDuration(t.Elem) {
			return "durations are not allowed in set elements"
		}
		return elementReason(t.Elem, "set element", depth)
	case MapType:
		if containsDuration(t.Key) {
			return "durations are not allowed in map keys"
		}
		if r := elementReason(t.Key, "map key", depth); r != "" {
			return r
		}
		return elementReason(t.Value, "map value", depth)
	case FrozenType:
		switch t.Inner.(type) {
		case ListType, SetType, MapType, UserTypeRef:
		case nil:
			return "missing frozen type"
		default:
			return "frozen<> is only allowed on collections, tuples and user types: " + clip.String(t.String())
		}
		return validateType(t.Inner, depth+1)
	case TupleType:
		if len(t.Elems) == 0 {
			return "a tuple needs at least one element type"
		}
		for _, e := range t.Elems {
			if r := elementReason(e, "tuple element", depth); r != "" {
				return r
			}
		}
		return ""
	case VectorType:
		if t.Dimension <= 0 || t.Dimension > maxVectorDimension {
			return "vector dimension must be between 1 and " + strconv.Itoa(maxVectorDimension)
		}
		return elementReason(t.Elem, "vector element", depth)
	case UserTypeRef:
		if t.Name == "" {
			return "missing user type name"
		}
		if t.Keyspace != "" {
			return "user type " + clip.String(t.String()) + " is qualified with a keyspace"
		}
		return ""
	}
	return "unknown type"
}

// elementReason checks e, the what ("list element", "map key" ...) of a
// type at depth: an element is a single cell, so counters and non-frozen
// collections and user types are refused before e itself is validated.
func elementReason(e Type, what string, depth int) string {
	if e == nil {
		return "missing " + what + " type"
	}
	if e == TypeCounter {
		return "counters are not allowed inside collections, tuples or vectors"
	}
	if _, udt := e.(UserTypeRef); udt {
		return "non-frozen user types are not allowed inside collections, tuples or vectors: " + clip.String(e.String())
	}
	if IsMultiCell(e) {
		return "non-frozen collections are not allowed inside collections, tuples or vectors: " + clip.String(e.String())
	}
	return validateType(e, depth+1)
}

// normalizeType returns t in canonical form for keyspace ks, or why it is
// invalid: inside frozen<...> and tuple<...> every collection and user type
// is frozen explicitly (as Cassandra freezes them implicitly), frozen<tuple>
// is just the tuple, and user type references lose their keyspace, which
// must be ks when given.
func normalizeType(t Type, ks string) (Type, string) {
	return normalize(t, ks, false, 0)
}

func normalize(t Type, ks string, frozen bool, depth int) (Type, string) {
	if depth > maxTypeDepth {
		return nil, "type is nested too deeply"
	}
	var r string
	elem := func(e Type, fr bool) Type {
		if r != "" {
			return nil
		}
		var n Type
		n, r = normalize(e, ks, fr, depth+1)
		return n
	}
	var out Type
	switch t := t.(type) {
	case nil:
		return nil, "missing type"
	case NativeType:
		return t, ""
	case ListType:
		out = ListType{Elem: elem(t.Elem, frozen)}
	case SetType:
		out = SetType{Elem: elem(t.Elem, frozen)}
	case MapType:
		k := elem(t.Key, frozen)
		out = MapType{Key: k, Value: elem(t.Value, frozen)}
	case UserTypeRef:
		if t.Keyspace != "" && t.Keyspace != ks {
			return nil, "user type " + clip.String(t.String()) + " is in another keyspace; user types can only be used in the keyspace they are defined in (" + clip.String(ks) + ")"
		}
		out = UserTypeRef{Name: t.Name}
	case FrozenType:
		switch t.Inner.(type) {
		case ListType, SetType, MapType, UserTypeRef, TupleType, FrozenType:
		case nil:
			return nil, "missing frozen type"
		default:
			return nil, "frozen<> is only allowed on collections, tuples and user types: " + clip.String(t.String())
		}
		return normalize(t.Inner, ks, true, depth+1)
	case TupleType:
		tt := TupleType{Elems: make([]Type, len(t.Elems))}
		for i, e := range t.Elems {
			tt.Elems[i] = elem(e, true)
		}
		out = tt
	case VectorType:
		out = VectorType{Elem: elem(t.Elem, frozen), Dimension: t.Dimension}
	default:
		return nil, "unknown type"
	}
	if r != "" {
		return nil, r
	}
	if frozen && IsMultiCell(out) {
		out = FrozenType{Inner: out}
	}
	return out, ""
}

// typeRefs appends the names of the user types t refers to (directly, not
// through other user types) to dst, without duplicates.
func typeRefs(dst []string, t Type) []string {
	switch t := t.(type) {
	case UserTypeRef:
		if !contains(dst, t.Name) {
			dst = append(dst, t.Name)
		}
	case ListType:
		return typeRefs(dst, t.Elem)
	case SetType:
		return typeRefs(dst, t.Elem)
	case MapType:
		return typeRefs(typeRefs(dst, t.Key), t.Value)
	case FrozenType:
		return typeRefs(dst, t.Inner)
	case TupleType:
		for _, e := range t.Elems {
			dst = typeRefs(dst, e)
		}
	case VectorType:
		return typeRefs(dst, t.Elem)
	}
	return dst
}

// tableTypeRefs lists the user types t's columns use.
func tableTypeRefs(t *Table) []string {
	var refs []string
	for i := range t.Columns {
		refs = typeRefs(refs, t.Columns[i].Type)
	}
	return refs
}

// userTypeRefs lists the user types ut's fields use.
func userTypeRefs(ut *UserType) []string {
	var refs []string
	for i := range ut.Fields {
		refs = typeRefs(refs, ut.Fields[i].Type)
	}
	return refs
}

// expandUserTypes returns t with every user type replaced by a tuple of its
// (expanded, frozen) field types, as Cassandra records dropped columns, so
// that the record outlives the type. Unknown types (which a valid schema
// cannot hold) become blob.
func expandUserTypes(t Type, k *Keyspace, depth int) Type {
	if depth > maxTypeDepth {
		return TypeBlob
	}
	ex := func(e Type) Type { return expandUserTypes(e, k, depth+1) }
	switch t := t.(type) {
	case ListType:
		return ListType{Elem: ex(t.Elem)}
	case SetType:
		return SetType{Elem: ex(t.Elem)}
	case MapType:
		return MapType{Key: ex(t.Key), Value: ex(t.Value)}
	case FrozenType:
		if _, udt := t.Inner.(UserTypeRef); udt {
			return ex(t.Inner)
		}
		return FrozenType{Inner: ex(t.Inner)}
	case TupleType:
		tt := TupleType{Elems: make([]Type, len(t.Elems))}
		for i, e := range t.Elems {
			tt.Elems[i] = ex(e)
		}
		return tt
	case VectorType:
		return VectorType{Elem: ex(t.Elem), Dimension: t.Dimension}
	case UserTypeRef:
		ut, ok := k.UserType(t.Name)
		if !ok || len(ut.Fields) == 0 {
			return TypeBlob
		}
		tt := TupleType{Elems: make([]Type, len(ut.Fields))}
		for i, f := range ut.Fields {
			e := ex(f.Type)
			if IsMultiCell(e) {
				e = FrozenType{Inner: e}
			}
			tt.Elems[i] = e
		}
		return tt
	}
	return t
}

// valueCompatible reports whether a column of type old may be re-added
// with type new: the same type, or a native type that reads old values
// (text reads ascii, blob reads any single-cell value, varint reads the
// smaller integers), as Cassandra's isValueCompatibleWith.
func valueCompatible(new, old Type) bool {
	if TypesEqual(new, old) {
		return true
	}
	if IsMultiCell(new) != IsMultiCell(old) {
		return false
	}
	n, ok1 := new.(NativeType)
	o, ok2 := old.(NativeType)
	if !ok1 || !ok2 {
		return n == TypeBlob && ok1 && old != TypeCounter
	}
	switch n {
	case TypeBlob:
		return o != TypeCounter
	case TypeText:
		return o == TypeAscii
	case TypeVarint:
		return o == TypeInt || o == TypeBigint || o == TypeSmallint || o == TypeTinyint
	case TypeTimeuuid, TypeUUID:
		return n == TypeUUID && o == TypeTimeuuid
	}
	return false
}

// containsDuration reports whether t is or holds a duration, which keys,
// set elements and map keys cannot (durations have no order). It does not
// follow user types; usesDurationThroughTypes does.
func containsDuration(t Type) bool {
	switch t := t.(type) {
	case NativeType:
		return t == TypeDuration
	case ListType:
		return containsDuration(t.Elem)
	case SetType:
		return containsDuration(t.Elem)
	case MapType:
		return containsDuration(t.Key) || containsDuration(t.Value)
	case FrozenType:
		return containsDuration(t.Inner)
	case TupleType:
		for _, e := range t.Elems {
			if containsDuration(e) {
				return true
			}
		}
	case VectorType:
		return containsDuration(t.Elem)
	}
	return false
}

// UserTypeRefs returns the names of the user types t refers to directly
// (not through the fields of other user types), each once, in order of
// appearance.
func UserTypeRefs(t Type) []string {
	return typeRefs(nil, t)
}
