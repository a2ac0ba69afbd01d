package schema

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// CQL literal text (a term: a constant, a collection, a tuple or a user
// type literal) is read in two places: an aggregate's INITCOND, written
// by the user and read leniently (spaces anywhere, any case, quoted
// identifiers, $$strings$$, NaN and Infinity), and a materialized view's
// WHERE clause, kept in canonical text and read strictly (exactly the
// text writeUntyped writes, so that equal relations are equal strings).
// One reader reads both, the strict form when literalReader.canonical is
// set; one checker, checkLiteral, checks a literal against a type, with
// the rules and the wording that differ between the two given by a
// literalRules.

// literal is a parsed term.
type literal struct {
	kind  byte   // 's' string, 'i' integer, 'f' float, 'b' boolean, 'u' UUID, 'x' blob, 'n' null, 'w' identifier, or a litKind of a collection
	text  string // a string's content (unquoted), an identifier's name, a constant's text
	elems []literal
	// elems are the elements of a list, set or tuple; the keys and values
	// of a map or a user type literal, alternating (a user type literal's
	// keys are identifiers).
}

// Literal kinds besides the constants.
const (
	litKindList     = 'l'
	litKindSet      = 'e'
	litKindMap      = 'm'
	litKindTuple    = 't'
	litKindUserType = 'd' // only in canonical text, where {field: v} and {'k': v} differ; the lenient reader reads both as a map
	litKindDuration = 'D' // a duration constant (1h30m, P1D), from a mask argument
)

// constantNames are Cassandra's names of the kinds of constants, as its
// messages give them ("Invalid STRING constant").
var constantNames = map[byte]string{'s': "STRING", 'i': "INTEGER", 'f': "FLOAT", 'b': "BOOLEAN", 'u': "UUID", 'x': "HEX", litKindDuration: "DURATION"}

// collectionNames are Cassandra's names of the other kinds of terms, as
// its messages give them ("Invalid list literal").
var collectionNames = map[byte]string{litKindList: "list", litKindSet: "set", litKindMap: "map", litKindUserType: "user type", litKindTuple: "tuple type"}

// constantTypes lists the native types each kind of constant can be, as
// Cassandra's Constants.Literal assigns them.
var constantTypes = map[byte][]NativeType{
	's':             {TypeAscii, TypeText, TypeInet, TypeDate, TypeTime, TypeTimestamp},
	'i':             {TypeBigint, TypeCounter, TypeDate, TypeDecimal, TypeDouble, TypeDuration, TypeFloat, TypeInt, TypeSmallint, TypeTime, TypeTimestamp, TypeTinyint, TypeVarint},
	'f':             {TypeDecimal, TypeDouble, TypeFloat},
	'b':             {TypeBoolean},
	'u':             {TypeUUID, TypeTimeuuid},
	'x':             {TypeBlob},
	litKindDuration: {TypeDuration},
}

// constantTakes reports whether a constant of kind can be a value of
// native type t, by its kind alone.
func constantTakes(kind byte, t NativeType) bool {
	for _, ok := range constantTypes[kind] {
		if ok == t {
			return true
		}
	}
	return false
}

// maxLiteralNesting bounds the nesting of collections, tuples and user
// type literals in a term.
const maxLiteralNesting = 16

// literalReader reads terms from s; err keeps the first reason s is not
// one.
type literalReader struct {
	s   string
	i   int
	err string
	// canonical reads the canonical text only: no spaces but those of ", "
	// and ": ", constants in lower case and numbers as the lexer reads
	// them, strings in single quotes, no identifiers but the field names
	// of a user type literal.
	canonical bool
}

// fail records why the text is not a term: in canonical text the first
// reason, in the lenient form the last, so that an element's error
// followed by something else than ',' or the closing bracket is reported
// as that (as the INITCOND reader always has).
func (r *literalReader) fail(reason string) {
	if r.err == "" || !r.canonical {
		r.err = reason
	}
}

// space skips white space, which only the lenient form allows.
func (r *literalReader) space() {
	if r.canonical {
		return
	}
	for r.i < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.i]) >= 0 {
		r.i++
	}
}

// next consumes c (after spaces, if they are allowed) if it comes next;
// in canonical text, only while there is no error.
func (r *literalReader) next(c byte) bool {
	r.space()
	if (r.err == "" || !r.canonical) && r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// lit consumes s if it comes next.
func (r *literalReader) lit(s string) bool {
	if r.err == "" && strings.HasPrefix(r.s[r.i:], s) {
		r.i += len(s)
		return true
	}
	return false
}

// separator consumes the separator c (',' or ':') if it comes next: in
// canonical text, followed by one space.
func (r *literalReader) separator(c byte) bool {
	if r.canonical {
		return r.lit(string(c) + " ")
	}
	return r.next(c)
}

// expectedSeparator is the reason given when neither a ',' nor closing
// follows an element.
func (r *literalReader) expectedSeparator(closing byte) string {
	if r.canonical {
		return "expected \", \" or " + strconv.Quote(string(closing))
	}
	return "expected ',' or '" + string(closing) + "'"
}

// term reads one term at depth levels of nesting: in canonical text an
// expression (see view_terms.go), in the lenient form a simple term.
func (r *literalReader) term(depth int) literal {
	if r.canonical {
		return r.expression(depth)
	}
	return r.simpleTerm(depth)
}

// simpleTerm reads a term without operators: a constant, a collection, a
// tuple or a user type literal, and in canonical text a duration, a
// function call or a type hint too.
func (r *literalReader) simpleTerm(depth int) literal {
	r.space()
	if r.err != "" {
		return literal{}
	}
	if depth > maxLiteralNesting || r.i >= len(r.s) {
		switch {
		case !r.canonical:
			r.fail("missing or too deeply nested value")
		case depth > maxLiteralNesting:
			r.fail("term nested too deeply")
		default:
			r.fail("missing term")
		}
		return literal{}
	}
	switch c := r.s[r.i]; {
	case c == '\'' || c == '"' && !r.canonical:
		return r.quoted(c)
	case !r.canonical && strings.HasPrefix(r.s[r.i:], "$$"):
		j := strings.Index(r.s[r.i+2:], "$$")
		if j < 0 {
			r.fail("unterminated string")
			return literal{}
		}
		v := literal{kind: 's', text: r.s[r.i+2 : r.i+2+j]}
		r.i += j + 4
		return v
	case c == '[':
		r.i++
		return r.elements(litKindList, ']', depth)
	case c == '(':
		if v, ok := r.hint(depth); ok {
			return v
		}
		r.i++
		return r.elements(litKindTuple, ')', depth)
	case c == '{':
		r.i++
		return r.braces(depth)
	case r.canonical && (strings.HasPrefix(r.s[r.i:], "0x") || uuidAt(r.s[r.i:])):
		return r.canonicalWord()
	case r.canonical && DurationLen(r.s[r.i:]) > 0:
		return r.duration()
	case r.canonical && (c == '-' || c >= '0' && c <= '9'):
		return r.number()
	case r.canonical:
		if v, ok := r.function(depth); ok {
			return v
		}
		return r.canonicalWord()
	}
	return r.word()
}

// quoted reads a string ('...') or a quoted identifier ("..."), where the
// quote doubled stands for itself.
func (r *literalReader) quoted(q byte) literal {
	var b strings.Builder
	r.i++
	for {
		j := strings.IndexByte(r.s[r.i:], q)
		if j < 0 {
			r.fail("unterminated string")
			return literal{}
		}
		b.WriteString(r.s[r.i : r.i+j])
		r.i += j + 1
		if r.i < len(r.s) && r.s[r.i] == q {
			b.WriteByte(q)
			r.i++
			continue
		}
		if q == '"' {
			return literal{kind: 'w', text: b.String()}
		}
		return literal{kind: 's', text: b.String()}
	}
}

// elements reads the rest of a list or tuple, up to closing.
func (r *literalReader) elements(kind byte, closing byte, depth int) literal {
	v := literal{kind: kind}
	if r.next(closing) {
		if kind == litKindTuple {
			r.fail("empty tuple")
		}
		return v
	}
	for r.err == "" {
		v.elems = append(v.elems, r.term(depth+1))
		if r.next(closing) {
			return v
		}
		if !r.separator(',') {
			r.fail(r.expectedSeparator(closing))
		}
	}
	return literal{}
}

// braces reads the rest of a set, a map or a user type literal: the first
// element decides, and {} is an empty map (or set). In canonical text a
// user type literal starts with a field name; elsewhere it is a map whose
// keys are identifiers.
func (r *literalReader) braces(depth int) literal {
	v := literal{kind: litKindMap}
	if r.next('}') {
		return v
	}
	for n := 0; r.err == ""; n++ {
		var k literal
		switch name, ok := r.fieldKey(n == 0 || v.kind == litKindUserType); {
		case ok:
			k = literal{kind: 'w', text: name}
			if n == 0 {
				v.kind = litKindUserType
			}
		case v.kind == litKindUserType:
			r.fail("expected a field name")
			return literal{}
		default:
			k = r.term(depth + 1)
		}
		colon := r.separator(':')
		switch {
		case n == 0 && !colon:
			v.kind = litKindSet
		case (v.kind == litKindSet) == colon:
			switch {
			case !r.canonical:
				r.fail("mixed map and set elements")
			case colon:
				r.fail(r.expectedSeparator('}'))
			default:
				r.fail("expected \": \" in a map")
			}
			return literal{}
		}
		v.elems = append(v.elems, k)
		if colon {
			v.elems = append(v.elems, r.term(depth+1))
		}
		if r.next('}') {
			return v
		}
		if !r.separator(',') {
			r.fail(r.expectedSeparator('}'))
		}
	}
	return literal{}
}

// fieldKey reads, in canonical text and when may is set, the field name
// of a user type literal if one comes next.
func (r *literalReader) fieldKey(may bool) (string, bool) {
	if !r.canonical || !may || r.err != "" {
		return "", false
	}
	return r.fieldName()
}

// fieldName reads the field name of a user type literal, an identifier
// as QuoteIdentifier writes it and followed by ": ", if one comes next
// (true and false are map keys, not field names).
func (r *literalReader) fieldName() (string, bool) {
	rest := r.s[r.i:]
	name, n := scanIdentifier(rest)
	if n == 0 || name == "" || name == "true" || name == "false" || !strings.HasPrefix(rest[n:], ": ") {
		return "", false
	}
	if QuoteIdentifier(name) != rest[:n] {
		r.fail("field name " + clip.Quote(rest[:n]) + " is not in canonical form")
		return "", false
	}
	r.i += n
	return name, true
}

// scanIdentifier returns the identifier at the start of s and its length
// in s: a quoted one ("..." with "" for a quote, unquoted), or letters,
// digits and underscores after a lower-case letter; n is 0 when there is
// none. Whether it is in canonical form (QuoteIdentifier's) is the
// caller's check.
func scanIdentifier(s string) (name string, n int) {
	switch {
	case s == "":
		return "", 0
	case s[0] == '"':
		var b strings.Builder
		n = 1
		for {
			j := strings.IndexByte(s[n:], '"')
			if j < 0 {
				return "", 0
			}
			b.WriteString(s[n : n+j])
			n += j + 1
			if n < len(s) && s[n] == '"' {
				b.WriteByte('"')
				n++
				continue
			}
			return b.String(), n
		}
	case s[0] >= 'a' && s[0] <= 'z':
		for n < len(s) && isWordByte(s[n]) {
			n++
		}
		return s[:n], n
	}
	return "", 0
}

// word reads an unquoted constant or identifier in the lenient form: a
// number, a boolean, null, a blob, a UUID, NaN, Infinity or a field name,
// in any case, and returns it in canonical form.
func (r *literalReader) word() literal {
	start := r.i
	for r.i < len(r.s) && (isWordByte(r.s[r.i]) || strings.IndexByte("-.+", r.s[r.i]) >= 0) {
		r.i++
	}
	w := r.s[start:r.i]
	lower := strings.ToLower(w)
	switch {
	case w == "":
		r.fail("unexpected " + clip.Quote(r.s[start:min(start+1, len(r.s))]))
	case lower == "true" || lower == "false":
		return literal{kind: 'b', text: lower}
	case lower == "null":
		return literal{kind: 'n', text: "null"}
	case lower == "nan":
		return literal{kind: 'f', text: "NaN"}
	case lower == "infinity" || lower == "-infinity":
		return literal{kind: 'f', text: w[:len(w)-8] + "Infinity"}
	case strings.HasPrefix(lower, "0x"):
		if strings.Trim(lower[2:], "0123456789abcdef") != "" {
			r.fail("malformed blob " + clip.Quote(w))
			return literal{}
		}
		return literal{kind: 'x', text: lower}
	case len(w) == 36 && strings.Count(w, "-") == 4:
		if u, ok := CanonicalUUID(w); ok {
			return literal{kind: 'u', text: u}
		}
		r.fail("malformed UUID " + clip.Quote(w))
	case w[0] >= '0' && w[0] <= '9' || w[0] == '-':
		if n, ok := new(big.Int).SetString(w, 10); ok {
			return literal{kind: 'i', text: n.String()}
		}
		if _, err := strconv.ParseFloat(w, 64); err == nil && !strings.ContainsAny(w, "xX") {
			return literal{kind: 'f', text: lower}
		}
		r.fail("malformed number " + clip.Quote(w))
	case ValidName(w):
		return literal{kind: 'w', text: lower}
	default:
		r.fail("unexpected " + clip.Quote(w))
	}
	return literal{}
}

// number reads, in canonical text, an integer or a float as the lexer
// takes it: -?digits(.digits)?([eE][+-]?digits)?, kept as written.
func (r *literalReader) number() literal {
	start := r.i
	s := r.s
	digits := func() bool {
		j := r.i
		for r.i < len(s) && s[r.i] >= '0' && s[r.i] <= '9' {
			r.i++
		}
		return r.i > j
	}
	r.lit("-")
	kind := byte('i')
	if !digits() {
		r.fail("malformed number")
		return literal{}
	}
	if r.i+1 < len(s) && s[r.i] == '.' && s[r.i+1] >= '0' && s[r.i+1] <= '9' {
		r.i++
		digits()
		kind = 'f'
	}
	if r.i < len(s) && (s[r.i] == 'e' || s[r.i] == 'E') {
		save := r.i
		r.i++
		if r.i < len(s) && (s[r.i] == '+' || s[r.i] == '-') {
			r.i++
		}
		if digits() {
			kind = 'f'
		} else {
			r.i = save
		}
	}
	if r.i < len(s) && isWordByte(s[r.i]) {
		r.fail("malformed number")
		return literal{}
	}
	return literal{kind: kind, text: s[start:r.i]}
}

// canonicalWord reads, in canonical text, true, false, null, a UUID or a
// blob, all in lower case.
func (r *literalReader) canonicalWord() literal {
	start := r.i
	for r.i < len(r.s) && (isWordByte(r.s[r.i]) || r.s[r.i] == '-') {
		r.i++
	}
	w := r.s[start:r.i]
	switch {
	case w == "true" || w == "false":
		return literal{kind: 'b', text: w}
	case w == "null":
		return literal{kind: 'n', text: w}
	case strings.HasPrefix(w, "0x") && strings.Trim(w[2:], "0123456789abcdef") == "":
		return literal{kind: 'x', text: w}
	case len(w) == 36:
		if isCanonicalUUID(w) {
			return literal{kind: 'u', text: w}
		}
	}
	if w == "" && r.i < len(r.s) {
		w = r.s[r.i : r.i+1]
	}
	r.fail("unexpected " + clip.Quote(w) + " where a term belongs (a constant, a collection, a tuple or a user type literal)")
	return literal{}
}

// literalRules are what differs between the checks of a literal against
// a type in two statements: which constants a native type takes, null,
// and the words of the refusals. what names the value checked (the
// column, "value(c)", "key(c)", "c[0]", "c.f") for the messages that name
// it.
type literalRules interface {
	// native checks constant (or collection) v against native type t and
	// writes its canonical text.
	native(b *strings.Builder, v literal, t NativeType, what string) string
	// null returns why null cannot be the value, elem telling whether it
	// is the element of a list, set or map.
	null(what string, elem bool) string
	// mismatch is the reason v is not of the kind of type t (as the
	// statement gives it, frozen<...> included), for which a literal is
	// want ("a list [...]").
	mismatch(v literal, t Type, what, want string) string
	// vectorSize and tupleSize are the reasons v has the wrong number of
	// elements for t (n, for a tuple).
	vectorSize(v literal, t VectorType, what string) string
	tupleSize(t TupleType, n int, what string) string
	// userType checks that v is a user type literal of t (given as given,
	// frozen<...> included) and returns the type to check its fields
	// against, or nil to write them unchecked.
	userType(v literal, t UserTypeRef, given Type, what string) (*UserType, string)
	// fieldKey checks the key of v's field i (v.elems[2*i]).
	fieldKey(v literal, i int) string
	// unknownField is the reason field name is not one of ut's.
	unknownField(name string, ut *UserType, t UserTypeRef) string
	// expression checks v, a function call, an operation, a negation or
	// a type hint (view_terms.go), against t and writes its canonical
	// text.
	expression(b *strings.Builder, v literal, t Type, what string, depth int) string
}

// checkLiteral checks v against t under rules c and writes its canonical
// text to b, or returns why v is not a value of t.
func checkLiteral(b *strings.Builder, v literal, t Type, c literalRules, what string, depth int) string {
	if depth > maxLiteralNesting {
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
	if v.kind == 'n' {
		if r := c.null(what, false); r != "" {
			return r
		}
		b.WriteString("null")
		return ""
	}
	if isExpression(v.kind) {
		return c.expression(b, v, given, what, depth)
	}
	// elems checks and writes a list, vector or set, written between open
	// and closing.
	elems := func(kind byte, want, open, closing string, et Type) string {
		if v.kind != kind {
			return c.mismatch(v, given, what, want)
		}
		b.WriteString(open)
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if r := checkElem(b, e, et, c, "value("+what+")", depth); r != "" {
				return r
			}
		}
		b.WriteString(closing)
		return ""
	}
	switch t := t.(type) {
	case NativeType:
		return c.native(b, v, t, what)
	case ListType:
		return elems(litKindList, "a list [...]", "[", "]", t.Elem)
	case VectorType:
		if v.kind == litKindList && len(v.elems) != t.Dimension {
			return c.vectorSize(v, t, what)
		}
		return elems(litKindList, "a list [...]", "[", "]", t.Elem)
	case SetType:
		if v.kind == litKindMap && len(v.elems) == 0 {
			b.WriteString("{}")
			return ""
		}
		return elems(litKindSet, "a set {...}", "{", "}", t.Elem)
	case MapType:
		if v.kind != litKindMap {
			return c.mismatch(v, given, what, "a map {k: v, ...}")
		}
		b.WriteString("{")
		for i := 0; i+1 < len(v.elems); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			if r := checkElem(b, v.elems[i], t.Key, c, "key("+what+")", depth); r != "" {
				return r
			}
			b.WriteString(": ")
			if r := checkElem(b, v.elems[i+1], t.Value, c, "value("+what+")", depth); r != "" {
				return r
			}
		}
		b.WriteString("}")
		return ""
	case TupleType:
		if v.kind != litKindTuple {
			return c.mismatch(v, given, what, "a tuple (...)")
		}
		if len(v.elems) > len(t.Elems) {
			return c.tupleSize(t, len(v.elems), what)
		}
		b.WriteString("(")
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if r := checkLiteral(b, e, t.Elems[i], c, what+"["+strconv.Itoa(i)+"]", depth+1); r != "" {
				return r
			}
		}
		b.WriteString(")")
		return ""
	case UserTypeRef:
		return checkUserType(b, v, t, given, c, what, depth)
	}
	return c.mismatch(v, given, what, "")
}

// checkElem checks an element of a list, set or map, where null may be
// refused.
func checkElem(b *strings.Builder, e literal, t Type, c literalRules, what string, depth int) string {
	if e.kind == 'n' {
		if r := c.null(what, true); r != "" {
			return r
		}
	}
	return checkLiteral(b, e, t, c, what, depth+1)
}

// checkUserType checks a user type literal {field: value, ...}.
func checkUserType(b *strings.Builder, v literal, t UserTypeRef, given Type, c literalRules, what string, depth int) string {
	ut, reason := c.userType(v, t, given, what)
	if reason != "" {
		return reason
	}
	b.WriteString("{")
	for i := 0; i+1 < len(v.elems); i += 2 {
		if r := c.fieldKey(v, i/2); r != "" {
			return r
		}
		name := v.elems[i].text
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdentifier(name))
		b.WriteString(": ")
		if ut == nil {
			if r := writeUntyped(b, v.elems[i+1], depth+1); r != "" {
				return r
			}
			continue
		}
		f, ok := ut.Field(name)
		if !ok {
			return c.unknownField(name, ut, t)
		}
		if r := checkLiteral(b, v.elems[i+1], f.Type, c, what+"."+name, depth+1); r != "" {
			return r
		}
	}
	b.WriteString("}")
	return ""
}

// writeUntyped writes v without a type to check it against (a field of a
// user type that cannot be looked up, a term in a message), in canonical
// form.
func writeUntyped(b *strings.Builder, v literal, depth int) string {
	if depth > maxLiteralNesting {
		return "value is nested too deeply"
	}
	switch v.kind {
	case 's':
		b.WriteString(QuoteString(v.text))
	case 'w':
		b.WriteString(QuoteIdentifier(v.text))
	case litKindFunction, litKindOperation, litKindNegation, litKindHint:
		return writeExpression(b, v, depth)
	case litKindList, litKindSet, litKindTuple, litKindMap, litKindUserType:
		open, closing := "{", "}"
		switch v.kind {
		case litKindList:
			open, closing = "[", "]"
		case litKindTuple:
			open, closing = "(", ")"
		}
		pairs := v.kind == litKindMap || v.kind == litKindUserType
		b.WriteString(open)
		for i, e := range v.elems {
			switch {
			case i > 0 && pairs && i%2 == 1:
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
