package cqltext

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// CQL term text is read in two forms: an aggregate's INITCOND, written by
// the user and read leniently (Read: spaces anywhere, any case, quoted
// identifiers, $$strings$$, NaN and Infinity), and a materialized view's
// WHERE terms, kept in canonical text and read strictly (ReadCanonical:
// exactly the text Write writes, so that equal relations are equal
// strings). One reader reads both, the strict form when reader.canonical
// is set.
//
// In canonical text a term is Parser.g's term: besides the literals,
// durations, function calls (now(), totimestamp(...)), arithmetic
// (termAddition, termMultiplication: + - * / %, left to right, * / %
// first), a negation ('-' before a simple term) and type hints ('(' type
// ')' term). Their canonical text is the one the parser writes and
// DESCRIBE prints: a function as [keyspace.]name(arg, ...) with its names
// as QuoteIdentifier writes them, an operation with one space each side
// of its operator, a negation as '-' and its operand, a hint as
// (type)term with the type as the model writes it, a duration as written.

// Read reads text, which must be exactly one term in the lenient form
// (an INITCOND), and returns it, or the reason text is not one. isName
// says which unquoted words that are not constants are names (a field of
// a user type literal); the others are refused.
func Read(text string, isName func(string) bool) (Term, string) {
	r := &reader{s: text, isName: isName}
	v := r.term(0)
	r.space()
	if r.err == "" && r.i != len(r.s) {
		r.fail("unexpected " + clip.Quote(r.s[r.i:]) + " after the value")
	}
	if r.err != "" {
		return Term{}, r.err
	}
	return v, ""
}

// ReadCanonical reads text, which must be one or more terms in canonical
// text separated by sep (", " or " AND "), and returns them, or the
// reason text is not that. typeLen returns the length of the type at the
// start of its argument when it is written as the model writes types,
// else 0: a '(' followed by one, ')' and a term is a type hint.
func ReadCanonical(text, sep string, typeLen func(string) int) ([]Term, string) {
	r := &reader{s: text, canonical: true, typeLen: typeLen}
	var out []Term
	for {
		out = append(out, r.term(0))
		if r.err != "" {
			return nil, r.err
		}
		if r.i == len(r.s) {
			return out, ""
		}
		if !strings.HasPrefix(r.s[r.i:], sep) {
			return nil, "unexpected " + clip.Quote(r.s[r.i:]) + " after a term"
		}
		r.i += len(sep)
	}
}

// reader reads terms from s; err keeps the first reason s is not
// one.
type reader struct {
	s   string
	i   int
	err string
	// canonical reads the canonical text only: no spaces but those of ", "
	// and ": ", constants in lower case and numbers as the lexer reads
	// them, strings in single quotes, no identifiers but the field names
	// of a user type literal.
	canonical bool
	// isName (lenient form) and typeLen (canonical text) are Read's and
	// ReadCanonical's.
	isName  func(string) bool
	typeLen func(string) int
}

// fail records why the text is not a term: in canonical text the first
// reason, in the lenient form the last, so that an element's error
// followed by something else than ',' or the closing bracket is reported
// as that (as the INITCOND reader always has).
func (r *reader) fail(reason string) {
	if r.err == "" || !r.canonical {
		r.err = reason
	}
}

// space skips white space, which only the lenient form allows.
func (r *reader) space() {
	if r.canonical {
		return
	}
	for r.i < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.i]) >= 0 {
		r.i++
	}
}

// next consumes c (after spaces, if they are allowed) if it comes next;
// in canonical text, only while there is no error.
func (r *reader) next(c byte) bool {
	r.space()
	if (r.err == "" || !r.canonical) && r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// lit consumes s if it comes next.
func (r *reader) lit(s string) bool {
	if r.err == "" && strings.HasPrefix(r.s[r.i:], s) {
		r.i += len(s)
		return true
	}
	return false
}

// separator consumes the separator c (',' or ':') if it comes next: in
// canonical text, followed by one space.
func (r *reader) separator(c byte) bool {
	if r.canonical {
		return r.lit(string(c) + " ")
	}
	return r.next(c)
}

// expectedSeparator is the reason given when neither a ',' nor closing
// follows an element.
func (r *reader) expectedSeparator(closing byte) string {
	if r.canonical {
		return "expected \", \" or " + strconv.Quote(string(closing))
	}
	return "expected ',' or '" + string(closing) + "'"
}

// term reads one term at depth levels of nesting: in canonical text an
// expression, in the lenient form a simple term.
func (r *reader) term(depth int) Term {
	if r.canonical {
		return r.expression(depth)
	}
	return r.simpleTerm(depth)
}

// simpleTerm reads a term without operators: a constant, a collection, a
// tuple or a user type literal, and in canonical text a duration, a
// function call or a type hint too.
func (r *reader) simpleTerm(depth int) Term {
	r.space()
	if r.err != "" {
		return Term{}
	}
	if depth > MaxNesting || r.i >= len(r.s) {
		switch {
		case !r.canonical:
			r.fail("missing or too deeply nested value")
		case depth > MaxNesting:
			r.fail("term nested too deeply")
		default:
			r.fail("missing term")
		}
		return Term{}
	}
	switch c := r.s[r.i]; {
	case c == '\'' || c == '"' && !r.canonical:
		return r.quoted(c)
	case !r.canonical && strings.HasPrefix(r.s[r.i:], "$$"):
		j := strings.Index(r.s[r.i+2:], "$$")
		if j < 0 {
			r.fail("unterminated string")
			return Term{}
		}
		v := Term{Kind: KindString, Text: r.s[r.i+2 : r.i+2+j]}
		r.i += j + 4
		return v
	case c == '[':
		r.i++
		return r.elements(KindList, ']', depth)
	case c == '(':
		if v, ok := r.hint(depth); ok {
			return v
		}
		r.i++
		return r.elements(KindTuple, ')', depth)
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
func (r *reader) quoted(q byte) Term {
	var b strings.Builder
	r.i++
	for {
		j := strings.IndexByte(r.s[r.i:], q)
		if j < 0 {
			r.fail("unterminated string")
			return Term{}
		}
		b.WriteString(r.s[r.i : r.i+j])
		r.i += j + 1
		if r.i < len(r.s) && r.s[r.i] == q {
			b.WriteByte(q)
			r.i++
			continue
		}
		if q == '"' {
			return Term{Kind: KindIdentifier, Text: b.String()}
		}
		return Term{Kind: KindString, Text: b.String()}
	}
}

// elements reads the rest of a list or tuple, up to closing.
func (r *reader) elements(kind Kind, closing byte, depth int) Term {
	v := Term{Kind: kind}
	if r.next(closing) {
		if kind == KindTuple {
			r.fail("empty tuple")
		}
		return v
	}
	for r.err == "" {
		v.Elems = append(v.Elems, r.term(depth+1))
		if r.next(closing) {
			return v
		}
		if !r.separator(',') {
			r.fail(r.expectedSeparator(closing))
		}
	}
	return Term{}
}

// braces reads the rest of a set, a map or a user type literal: the first
// element decides, and {} is an empty map (or set). In canonical text a
// user type literal starts with a field name; elsewhere it is a map whose
// keys are identifiers.
func (r *reader) braces(depth int) Term {
	v := Term{Kind: KindMap}
	if r.next('}') {
		return v
	}
	for n := 0; r.err == ""; n++ {
		var k Term
		switch name, ok := r.fieldKey(n == 0 || v.Kind == KindUserType); {
		case ok:
			k = Term{Kind: KindIdentifier, Text: name}
			if n == 0 {
				v.Kind = KindUserType
			}
		case v.Kind == KindUserType:
			r.fail("expected a field name")
			return Term{}
		default:
			k = r.term(depth + 1)
		}
		colon := r.separator(':')
		switch {
		case n == 0 && !colon:
			v.Kind = KindSet
		case (v.Kind == KindSet) == colon:
			switch {
			case !r.canonical:
				r.fail("mixed map and set elements")
			case colon:
				r.fail(r.expectedSeparator('}'))
			default:
				r.fail("expected \": \" in a map")
			}
			return Term{}
		}
		v.Elems = append(v.Elems, k)
		if colon {
			v.Elems = append(v.Elems, r.term(depth+1))
		}
		if r.next('}') {
			return v
		}
		if !r.separator(',') {
			r.fail(r.expectedSeparator('}'))
		}
	}
	return Term{}
}

// fieldKey reads, in canonical text and when may is set, the field name
// of a user type literal if one comes next.
func (r *reader) fieldKey(may bool) (string, bool) {
	if !r.canonical || !may || r.err != "" {
		return "", false
	}
	return r.fieldName()
}

// fieldName reads the field name of a user type literal, an identifier
// as QuoteIdentifier writes it and followed by ": ", if one comes next
// (true and false are map keys, not field names).
func (r *reader) fieldName() (string, bool) {
	rest := r.s[r.i:]
	name, n := ScanIdentifier(rest)
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

// word reads an unquoted constant or identifier in the lenient form: a
// number, a boolean, null, a blob, a UUID, NaN, Infinity or a field name,
// in any case, and returns it in canonical form.
func (r *reader) word() Term {
	start := r.i
	for r.i < len(r.s) && (IsWordByte(r.s[r.i]) || strings.IndexByte("-.+", r.s[r.i]) >= 0) {
		r.i++
	}
	w := r.s[start:r.i]
	lower := strings.ToLower(w)
	switch {
	case w == "":
		r.fail("unexpected " + clip.Quote(r.s[start:min(start+1, len(r.s))]))
	case lower == "true" || lower == "false":
		return Term{Kind: KindBoolean, Text: lower}
	case lower == "null":
		return Term{Kind: KindNull, Text: "null"}
	case lower == "nan":
		return Term{Kind: KindFloat, Text: "NaN"}
	case lower == "infinity" || lower == "-infinity":
		return Term{Kind: KindFloat, Text: w[:len(w)-8] + "Infinity"}
	case strings.HasPrefix(lower, "0x"):
		if strings.Trim(lower[2:], "0123456789abcdef") != "" {
			r.fail("malformed blob " + clip.Quote(w))
			return Term{}
		}
		return Term{Kind: KindBlob, Text: lower}
	case len(w) == 36 && strings.Count(w, "-") == 4:
		if u, ok := CanonicalUUID(w); ok {
			return Term{Kind: KindUUID, Text: u}
		}
		r.fail("malformed UUID " + clip.Quote(w))
	case w[0] >= '0' && w[0] <= '9' || w[0] == '-':
		if n, ok := new(big.Int).SetString(w, 10); ok {
			return Term{Kind: KindInteger, Text: n.String()}
		}
		if _, err := strconv.ParseFloat(w, 64); err == nil && !strings.ContainsAny(w, "xX") {
			return Term{Kind: KindFloat, Text: lower}
		}
		r.fail("malformed number " + clip.Quote(w))
	case r.isName(w):
		return Term{Kind: KindIdentifier, Text: lower}
	default:
		r.fail("unexpected " + clip.Quote(w))
	}
	return Term{}
}

// number reads, in canonical text, an integer or a float as the lexer
// takes it: -?digits(.digits)?([eE][+-]?digits)?, kept as written.
func (r *reader) number() Term {
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
	kind := KindInteger
	if !digits() {
		r.fail("malformed number")
		return Term{}
	}
	if r.i+1 < len(s) && s[r.i] == '.' && s[r.i+1] >= '0' && s[r.i+1] <= '9' {
		r.i++
		digits()
		kind = KindFloat
	}
	if r.i < len(s) && (s[r.i] == 'e' || s[r.i] == 'E') {
		save := r.i
		r.i++
		if r.i < len(s) && (s[r.i] == '+' || s[r.i] == '-') {
			r.i++
		}
		if digits() {
			kind = KindFloat
		} else {
			r.i = save
		}
	}
	if r.i < len(s) && IsWordByte(s[r.i]) {
		r.fail("malformed number")
		return Term{}
	}
	return Term{Kind: kind, Text: s[start:r.i]}
}

// canonicalWord reads, in canonical text, true, false, null, a UUID or a
// blob, all in lower case.
func (r *reader) canonicalWord() Term {
	start := r.i
	for r.i < len(r.s) && (IsWordByte(r.s[r.i]) || r.s[r.i] == '-') {
		r.i++
	}
	w := r.s[start:r.i]
	switch {
	case w == "true" || w == "false":
		return Term{Kind: KindBoolean, Text: w}
	case w == "null":
		return Term{Kind: KindNull, Text: w}
	case strings.HasPrefix(w, "0x") && strings.Trim(w[2:], "0123456789abcdef") == "":
		return Term{Kind: KindBlob, Text: w}
	case len(w) == 36:
		if IsCanonicalUUID(w) {
			return Term{Kind: KindUUID, Text: w}
		}
	}
	if w == "" && r.i < len(r.s) {
		w = r.s[r.i : r.i+1]
	}
	r.fail("unexpected " + clip.Quote(w) + " where a term belongs (a constant, a collection, a tuple or a user type literal)")
	return Term{}
}

// expression reads a sum of products (termAddition).
func (r *reader) expression(depth int) Term {
	return r.operations(depth, r.product, "+", "-")
}

// product reads a product of simple terms, negated or not
// (termMultiplication).
func (r *reader) product(depth int) Term {
	return r.operations(depth, r.unary, "*", "/", "%")
}

// operations reads operands (by operand) joined by the operators ops, each
// with a space on each side, into a left-nested tree; each operator nests
// one level deeper.
func (r *reader) operations(depth int, operand func(int) Term, ops ...string) Term {
	v := operand(depth)
	for r.err == "" {
		op := ""
		for _, o := range ops {
			if r.lit(" " + o + " ") {
				op = o
				break
			}
		}
		if op == "" {
			return v
		}
		depth++
		if depth > MaxNesting {
			r.fail("term nested too deeply")
			return Term{}
		}
		v = Term{Kind: KindOperation, Text: op, Elems: []Term{v, operand(depth)}}
	}
	return Term{}
}

// unary reads a simple term, or '-' and one (termGroup). A '-' before a
// digit or a duration is the constant's sign, and the parser folds the
// negation of a signed constant into it, so "--1" is not canonical.
func (r *reader) unary(depth int) Term {
	rest := r.s[r.i:]
	if len(rest) > 1 && rest[0] == '-' && !isASCIIDigit(rest[1]) && DurationLen(rest) == 0 {
		if len(rest) > 2 && rest[1] == '-' && (isASCIIDigit(rest[2]) || DurationLen(rest[1:]) > 0) {
			r.fail("a negated constant is written with its sign")
			return Term{}
		}
		r.i++
		return Term{Kind: KindNegation, Text: "-", Elems: []Term{r.simpleTerm(depth + 1)}}
	}
	return r.simpleTerm(depth)
}

// duration reads a duration constant, kept as written.
func (r *reader) duration() Term {
	n := DurationLen(r.s[r.i:])
	start := r.i
	r.i += n
	if r.i < len(r.s) && IsWordByte(r.s[r.i]) {
		r.fail("malformed duration")
		return Term{}
	}
	return Term{Kind: KindDuration, Text: r.s[start:r.i]}
}

// function reads a function call, [keyspace.]name(args), if one comes
// next; false leaves the reader where it was.
func (r *reader) function(depth int) (Term, bool) {
	rest := r.s[r.i:]
	n := canonicalNameLen(rest)
	if n > 0 && n < len(rest) && rest[n] == '.' {
		if m := canonicalNameLen(rest[n+1:]); m > 0 {
			n += 1 + m
		}
	}
	if n == 0 || n >= len(rest) || rest[n] != '(' {
		return Term{}, false
	}
	v := Term{Kind: KindFunction, Text: rest[:n]}
	r.i += n + 1
	if r.next(')') {
		return v, true
	}
	for r.err == "" {
		v.Elems = append(v.Elems, r.term(depth+1))
		if r.next(')') {
			return v, true
		}
		if !r.separator(',') {
			r.fail(r.expectedSeparator(')'))
		}
	}
	return Term{}, true
}

// canonicalNameLen returns the length of the identifier at the start of s
// when it is in QuoteIdentifier's form, else 0.
func canonicalNameLen(s string) int {
	name, n := ScanIdentifier(s)
	if n == 0 || QuoteIdentifier(name) != s[:n] {
		return 0
	}
	return n
}

// hint reads, in canonical text, a type hint "(type)term" if one comes
// next: a type in Type.String's form, its ')' followed at once by a term
// (after a tuple come only separators, closing brackets or the end).
// false leaves the reader where it was.
func (r *reader) hint(depth int) (Term, bool) {
	if !r.canonical {
		return Term{}, false
	}
	rest := r.s[r.i+1:]
	n := 0
	if r.typeLen != nil {
		n = r.typeLen(rest)
	}
	if n == 0 || n+1 >= len(rest) || rest[n] != ')' || strings.IndexByte(",)]}: ", rest[n+1]) >= 0 {
		return Term{}, false
	}
	r.i += n + 2
	return Term{Kind: KindHint, Text: rest[:n], Elems: []Term{r.simpleTerm(depth + 1)}}, true
}
