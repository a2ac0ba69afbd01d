package schema

import (
	"math/big"
	"strconv"
	"strings"
)

// An aggregate's INITCOND is a CQL term of its state type. metalog checks
// its form against the type as far as the literal tells (a string for
// text, an integer in range for int, a list for a list, the fields of a
// user type, ...) and keeps it as canonical text: strings in single
// quotes, integers in decimal, the rest lowercase as written, collection
// elements separated by ", " and map entries by ": ". Values whose form
// says nothing more (a timestamp or an inet in a string) are not parsed.

// initLiteral is a parsed INITCOND term.
type initLiteral struct {
	kind  byte // 's' string, 'i' integer, 'f' float, 'b' boolean, 'u' uuid, 'x' blob, 'n' null, 'w' identifier, or a litKind of a collection
	text  string
	elems []initLiteral // list, set and tuple elements; map keys and values alternate
}

// Literal kinds besides the constants.
const (
	litKindList  = 'l'
	litKindSet   = 'e'
	litKindMap   = 'm'
	litKindTuple = 't'
)

// maxLiteralNesting bounds the nesting of INITCOND collections.
const maxLiteralNesting = 16

// canonicalLiteral parses text, an INITCOND term, checks it against type
// t, and returns its canonical text, or the reason it is not a term of t.
// User types are checked through lookup when it is not nil (the keyspace's
// types), otherwise only their literal form is. A null term returns "".
func canonicalLiteral(text string, t Type) (string, string) {
	return canonicalLiteralIn(text, t, nil)
}

// canonicalLiteralIn is canonicalLiteral with the user type lookup.
func canonicalLiteralIn(text string, t Type, lookup func(string) (*UserType, bool)) (string, string) {
	r := &litReader{s: text}
	v := r.term(0)
	r.space()
	if r.err == "" && r.i != len(r.s) {
		r.err = "unexpected " + QuoteClip(r.s[r.i:]) + " after the value"
	}
	if r.err != "" {
		return "", "invalid literal " + QuoteClip(text) + ": " + r.err
	}
	if v.kind == 'n' {
		return "", ""
	}
	var b strings.Builder
	if reason := writeLiteral(&b, v, t, lookup, 0); reason != "" {
		return "", "invalid value " + QuoteClip(text) + " for type " + Clip(typeString(t)) + ": " + reason
	}
	return b.String(), ""
}

// litReader reads a term from s; err keeps the first reason it is not one.
type litReader struct {
	s   string
	i   int
	err string
}

func (r *litReader) space() {
	for r.i < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.i]) >= 0 {
		r.i++
	}
}

// punct consumes c if it is next.
func (r *litReader) punct(c byte) bool {
	r.space()
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// term reads one term at depth levels of nesting.
func (r *litReader) term(depth int) initLiteral {
	r.space()
	if r.err != "" {
		return initLiteral{}
	}
	if depth > maxLiteralNesting || r.i >= len(r.s) {
		r.err = "missing or too deeply nested value"
		return initLiteral{}
	}
	switch c := r.s[r.i]; {
	case c == '\'' || c == '"':
		return r.quoted(c)
	case strings.HasPrefix(r.s[r.i:], "$$"):
		j := strings.Index(r.s[r.i+2:], "$$")
		if j < 0 {
			r.err = "unterminated string"
			return initLiteral{}
		}
		v := initLiteral{kind: 's', text: r.s[r.i+2 : r.i+2+j]}
		r.i += j + 4
		return v
	case c == '[':
		r.i++
		return r.elements(litKindList, ']', depth)
	case c == '(':
		r.i++
		return r.elements(litKindTuple, ')', depth)
	case c == '{':
		r.i++
		return r.braces(depth)
	}
	return r.word()
}

// quoted reads a string ('...') or a quoted identifier ("..."), where the
// quote doubled stands for itself.
func (r *litReader) quoted(q byte) initLiteral {
	var b strings.Builder
	r.i++
	for {
		j := strings.IndexByte(r.s[r.i:], q)
		if j < 0 {
			r.err = "unterminated string"
			return initLiteral{}
		}
		b.WriteString(r.s[r.i : r.i+j])
		r.i += j + 1
		if r.i < len(r.s) && r.s[r.i] == q {
			b.WriteByte(q)
			r.i++
			continue
		}
		if q == '"' {
			return initLiteral{kind: 'w', text: b.String()}
		}
		return initLiteral{kind: 's', text: b.String()}
	}
}

// elements reads the rest of a list or tuple, up to closing.
func (r *litReader) elements(kind byte, closing byte, depth int) initLiteral {
	v := initLiteral{kind: kind}
	if r.punct(closing) {
		if kind == litKindTuple {
			r.err = "empty tuple"
		}
		return v
	}
	for r.err == "" {
		v.elems = append(v.elems, r.term(depth+1))
		if r.punct(closing) {
			return v
		}
		if !r.punct(',') {
			r.err = "expected ',' or '" + string(closing) + "'"
		}
	}
	return initLiteral{}
}

// braces reads the rest of a set, a map or a user type literal: the first
// element decides, and {} is an empty map (or set).
func (r *litReader) braces(depth int) initLiteral {
	v := initLiteral{kind: litKindMap}
	if r.punct('}') {
		return v
	}
	for n := 0; r.err == ""; n++ {
		k := r.term(depth + 1)
		colon := r.punct(':')
		switch {
		case n == 0 && !colon:
			v.kind = litKindSet
		case (v.kind == litKindSet) == colon:
			r.err = "mixed map and set elements"
			return initLiteral{}
		}
		v.elems = append(v.elems, k)
		if colon {
			v.elems = append(v.elems, r.term(depth+1))
		}
		if r.punct('}') {
			return v
		}
		if !r.punct(',') {
			r.err = "expected ',' or '}'"
		}
	}
	return initLiteral{}
}

// word reads an unquoted constant or identifier: a number, a boolean,
// null, a blob, a UUID, NaN, Infinity or a field name.
func (r *litReader) word() initLiteral {
	start := r.i
	for r.i < len(r.s) && (isWordByte(r.s[r.i]) || strings.IndexByte("-.+", r.s[r.i]) >= 0) {
		r.i++
	}
	w := r.s[start:r.i]
	lower := strings.ToLower(w)
	switch {
	case w == "":
		r.err = "unexpected " + QuoteClip(r.s[start:min(start+1, len(r.s))])
	case lower == "true" || lower == "false":
		return initLiteral{kind: 'b', text: lower}
	case lower == "null":
		return initLiteral{kind: 'n', text: "null"}
	case lower == "nan":
		return initLiteral{kind: 'f', text: "NaN"}
	case lower == "infinity" || lower == "-infinity":
		return initLiteral{kind: 'f', text: w[:len(w)-8] + "Infinity"}
	case strings.HasPrefix(lower, "0x"):
		if strings.Trim(lower[2:], "0123456789abcdef") != "" {
			r.err = "malformed blob " + QuoteClip(w)
			return initLiteral{}
		}
		return initLiteral{kind: 'x', text: lower}
	case len(w) == 36 && strings.Count(w, "-") == 4:
		if u, ok := CanonicalUUID(w); ok {
			return initLiteral{kind: 'u', text: u}
		}
		r.err = "malformed UUID " + QuoteClip(w)
	case w[0] >= '0' && w[0] <= '9' || w[0] == '-':
		if n, ok := new(big.Int).SetString(w, 10); ok {
			return initLiteral{kind: 'i', text: n.String()}
		}
		if _, err := strconv.ParseFloat(w, 64); err == nil && !strings.ContainsAny(w, "xX") {
			return initLiteral{kind: 'f', text: lower}
		}
		r.err = "malformed number " + QuoteClip(w)
	case ValidName(w):
		return initLiteral{kind: 'w', text: lower}
	default:
		r.err = "unexpected " + QuoteClip(w)
	}
	return initLiteral{}
}

// writeLiteral checks v against t and writes its canonical text to b, or
// returns why v is not a value of t.
func writeLiteral(b *strings.Builder, v initLiteral, t Type, lookup func(string) (*UserType, bool), depth int) string {
	if depth > maxLiteralNesting {
		return "value is nested too deeply"
	}
	if v.kind == 'n' {
		b.WriteString("null")
		return ""
	}
	want := func(what string) string { return "expected " + what + ", found " + litKindName(v.kind) }
	switch t := t.(type) {
	case FrozenType:
		return writeLiteral(b, v, t.Inner, lookup, depth)
	case NativeType:
		return writeNative(b, v, t, want)
	case ListType:
		if v.kind != litKindList {
			return want("a list [...]")
		}
		return writeElems(b, "[", "]", v.elems, func(int) Type { return t.Elem }, lookup, depth)
	case VectorType:
		if v.kind != litKindList {
			return want("a list [...]")
		}
		if len(v.elems) != t.Dimension {
			return "a vector of dimension " + strconv.Itoa(t.Dimension) + " needs " + strconv.Itoa(t.Dimension) + " elements, found " + strconv.Itoa(len(v.elems))
		}
		return writeElems(b, "[", "]", v.elems, func(int) Type { return t.Elem }, lookup, depth)
	case SetType:
		if v.kind == litKindMap && len(v.elems) == 0 {
			b.WriteString("{}")
			return ""
		}
		if v.kind != litKindSet {
			return want("a set {...}")
		}
		return writeElems(b, "{", "}", v.elems, func(int) Type { return t.Elem }, lookup, depth)
	case MapType:
		if v.kind != litKindMap {
			return want("a map {k: v, ...}")
		}
		b.WriteString("{")
		for i := 0; i < len(v.elems); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			if r := writeElem(b, v.elems[i], t.Key, lookup, depth); r != "" {
				return r
			}
			b.WriteString(": ")
			if r := writeElem(b, v.elems[i+1], t.Value, lookup, depth); r != "" {
				return r
			}
		}
		b.WriteString("}")
		return ""
	case TupleType:
		if v.kind != litKindTuple {
			return want("a tuple (...)")
		}
		if len(v.elems) > len(t.Elems) {
			return "a " + Clip(t.String()) + " has " + strconv.Itoa(len(t.Elems)) + " elements, found " + strconv.Itoa(len(v.elems))
		}
		b.WriteString("(")
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if r := writeLiteral(b, e, t.Elems[i], lookup, depth+1); r != "" {
				return r
			}
		}
		b.WriteString(")")
		return ""
	case UserTypeRef:
		return writeUserType(b, v, t, lookup, depth, want)
	}
	return "unknown type"
}

// writeElems writes the elements of a list, vector or set, which cannot be
// null, between open and closing.
func writeElems(b *strings.Builder, open, closing string, elems []initLiteral, typ func(int) Type, lookup func(string) (*UserType, bool), depth int) string {
	b.WriteString(open)
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if r := writeElem(b, e, typ(i), lookup, depth); r != "" {
			return r
		}
	}
	b.WriteString(closing)
	return ""
}

// writeElem writes one element of a collection, which cannot be null.
func writeElem(b *strings.Builder, e initLiteral, t Type, lookup func(string) (*UserType, bool), depth int) string {
	if e.kind == 'n' {
		return "null is not supported inside collections"
	}
	return writeLiteral(b, e, t, lookup, depth+1)
}

// writeUserType writes a user type literal {field: value, ...}; with a
// lookup, the fields must be the type's.
func writeUserType(b *strings.Builder, v initLiteral, t UserTypeRef, lookup func(string) (*UserType, bool), depth int, want func(string) string) string {
	if v.kind != litKindMap || len(v.elems) == 0 {
		return want("a user type literal {field: value, ...}")
	}
	var ut *UserType
	if lookup != nil {
		ut, _ = lookup(t.Name)
	}
	b.WriteString("{")
	for i := 0; i < len(v.elems); i += 2 {
		k := v.elems[i]
		if k.kind != 'w' {
			return "a user type literal takes field names, found " + litKindName(k.kind)
		}
		for j := 0; j < i; j += 2 {
			if v.elems[j].text == k.text {
				return "field " + Clip(k.text) + " given twice"
			}
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdentifier(k.text))
		b.WriteString(": ")
		var ft Type
		if ut != nil {
			f, ok := ut.Field(k.text)
			if !ok {
				return "unknown field " + Clip(k.text) + " in type " + Clip(t.Name)
			}
			ft = f.Type
		}
		if ft == nil {
			if r := writeUntyped(b, v.elems[i+1], depth+1); r != "" {
				return r
			}
			continue
		}
		if r := writeLiteral(b, v.elems[i+1], ft, lookup, depth+1); r != "" {
			return r
		}
	}
	b.WriteString("}")
	return ""
}

// writeUntyped writes v without a type to check it against (a field of a
// user type that cannot be looked up), in the same canonical form.
func writeUntyped(b *strings.Builder, v initLiteral, depth int) string {
	if depth > maxLiteralNesting {
		return "value is nested too deeply"
	}
	switch v.kind {
	case 's':
		b.WriteString(QuoteString(v.text))
	case 'w':
		b.WriteString(QuoteIdentifier(v.text))
	case litKindList, litKindSet, litKindTuple, litKindMap:
		open, closing := "{", "}"
		switch v.kind {
		case litKindList:
			open, closing = "[", "]"
		case litKindTuple:
			open, closing = "(", ")"
		}
		b.WriteString(open)
		for i, e := range v.elems {
			switch {
			case i > 0 && v.kind == litKindMap && i%2 == 1:
				b.WriteString(": ")
			case i > 0:
				b.WriteString(", ")
			}
			if r := writeUntyped(b, e, depth+1); r != "" {
				return r
			}
		}
		b.WriteString(closing)
	default:
		b.WriteString(v.text)
	}
	return ""
}

// writeNative checks a constant against a native type.
func writeNative(b *strings.Builder, v initLiteral, t NativeType, want func(string) string) string {
	switch t {
	case TypeAscii, TypeText:
		if v.kind != 's' {
			return want("a string")
		}
		b.WriteString(QuoteString(v.text))
		return ""
	case TypeBlob:
		if v.kind != 'x' {
			return want("a blob 0x...")
		}
	case TypeBoolean:
		if v.kind != 'b' {
			return want("true or false")
		}
	case TypeTinyint, TypeSmallint, TypeInt, TypeBigint, TypeCounter, TypeVarint:
		if v.kind != 'i' {
			return want("an integer")
		}
		if bits, ok := intBits[t]; ok {
			if _, err := strconv.ParseInt(v.text, 10, bits); err != nil {
				return "integer " + Clip(v.text) + " is out of the range of " + t.String()
			}
		}
	case TypeFloat, TypeDouble, TypeDecimal:
		if v.kind != 'i' && v.kind != 'f' {
			return want("a number")
		}
		if t == TypeDecimal && v.kind == 'f' && strings.ContainsAny(v.text, "NI") {
			return "a decimal cannot be " + v.text
		}
	case TypeUUID, TypeTimeuuid:
		if v.kind != 'u' {
			return want("a UUID")
		}
		if t == TypeTimeuuid && v.text[14] != '1' {
			return "UUID " + v.text + " is not a time-based (version 1) UUID"
		}
	case TypeTimestamp, TypeDate, TypeTime:
		if v.kind != 's' && v.kind != 'i' {
			return want("a string or an integer")
		}
		if v.kind == 's' {
			b.WriteString(QuoteString(v.text))
			return ""
		}
	case TypeInet, TypeDuration:
		if v.kind != 's' {
			return want("a string")
		}
		b.WriteString(QuoteString(v.text))
		return ""
	default:
		return "unknown type " + Clip(t.String())
	}
	b.WriteString(v.text)
	return ""
}

// litKindName names a literal kind in messages.
func litKindName(k byte) string {
	switch k {
	case 's':
		return "a string"
	case 'i':
		return "an integer"
	case 'f':
		return "a float"
	case 'b':
		return "a boolean"
	case 'u':
		return "a UUID"
	case 'x':
		return "a blob"
	case 'n':
		return "null"
	case 'w':
		return "an identifier"
	case litKindList:
		return "a list"
	case litKindSet:
		return "a set"
	case litKindMap:
		return "a map"
	case litKindTuple:
		return "a tuple"
	}
	return "a value"
}
