package systemschema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/schema"
)

// TypeText returns t as Cassandra 5.0 writes a type into system_schema
// (CQL3Type.toString): lowercase, map entries separated by ", ", a frozen
// collection or user type as frozen<...> except inside another frozen
// type, where it is implicitly frozen and written bare, tuples never
// written frozen, user type names quoted only when they would not read
// back bare. A nil t is "".
func TypeText(t schema.Type) string {
	if t == nil {
		return ""
	}
	if n, ok := t.(schema.NativeType); ok {
		return n.String()
	}
	var b strings.Builder
	writeType(&b, t, false)
	return b.String()
}

// writeType writes t; inFrozen says t is inside a frozen type, whose
// collections and user types are frozen without saying so.
func writeType(b *strings.Builder, t schema.Type, inFrozen bool) {
	switch t := t.(type) {
	case schema.NativeType:
		b.WriteString(t.String())
	case schema.FrozenType:
		if inFrozen {
			writeType(b, t.Inner, true)
			return
		}
		b.WriteString("frozen<")
		writeType(b, t.Inner, true)
		b.WriteString(">")
	case schema.ListType:
		b.WriteString("list<")
		writeType(b, t.Elem, inFrozen)
		b.WriteString(">")
	case schema.SetType:
		b.WriteString("set<")
		writeType(b, t.Elem, inFrozen)
		b.WriteString(">")
	case schema.MapType:
		b.WriteString("map<")
		writeType(b, t.Key, inFrozen)
		b.WriteString(", ")
		writeType(b, t.Value, inFrozen)
		b.WriteString(">")
	case schema.TupleType:
		b.WriteString("tuple<")
		for i, e := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			writeType(b, e, true)
		}
		b.WriteString(">")
	case schema.VectorType:
		b.WriteString("vector<")
		writeType(b, t.Elem, false)
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(t.Dimension))
		b.WriteString(">")
	case schema.UserTypeRef:
		b.WriteString(quoteName(t.Name))
	}
}
