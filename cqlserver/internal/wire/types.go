package wire

import (
	"fmt"
	"strings"
)

// Value is a bound [value]: bytes, null or not set.
type Value struct {
	Bytes []byte // the value's serialized form when neither Null nor Unset
	Null  bool   // length -1
	Unset bool   // length -2: leave the existing value unchanged
}

// Consistency is a [consistency] level.
type Consistency uint16

// The consistency levels of the protocol.
const (
	Any         Consistency = 0x0000
	One         Consistency = 0x0001
	Two         Consistency = 0x0002
	Three       Consistency = 0x0003
	Quorum      Consistency = 0x0004
	All         Consistency = 0x0005
	LocalQuorum Consistency = 0x0006
	EachQuorum  Consistency = 0x0007
	Serial      Consistency = 0x0008
	LocalSerial Consistency = 0x0009
	LocalOne    Consistency = 0x000A
)

var consistencyNames = [...]string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL",
	"LOCAL_QUORUM", "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE"}

// String returns the level's CQL name, or its number if unknown.
func (c Consistency) String() string {
	if int(c) < len(consistencyNames) {
		return consistencyNames[c]
	}
	return fmt.Sprintf("CONSISTENCY(%#04x)", uint16(c))
}

// TypeID is the id of an [option] naming a column type.
type TypeID uint16

// The type ids of the protocol (Rows metadata, section 4.2.5.2).
const (
	TypeCustom    TypeID = 0x0000
	TypeASCII     TypeID = 0x0001
	TypeBigint    TypeID = 0x0002
	TypeBlob      TypeID = 0x0003
	TypeBoolean   TypeID = 0x0004
	TypeCounter   TypeID = 0x0005
	TypeDecimal   TypeID = 0x0006
	TypeDouble    TypeID = 0x0007
	TypeFloat     TypeID = 0x0008
	TypeInt       TypeID = 0x0009
	TypeTimestamp TypeID = 0x000B
	TypeUUID      TypeID = 0x000C
	TypeVarchar   TypeID = 0x000D
	TypeVarint    TypeID = 0x000E
	TypeTimeUUID  TypeID = 0x000F
	TypeInet      TypeID = 0x0010
	TypeDate      TypeID = 0x0011
	TypeTime      TypeID = 0x0012
	TypeSmallint  TypeID = 0x0013
	TypeTinyint   TypeID = 0x0014
	TypeDuration  TypeID = 0x0015
	TypeList      TypeID = 0x0020
	TypeMap       TypeID = 0x0021
	TypeSet       TypeID = 0x0022
	TypeUDT       TypeID = 0x0030
	TypeTuple     TypeID = 0x0031
)

var nativeNames = map[TypeID]string{
	TypeASCII: "ascii", TypeBigint: "bigint", TypeBlob: "blob", TypeBoolean: "boolean",
	TypeCounter: "counter", TypeDecimal: "decimal", TypeDouble: "double", TypeFloat: "float",
	TypeInt: "int", TypeTimestamp: "timestamp", TypeUUID: "uuid", TypeVarchar: "text",
	TypeVarint: "varint", TypeTimeUUID: "timeuuid", TypeInet: "inet", TypeDate: "date",
	TypeTime: "time", TypeSmallint: "smallint", TypeTinyint: "tinyint", TypeDuration: "duration",
}

// maxTypeDepth bounds the nesting of a decoded [option].
const maxTypeDepth = 32

// Type is a column type as an [option] describes it. Frozenness is not
// part of the protocol's description: frozen<list<text>> is a list.
type Type struct {
	ID       TypeID
	Custom   string   // TypeCustom: the class name
	Elems    []*Type  // list, set: one; map: key and value; tuple: components; UDT: field types
	Keyspace string   // TypeUDT: the keyspace of the type
	Name     string   // TypeUDT: the type's name
	Fields   []string // TypeUDT: field names, parallel to Elems
}

// Native returns the type with a native id (not custom, a collection, a
// UDT or a tuple).
func Native(id TypeID) *Type { return &Type{ID: id} }

// ListOf returns list<elem>.
func ListOf(elem *Type) *Type { return &Type{ID: TypeList, Elems: []*Type{elem}} }

// SetOf returns set<elem>.
func SetOf(elem *Type) *Type { return &Type{ID: TypeSet, Elems: []*Type{elem}} }

// MapOf returns map<key, value>.
func MapOf(key, value *Type) *Type { return &Type{ID: TypeMap, Elems: []*Type{key, value}} }

// TupleOf returns tuple<elems...>.
func TupleOf(elems ...*Type) *Type { return &Type{ID: TypeTuple, Elems: elems} }

// String returns the type in CQL's spelling, for messages and tests.
func (t *Type) String() string {
	if n, ok := nativeNames[t.ID]; ok {
		return n
	}
	parts := make([]string, len(t.Elems))
	for i, e := range t.Elems {
		parts[i] = e.String()
	}
	switch t.ID {
	case TypeCustom:
		return "'" + t.Custom + "'"
	case TypeList:
		return "list<" + strings.Join(parts, ", ") + ">"
	case TypeSet:
		return "set<" + strings.Join(parts, ", ") + ">"
	case TypeMap:
		return "map<" + strings.Join(parts, ", ") + ">"
	case TypeTuple:
		return "tuple<" + strings.Join(parts, ", ") + ">"
	case TypeUDT:
		return t.Keyspace + "." + t.Name
	}
	return fmt.Sprintf("type(%#04x)", uint16(t.ID))
}

// AppendOption appends t as an [option].
func AppendOption(b []byte, t *Type) []byte {
	b = AppendShort(b, uint16(t.ID))
	switch t.ID {
	case TypeCustom:
		b = AppendString(b, t.Custom)
	case TypeList, TypeSet, TypeMap:
		for _, e := range t.Elems {
			b = AppendOption(b, e)
		}
	case TypeTuple:
		b = AppendShort(b, shortLen(len(t.Elems), "tuple"))
		for _, e := range t.Elems {
			b = AppendOption(b, e)
		}
	case TypeUDT:
		b = AppendString(AppendString(b, t.Keyspace), t.Name)
		b = AppendShort(b, shortLen(len(t.Elems), "user type"))
		for i, e := range t.Elems {
			b = AppendOption(AppendString(b, t.Fields[i]), e)
		}
	}
	return b
}

func option(d *Decoder, depth int) *Type {
	if depth > maxTypeDepth {
		d.fail(fmt.Errorf("%w: [option] nested deeper than %d", ErrBadLength, maxTypeDepth))
		return nil
	}
	t := &Type{ID: TypeID(d.Short())}
	switch t.ID {
	case TypeCustom:
		t.Custom = d.Str()
	case TypeList, TypeSet:
		t.Elems = []*Type{option(d, depth+1)}
	case TypeMap:
		k := option(d, depth+1)
		t.Elems = []*Type{k, option(d, depth+1)}
	case TypeTuple:
		n := d.count(2, "tuple")
		for i := 0; i < n && d.err == nil; i++ {
			t.Elems = append(t.Elems, option(d, depth+1))
		}
	case TypeUDT:
		t.Keyspace, t.Name = d.Str(), d.Str()
		n := d.count(4, "user type")
		for i := 0; i < n && d.err == nil; i++ {
			t.Fields = append(t.Fields, d.Str())
			t.Elems = append(t.Elems, option(d, depth+1))
		}
	default:
		if _, ok := nativeNames[t.ID]; !ok && d.err == nil {
			d.fail(fmt.Errorf("%w: unknown type id %#04x", ErrMalformed, uint16(t.ID)))
		}
	}
	if d.err != nil {
		return nil
	}
	return t
}
