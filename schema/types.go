package schema

import (
	"strconv"
	"strings"
)

// Type is a CQL data type. Its String method returns the CQL text of the
// type, which the cql package parses back to an equal Type. Values of the
// implementations are comparable with == only for NativeType; use TypesEqual
// for the general case.
//
// The set of implementations is closed: NativeType, ListType, SetType,
// MapType, FrozenType, TupleType and VectorType.
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
	Elem      Type
	Dimension int
}

func (ListType) isType()   {}
func (SetType) isType()    {}
func (MapType) isType()    {}
func (FrozenType) isType() {}
func (TupleType) isType()  {}
func (VectorType) isType() {}

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
	}
	return false
}

// IsMultiCell reports whether values of t are stored as several cells
// (non-frozen list, set and map), which keeps t out of primary keys.
func IsMultiCell(t Type) bool {
	switch t.(type) {
	case ListType, SetType, MapType:
		return true
	}
	return false
}

// maxTypeDepth bounds the nesting of types, so that validation and
// decoding of hostile input cannot exhaust the stack.
const maxTypeDepth = 16

// maxVectorDimension bounds vector<T, n>.
const maxVectorDimension = 1 << 16

// validateType checks t and returns a reason when it is not a valid column
// type. inner is true for a type nested in another.
func validateType(t Type, depth int, inner bool) string {
	if depth > maxTypeDepth {
		return "type is nested too deeply"
	}
	elem := func(e Type, what string) string {
		if e == nil {
			return "missing " + what + " type"
		}
		if e == TypeCounter {
			return "counters are not allowed inside collections, tuples or vectors"
		}
		if IsMultiCell(e) {
			return "non-frozen collections are not allowed inside collections, tuples or vectors: " + e.String()
		}
		return validateType(e, depth+1, true)
	}
	switch t := t.(type) {
	case nil:
		return "missing type"
	case NativeType:
		if t < TypeAscii || t > maxNativeType {
			return "unknown native type " + t.String()
		}
		return ""
	case ListType:
		return elem(t.Elem, "list element")
	case SetType:
		if containsDuration(t.Elem) {
			return "durations are not allowed in set elements"
		}
		return elem(t.Elem, "set element")
	case MapType:
		if containsDuration(t.Key) {
			return "durations are not allowed in map keys"
		}
		if r := elem(t.Key, "map key"); r != "" {
			return r
		}
		return elem(t.Value, "map value")
	case FrozenType:
		switch t.Inner.(type) {
		case ListType, SetType, MapType:
		case nil:
			return "missing frozen type"
		default:
			return "frozen<> is only allowed on collections: " + t.String()
		}
		return validateType(t.Inner, depth+1, true)
	case TupleType:
		if len(t.Elems) == 0 {
			return "a tuple needs at least one element type"
		}
		for _, e := range t.Elems {
			if r := elem(e, "tuple element"); r != "" {
				return r
			}
		}
		return ""
	case VectorType:
		if t.Dimension <= 0 || t.Dimension > maxVectorDimension {
			return "vector dimension must be between 1 and " + strconv.Itoa(maxVectorDimension)
		}
		return elem(t.Elem, "vector element")
	}
	return "unknown type"
}

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
