package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
)

// A term (package cqltext) is checked against a type in three
// statements: an aggregate's INITCOND (function_literal.go), a
// materialized view's WHERE terms (view_where.go) and a mask's arguments
// (mask.go). One checker, checkLiteral, checks a term against a type,
// with the rules and the wording that differ between them given by a
// literalRules.

// constantNames are Cassandra's names of the kinds of constants, as its
// messages give them ("Invalid STRING constant").
var constantNames = map[cqltext.Kind]string{cqltext.KindString: "STRING", cqltext.KindInteger: "INTEGER", cqltext.KindFloat: "FLOAT", cqltext.KindBoolean: "BOOLEAN", cqltext.KindUUID: "UUID", cqltext.KindBlob: "HEX", cqltext.KindDuration: "DURATION"}

// collectionNames are Cassandra's names of the other kinds of terms, as
// its messages give them ("Invalid list literal").
var collectionNames = map[cqltext.Kind]string{cqltext.KindList: "list", cqltext.KindSet: "set", cqltext.KindMap: "map", cqltext.KindUserType: "user type", cqltext.KindTuple: "tuple type"}

// constantTypes lists the native types each kind of constant can be, as
// Cassandra's Constants.Literal assigns them.
var constantTypes = map[cqltext.Kind][]NativeType{
	cqltext.KindString:   {TypeAscii, TypeText, TypeInet, TypeDate, TypeTime, TypeTimestamp},
	cqltext.KindInteger:  {TypeBigint, TypeCounter, TypeDate, TypeDecimal, TypeDouble, TypeDuration, TypeFloat, TypeInt, TypeSmallint, TypeTime, TypeTimestamp, TypeTinyint, TypeVarint},
	cqltext.KindFloat:    {TypeDecimal, TypeDouble, TypeFloat},
	cqltext.KindBoolean:  {TypeBoolean},
	cqltext.KindUUID:     {TypeUUID, TypeTimeuuid},
	cqltext.KindBlob:     {TypeBlob},
	cqltext.KindDuration: {TypeDuration},
}

// constantTakes reports whether a constant of kind can be a value of
// native type t, by its kind alone.
func constantTakes(kind cqltext.Kind, t NativeType) bool {
	for _, ok := range constantTypes[kind] {
		if ok == t {
			return true
		}
	}
	return false
}

// literalRules are what differs between the checks of a literal against
// a type in two statements: which constants a native type takes, null,
// and the words of the refusals. what names the value checked (the
// column, "value(c)", "key(c)", "c[0]", "c.f") for the messages that name
// it.
type literalRules interface {
	// native checks constant (or collection) v against native type t and
	// writes its canonical text.
	native(b *strings.Builder, v cqltext.Term, t NativeType, what string) string
	// null returns why null cannot be the value, elem telling whether it
	// is the element of a list, set or map.
	null(what string, elem bool) string
	// mismatch is the reason v is not of the kind of type t (as the
	// statement gives it, frozen<...> included), for which a literal is
	// want ("a list [...]").
	mismatch(v cqltext.Term, t Type, what, want string) string
	// vectorSize and tupleSize are the reasons v has the wrong number of
	// elements for t (n, for a tuple).
	vectorSize(v cqltext.Term, t VectorType, what string) string
	tupleSize(t TupleType, n int, what string) string
	// userType checks that v is a user type literal of t (given as given,
	// frozen<...> included) and returns the type to check its fields
	// against, or nil to write them unchecked.
	userType(v cqltext.Term, t UserTypeRef, given Type, what string) (*UserType, string)
	// fieldKey checks the key of v's field i (v.elems[2*i]).
	fieldKey(v cqltext.Term, i int) string
	// unknownField is the reason field name is not one of ut's.
	unknownField(name string, ut *UserType, t UserTypeRef) string
	// expression checks v, a function call, an operation, a negation or
	// a type hint (view_terms.go), against t and writes its canonical
	// text.
	expression(b *strings.Builder, v cqltext.Term, t Type, what string, depth int) string
}

// checkLiteral checks v against t under rules c and writes its canonical
// text to b, or returns why v is not a value of t.
func checkLiteral(b *strings.Builder, v cqltext.Term, t Type, c literalRules, what string, depth int) string {
	if depth > cqltext.MaxNesting {
		return "value is nested too deeply"
	}
	given := t
	for {
		f, ok := t.(FrozenType)
		if !ok {
			break
		}
		t = f.Inner
	}
	if v.Kind == cqltext.KindNull {
		if r := c.null(what, false); r != "" {
			return r
		}
		b.WriteString("null")
		return ""
	}
	if v.Kind.IsExpression() {
		return c.expression(b, v, given, what, depth)
	}
	k := termCheck{b: b, v: v, given: given, c: c, what: what, depth: depth}
	switch t := t.(type) {
	case NativeType:
		return c.native(b, v, t, what)
	case ListType:
		return k.elems(cqltext.KindList, "a list [...]", "[", "]", t.Elem)
	case VectorType:
		if v.Kind == cqltext.KindList && len(v.Elems) != t.Dimension {
			return c.vectorSize(v, t, what)
		}
		return k.elems(cqltext.KindList, "a list [...]", "[", "]", t.Elem)
	case SetType:
		if v.Kind == cqltext.KindMap && len(v.Elems) == 0 {
			b.WriteString("{}")
			return ""
		}
		return k.elems(cqltext.KindSet, "a set {...}", "{", "}", t.Elem)
	case MapType:
		return k.mapEntries(t)
	case TupleType:
		return k.tuple(t)
	case UserTypeRef:
		return checkUserType(b, v, t, given, c, what, depth)
	}
	return c.mismatch(v, given, what, "")
}

// termCheck is the check of one collection or tuple term v against its
// type (given as the statement gives it, frozen<...> included) under
// rules c: the checks of its elements write their text to b.
type termCheck struct {
	b     *strings.Builder
	v     cqltext.Term
	given Type
	c     literalRules
	what  string
	depth int
}

// elems checks and writes a list, vector or set of elements of type et,
// written between open and closing.
func (k termCheck) elems(kind cqltext.Kind, want, open, closing string, et Type) string {
	if k.v.Kind != kind {
		return k.c.mismatch(k.v, k.given, k.what, want)
	}
	k.b.WriteString(open)
	for i, e := range k.v.Elems {
		if i > 0 {
			k.b.WriteString(", ")
		}
		if r := checkElem(k.b, e, et, k.c, "value("+k.what+")", k.depth); r != "" {
			return r
		}
	}
	k.b.WriteString(closing)
	return ""
}

// mapEntries checks and writes a map of type t.
func (k termCheck) mapEntries(t MapType) string {
	v, b := k.v, k.b
	if v.Kind != cqltext.KindMap {
		return k.c.mismatch(v, k.given, k.what, "a map {k: v, ...}")
	}
	b.WriteString("{")
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		if r := checkElem(b, v.Elems[i], t.Key, k.c, "key("+k.what+")", k.depth); r != "" {
			return r
		}
		b.WriteString(": ")
		if r := checkElem(b, v.Elems[i+1], t.Value, k.c, "value("+k.what+")", k.depth); r != "" {
			return r
		}
	}
	b.WriteString("}")
	return ""
}

// tuple checks and writes a tuple of type t, which may have fewer
// elements than t.
func (k termCheck) tuple(t TupleType) string {
	v, b := k.v, k.b
	if v.Kind != cqltext.KindTuple {
		return k.c.mismatch(v, k.given, k.what, "a tuple (...)")
	}
	if len(v.Elems) > len(t.Elems) {
		return k.c.tupleSize(t, len(v.Elems), k.what)
	}
	b.WriteString("(")
	for i, e := range v.Elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if r := checkLiteral(b, e, t.Elems[i], k.c, k.what+"["+strconv.Itoa(i)+"]", k.depth+1); r != "" {
			return r
		}
	}
	b.WriteString(")")
	return ""
}

// checkElem checks an element of a list, set or map, where null may be
// refused.
func checkElem(b *strings.Builder, e cqltext.Term, t Type, c literalRules, what string, depth int) string {
	if e.Kind == cqltext.KindNull {
		if r := c.null(what, true); r != "" {
			return r
		}
	}
	return checkLiteral(b, e, t, c, what, depth+1)
}

// checkUserType checks a user type literal {field: value, ...}.
func checkUserType(b *strings.Builder, v cqltext.Term, t UserTypeRef, given Type, c literalRules, what string, depth int) string {
	ut, reason := c.userType(v, t, given, what)
	if reason != "" {
		return reason
	}
	b.WriteString("{")
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if r := c.fieldKey(v, i/2); r != "" {
			return r
		}
		name := v.Elems[i].Text
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cqltext.QuoteIdentifier(name))
		b.WriteString(": ")
		if ut == nil {
			if r := cqltext.Write(b, v.Elems[i+1], depth+1); r != "" {
				return r
			}
			continue
		}
		f, ok := ut.Field(name)
		if !ok {
			return c.unknownField(name, ut, t)
		}
		if r := checkLiteral(b, v.Elems[i+1], f.Type, c, what+"."+name, depth+1); r != "" {
			return r
		}
	}
	b.WriteString("}")
	return ""
}
