package schema

import (
	"sort"
	"strconv"
	"strings"
)

// The WHERE clause of a materialized view is kept as its relations, each
// in canonical text: the restricted columns by name, the operator in
// upper case, and the right side as CQL term text in the one form the
// parser writes (strings in single quotes with '' inside, numbers as
// written, booleans, UUIDs and blobs in lower case, collections, tuples
// and user type literals with ", " and ": " between their parts). Relations
// keep the order they were written in, as Cassandra keeps them and its
// DESCRIBE prints them. validateTable checks that every relation is in that
// form, so a view's DESCRIBE always parses back, and CreateView checks the
// relations against the base table as Cassandra's CREATE MATERIALIZED VIEW
// does (StatementRestrictions with forView).

// ViewRelation is one relation of a materialized view's WHERE clause:
// Columns Op Value, e.g. "v IS NOT NULL", "c = 1", "(a, b) >= (1, 2)",
// "m['k'] = 1" or "c IN (1, 2)".
type ViewRelation struct {
	// Columns are the restricted column, or the columns of a tuple
	// relation, in the order written.
	Columns []string
	// Tuple is set for a multi-column relation, (a, b) op value; even a
	// single column written in parentheses, (a) = (1), is one.
	Tuple bool
	// Key is the canonical term text of the key of a map element
	// relation, m[key] op value; empty otherwise.
	Key string
	// Op is the operator in canonical form: =, <, <=, >, >=, !=, IN, NOT
	// IN, CONTAINS, CONTAINS KEY, NOT CONTAINS, NOT CONTAINS KEY, LIKE,
	// BETWEEN or IS NOT.
	Op string
	// Value is the right side in canonical term text: NULL for IS NOT,
	// "(t1, t2, ...)" for IN and NOT IN, "t1 AND t2" for BETWEEN, one term
	// otherwise.
	Value string
}

// Relation operators (ViewRelation.Op).
const (
	RelIsNot          = "IS NOT"
	RelEQ             = "="
	RelIn             = "IN"
	RelNotIn          = "NOT IN"
	RelBetween        = "BETWEEN"
	RelContains       = "CONTAINS"
	RelContainsKey    = "CONTAINS KEY"
	RelNotContains    = "NOT CONTAINS"
	RelNotContainsKey = "NOT CONTAINS KEY"
	RelLike           = "LIKE"
)

// relationOps lists the operators a relation may have, with whether it is
// a slice (a bound on the values, which durations do not have).
var relationOps = map[string]struct{ slice, compare bool }{
	"=": {compare: true}, "<": {slice: true, compare: true}, "<=": {slice: true, compare: true},
	">": {slice: true, compare: true}, ">=": {slice: true, compare: true}, "!=": {compare: true},
	RelIn: {}, RelNotIn: {}, RelBetween: {slice: true}, RelContains: {}, RelContainsKey: {},
	RelNotContains: {}, RelNotContainsKey: {}, RelLike: {}, RelIsNot: {},
}

// String returns the relation as CQL, e.g. "v IS NOT NULL".
func (r ViewRelation) String() string {
	var b strings.Builder
	r.write(&b)
	return b.String()
}

// write writes the relation's CQL text.
func (r ViewRelation) write(b *strings.Builder) {
	if r.Tuple {
		b.WriteString("(")
	}
	for i, c := range r.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdentifier(c))
	}
	if r.Tuple {
		b.WriteString(")")
	}
	if r.Key != "" {
		b.WriteString("[")
		b.WriteString(r.Key)
		b.WriteString("]")
	}
	b.WriteString(" ")
	b.WriteString(r.Op)
	b.WriteString(" ")
	b.WriteString(r.Value)
}

// WhereText returns relations as the text of a WHERE clause (without the
// WHERE): the relations joined by " AND ", as Cassandra writes them.
func WhereText(relations []ViewRelation) string {
	var b strings.Builder
	writeWhere(&b, relations)
	return b.String()
}

// writeWhere writes what WhereText returns.
func writeWhere(b *strings.Builder, relations []ViewRelation) {
	for i, r := range relations {
		if i > 0 {
			b.WriteString(" AND ")
		}
		r.write(b)
	}
}

// term is a parsed term of a relation, for the checks against the
// column it restricts.
type term struct {
	kind   byte // 's' string, 'i' integer, 'f' float, 'b' boolean, 'u' UUID, 'x' blob, 'n' null, 'l' list, 'e' set, 'm' map, 'd' user type literal, 't' tuple
	text   string
	elems  []term   // list, set and tuple elements; a map's keys and values alternating; a user type literal's values
	fields []string // a user type literal's field names
}

// maxTermDepth bounds the nesting of the collections, tuples and user
// type literals of a term, as the parser bounds literals.
const maxTermDepth = 16

// termReader reads terms in canonical text, failing (err) on anything
// else: a relation's text must be exactly what the parser writes, so that
// equal relations are equal strings and DESCRIBE prints text that parses.
type termReader struct {
	s   string
	i   int
	err string
}

// parseTerms reads text, which must be exactly n terms separated by sep
// (", " or " AND "), or any number (at least one) when n is -1.
func parseTerms(text, sep string, n int) ([]term, string) {
	r := &termReader{s: text}
	var out []term
	for {
		out = append(out, r.term(0))
		if r.err != "" {
			return nil, r.err
		}
		if r.i == len(r.s) {
			break
		}
		if !strings.HasPrefix(r.s[r.i:], sep) {
			return nil, "unexpected " + QuoteClip(r.s[r.i:]) + " after a term"
		}
		r.i += len(sep)
	}
	if n >= 0 && len(out) != n {
		return nil, "expected " + strconv.Itoa(n) + " terms, found " + strconv.Itoa(len(out))
	}
	return out, ""
}

// parseTerm reads text, which must be exactly one term.
func parseTerm(text string) (term, string) {
	ts, r := parseTerms(text, ", ", 1)
	if r != "" {
		return term{}, r
	}
	return ts[0], ""
}

// fail records the first reason the text is not canonical.
func (r *termReader) fail(reason string) {
	if r.err == "" {
		r.err = reason
	}
}

// lit consumes s if it comes next.
func (r *termReader) lit(s string) bool {
	if r.err == "" && strings.HasPrefix(r.s[r.i:], s) {
		r.i += len(s)
		return true
	}
	return false
}

// term reads one term at depth levels of nesting.
func (r *termReader) term(depth int) term {
	if r.err != "" {
		return term{}
	}
	if depth > maxTermDepth {
		r.fail("term nested too deeply")
		return term{}
	}
	if r.i >= len(r.s) {
		r.fail("missing term")
		return term{}
	}
	switch c := r.s[r.i]; {
	case c == '\'':
		return r.str()
	case c == '[':
		r.i++
		return r.seq(depth, 'l', "]")
	case c == '(':
		r.i++
		t := r.seq(depth, 't', ")")
		if r.err == "" && len(t.elems) == 0 {
			r.fail("empty tuple")
		}
		return t
	case c == '{':
		return r.braces(depth)
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return r.word()
}

// str reads a '...' string, where a doubled quote stands for one.
func (r *termReader) str() term {
	start := r.i
	r.i++
	for {
		j := strings.IndexByte(r.s[r.i:], '\'')
		if j < 0 {
			r.fail("unterminated string")
			return term{}
		}
		r.i += j + 1
		if r.i < len(r.s) && r.s[r.i] == '\'' {
			r.i++
			continue
		}
		return term{kind: 's', text: r.s[start:r.i]}
	}
}

// seq reads the elements of a list or a tuple up to end, "a, b".
func (r *termReader) seq(depth int, kind byte, end string) term {
	t := term{kind: kind}
	if r.lit(end) {
		return t
	}
	for r.err == "" {
		t.elems = append(t.elems, r.term(depth+1))
		if r.lit(end) {
			return t
		}
		if !r.lit(", ") {
			r.fail("expected \", \" or " + strconv.Quote(end))
		}
	}
	return term{}
}

// braces reads {} (an empty map), a set {a, b}, a map {k: v} or a user
// type literal {field: v}.
func (r *termReader) braces(depth int) term {
	r.i++
	if r.lit("}") {
		return term{kind: 'm'}
	}
	if field, ok := r.fieldName(); ok {
		t := term{kind: 'd'}
		for r.err == "" {
			if !r.lit(": ") {
				r.fail("expected \": \" after a field name")
				break
			}
			t.fields = append(t.fields, field)
			t.elems = append(t.elems, r.term(depth+1))
			if r.lit("}") {
				return t
			}
			if !r.lit(", ") {
				r.fail("expected \", \" or \"}\"")
				break
			}
			if field, ok = r.fieldName(); !ok {
				r.fail("expected a field name")
			}
		}
		return term{}
	}
	first := r.term(depth + 1)
	t := term{kind: 'e', elems: []term{first}}
	if r.lit(": ") {
		t.kind = 'm'
		t.elems = append(t.elems, r.term(depth+1))
	}
	for r.err == "" && !r.lit("}") {
		if !r.lit(", ") {
			r.fail("expected \", \" or \"}\"")
			break
		}
		t.elems = append(t.elems, r.term(depth+1))
		if t.kind == 'm' {
			if !r.lit(": ") {
				r.fail("expected \": \" in a map")
				break
			}
			t.elems = append(t.elems, r.term(depth+1))
		}
	}
	if r.err != "" {
		return term{}
	}
	return t
}

// fieldName reads the field name of a user type literal, an identifier
// as QuoteIdentifier writes it and followed by ':', if one comes next
// (true and false are map keys, not field names).
func (r *termReader) fieldName() (string, bool) {
	rest := r.s[r.i:]
	var name string
	n := 0
	switch {
	case rest == "":
		return "", false
	case rest[0] == '"':
		var b strings.Builder
		n = 1
		for {
			j := strings.IndexByte(rest[n:], '"')
			if j < 0 {
				return "", false
			}
			b.WriteString(rest[n : n+j])
			n += j + 1
			if n < len(rest) && rest[n] == '"' {
				b.WriteByte('"')
				n++
				continue
			}
			break
		}
		name = b.String()
	case rest[0] >= 'a' && rest[0] <= 'z':
		for n < len(rest) && isWordByte(rest[n]) {
			n++
		}
		name = rest[:n]
		if name == "true" || name == "false" {
			return "", false
		}
	default:
		return "", false
	}
	if !strings.HasPrefix(rest[n:], ": ") || name == "" {
		return "", false
	}
	if QuoteIdentifier(name) != rest[:n] {
		r.fail("field name " + QuoteClip(rest[:n]) + " is not in canonical form")
		return "", false
	}
	r.i += n
	return name, true
}

// number reads an integer or a float as the lexer takes it:
// -?digits(.digits)?([eE][+-]?digits)?.
func (r *termReader) number() term {
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
		return term{}
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
		return term{}
	}
	return term{kind: kind, text: s[start:r.i]}
}

// word reads true, false, null, a UUID or a blob, all in lower case.
func (r *termReader) word() term {
	start := r.i
	for r.i < len(r.s) && (isWordByte(r.s[r.i]) || r.s[r.i] == '-') {
		r.i++
	}
	w := r.s[start:r.i]
	switch {
	case w == "true" || w == "false":
		return term{kind: 'b', text: w}
	case w == "null":
		return term{kind: 'n', text: w}
	case strings.HasPrefix(w, "0x") && strings.Trim(w[2:], "0123456789abcdef") == "":
		return term{kind: 'x', text: w}
	case len(w) == 36:
		if c, ok := CanonicalUUID(w); ok && c == w {
			return term{kind: 'u', text: w}
		}
	}
	if w == "" && r.i < len(r.s) {
		w = r.s[r.i : r.i+1]
	}
	r.fail("unexpected " + QuoteClip(w) + " where a term belongs (a constant, a collection, a tuple or a user type literal)")
	return term{}
}

// relationReason checks the form of relation r: column names, the
// operator and its place, and the terms, each in canonical text.
func relationReason(r *ViewRelation) string {
	if len(r.Columns) == 0 {
		return "relation without a column"
	}
	if !r.Tuple && len(r.Columns) != 1 {
		return "relation on several columns that is not a tuple relation"
	}
	for _, c := range r.Columns {
		if rs := columnNameReason("column", c); rs != "" {
			return "relation: " + rs
		}
	}
	op, ok := relationOps[r.Op]
	if !ok {
		return "relation " + Clip(r.String()) + ": unknown operator " + QuoteClip(r.Op)
	}
	switch {
	case r.Key != "" && (r.Tuple || !op.compare):
		return "relation " + Clip(r.String()) + ": a map element takes a comparison operator"
	case r.Tuple && !op.compare && r.Op != RelIn && r.Op != RelNotIn && r.Op != RelBetween:
		return "relation " + Clip(r.String()) + ": a tuple relation takes a comparison, IN or BETWEEN"
	case r.Op == RelIsNot && r.Value != "NULL":
		return "relation " + Clip(r.String()) + ": IS NOT takes NULL"
	}
	if r.Key != "" {
		if _, rs := parseTerm(r.Key); rs != "" {
			return "relation " + Clip(r.String()) + ": map key: " + rs
		}
	}
	if r.Op == RelIsNot {
		return ""
	}
	if _, rs := relationTerms(r); rs != "" {
		return "relation " + Clip(r.String()) + ": " + rs
	}
	return ""
}

// relationTerms returns the terms of r's value: one, the list of IN and
// NOT IN (in parentheses), or the two bounds of BETWEEN.
func relationTerms(r *ViewRelation) ([]term, string) {
	switch r.Op {
	case RelIn, RelNotIn:
		if !strings.HasPrefix(r.Value, "(") || !strings.HasSuffix(r.Value, ")") {
			return nil, "IN takes a list of terms in parentheses"
		}
		if r.Value == "()" {
			return nil, ""
		}
		return parseTerms(r.Value[1:len(r.Value)-1], ", ", -1)
	case RelBetween:
		return parseTerms(r.Value, " AND ", 2)
	}
	return parseTerms(r.Value, ", ", 1)
}

// literalNames are Cassandra's names of the kinds of constants, as its
// messages give them.
var literalNames = map[byte]string{'s': "STRING", 'i': "INTEGER", 'f': "FLOAT", 'b': "BOOLEAN", 'u': "UUID", 'x': "HEX"}

// constantTypes lists the native types each kind of constant can be, as
// Cassandra's Constants.Literal assigns them.
var constantTypes = map[byte][]NativeType{
	's': {TypeAscii, TypeText, TypeInet, TypeDate, TypeTime, TypeTimestamp},
	'i': {TypeBigint, TypeCounter, TypeDate, TypeDecimal, TypeDouble, TypeDuration, TypeFloat, TypeInt, TypeSmallint, TypeTime, TypeTimestamp, TypeTinyint, TypeVarint},
	'f': {TypeDecimal, TypeDouble, TypeFloat},
	'b': {TypeBoolean},
	'u': {TypeUUID, TypeTimeuuid},
	'x': {TypeBlob},
}

// termTypeReason checks that term v can be a value of type t (user types
// resolved in k), for the column (or element) called what: a constant
// must be of a kind the native type takes, a collection, tuple or user
// type literal of the matching type, element by element. It returns
// Cassandra's message when it cannot.
func termTypeReason(k *Keyspace, v term, t Type, what string, depth int) string {
	if depth > MaxTypeDepth {
		return ""
	}
	if f, ok := t.(FrozenType); ok {
		t = f.Inner
	}
	if v.kind == 'n' {
		return "Invalid null value in condition for column " + Clip(what)
	}
	if name, constant := literalNames[v.kind]; constant {
		if nt, ok := t.(NativeType); ok {
			for _, ok := range constantTypes[v.kind] {
				if ok == nt {
					return ""
				}
			}
		}
		text := v.text
		if v.kind == 's' {
			text = strings.ReplaceAll(text[1:len(text)-1], "''", "'")
		}
		return "Invalid " + name + " constant (" + Clip(text) + ") for \"" + Clip(what) + "\" of type " + typeString(t)
	}
	literal := map[byte]string{'l': "list", 'e': "set", 'm': "map", 'd': "user type", 't': "tuple type"}[v.kind]
	mismatch := "Invalid " + literal + " literal for " + Clip(what) + " of type " + typeString(t)
	elem := func(e term, et Type, name string) string { return termTypeReason(k, e, et, name, depth+1) }
	switch t := t.(type) {
	case ListType:
		if v.kind != 'l' {
			return mismatch
		}
		for _, e := range v.elems {
			if r := elem(e, t.Elem, "value("+what+")"); r != "" {
				return r
			}
		}
	case VectorType:
		if v.kind != 'l' {
			return mismatch
		}
		if len(v.elems) != t.Dimension {
			return "Invalid vector literal for " + Clip(what) + " of type " + typeString(t) + "; expected " + strconv.Itoa(t.Dimension) + " elements, but given " + strconv.Itoa(len(v.elems))
		}
		for _, e := range v.elems {
			if r := elem(e, t.Elem, "value("+what+")"); r != "" {
				return r
			}
		}
	case SetType:
		if v.kind == 'm' && len(v.elems) == 0 {
			return ""
		}
		if v.kind != 'e' {
			return mismatch
		}
		for _, e := range v.elems {
			if r := elem(e, t.Elem, "value("+what+")"); r != "" {
				return r
			}
		}
	case MapType:
		if v.kind != 'm' {
			return mismatch
		}
		for i := 0; i+1 < len(v.elems); i += 2 {
			if r := elem(v.elems[i], t.Key, "key("+what+")"); r != "" {
				return r
			}
			if r := elem(v.elems[i+1], t.Value, "value("+what+")"); r != "" {
				return r
			}
		}
	case TupleType:
		if v.kind != 't' {
			return mismatch
		}
		if len(v.elems) > len(t.Elems) {
			return "Invalid tuple literal for " + Clip(what) + ": too many elements. Type " + typeString(t) + " expects " + strconv.Itoa(len(t.Elems)) + " but got " + strconv.Itoa(len(v.elems))
		}
		for i, e := range v.elems {
			if r := elem(e, t.Elems[i], what+"["+strconv.Itoa(i)+"]"); r != "" {
				return r
			}
		}
	case UserTypeRef:
		if v.kind == 'm' && len(v.elems) == 0 {
			return ""
		}
		if v.kind != 'd' {
			return mismatch
		}
		ut, ok := k.UserType(t.Name)
		if !ok {
			return ""
		}
		for i, name := range v.fields {
			f, ok := ut.Field(name)
			if !ok {
				return "Unknown field '" + Clip(name) + "' in value of user defined type " + Clip(ut.Name)
			}
			if r := elem(v.elems[i], f.Type, what+"."+name); r != "" {
				return r
			}
		}
	default:
		return mismatch
	}
	return ""
}

// restriction is what the relations restrict of one column, as
// Cassandra's restriction sets merge them.
type restriction struct {
	eq, in, start, end, other bool
}

// viewWhere checks the WHERE clause of a view of base (in keyspace k) as
// Cassandra's CREATE MATERIALIZED VIEW does, and returns the columns it
// restricts: those with IS NOT NULL in notNull, the others in restricted.
// It reports, in Cassandra's words, an unknown column, an operator the
// column cannot take, a value of the wrong type, two relations that
// cannot both restrict one column, and LIKE (which needs an index, and a
// view's WHERE cannot use one).
func viewWhere(k *Keyspace, base *Table, rels []ViewRelation) (notNull, restricted map[string]bool, reason string) {
	notNull, restricted = map[string]bool{}, map[string]bool{}
	bounds := map[string]*restriction{}
	for i := range rels {
		r := &rels[i]
		if rs := relationReason(r); rs != "" {
			return nil, nil, rs
		}
		cols := make([]*Column, len(r.Columns))
		for j, name := range r.Columns {
			c, ok := base.Column(name)
			if !ok {
				return nil, nil, "Undefined column name " + Clip(QuoteIdentifier(name)) + " in table " + Clip(base.QualifiedName())
			}
			cols[j] = c
		}
		if r.Op == RelIsNot {
			notNull[r.Columns[0]] = true
			continue
		}
		if r.Op == RelLike {
			return nil, nil, "LIKE restriction is only supported on properly indexed columns. " + Clip(r.String()) + " is not valid."
		}
		var rs string
		if r.Tuple {
			rs = tupleRelationReason(k, base, r, cols)
		} else {
			rs = columnRelationReason(k, r, cols[0])
		}
		if rs != "" {
			return nil, nil, rs
		}
		for _, c := range cols {
			restricted[c.Name] = true
		}
		if !r.Tuple && r.Key == "" {
			if rs := mergeRestriction(bounds, r); rs != "" {
				return nil, nil, rs
			}
		}
	}
	return notNull, restricted, ""
}

// mergeRestriction adds single-column relation r to what the earlier
// relations restrict of its column, refusing what Cassandra's restriction
// sets refuse: an equality or IN with any other relation, and two lower
// or two upper bounds.
func mergeRestriction(bounds map[string]*restriction, r *ViewRelation) string {
	name := r.Columns[0]
	b := bounds[name]
	if b == nil {
		b = &restriction{}
		bounds[name] = b
	}
	has := b.eq || b.in || b.start || b.end || b.other
	col := Clip(QuoteIdentifier(name))
	switch {
	case b.eq || r.Op == RelEQ && has:
		return col + " cannot be restricted by more than one relation if it includes an Equal"
	case b.in || (r.Op == RelIn || r.Op == RelNotIn) && has:
		return col + " cannot be restricted by more than one relation if it includes a IN"
	}
	lower := r.Op == ">" || r.Op == ">=" || r.Op == RelBetween
	upper := r.Op == "<" || r.Op == "<=" || r.Op == RelBetween
	switch {
	case lower && b.start:
		return "More than one restriction was found for the start bound on " + col
	case upper && b.end:
		return "More than one restriction was found for the end bound on " + col
	}
	switch r.Op {
	case RelEQ:
		b.eq = true
	case RelIn, RelNotIn:
		b.in = true
	default:
		b.start, b.end = b.start || lower, b.end || upper
		b.other = b.other || !lower && !upper
	}
	return ""
}

// columnRelationReason checks single-column relation r on column c: the
// operator for the column's type (CONTAINS on collections, CONTAINS KEY
// and map elements on maps, no slice on durations, no relation on a whole
// non-frozen collection or user type) and the value's type.
func columnRelationReason(k *Keyspace, r *ViewRelation, c *Column) string {
	name := Clip(QuoteIdentifier(c.Name))
	typ := c.Type
	inner := typ
	if f, ok := inner.(FrozenType); ok {
		inner = f.Inner
	}
	_, isMap := inner.(MapType)
	_, isList := inner.(ListType)
	_, isSet := inner.(SetType)
	collection := isMap || isList || isSet
	containsKey := r.Op == RelContainsKey || r.Op == RelNotContainsKey
	contains := r.Op == RelContains || r.Op == RelNotContains
	switch {
	case r.Key != "":
		switch {
		case isList:
			return "Indexes on list entries (" + name + "[index] = value) are not currently supported."
		case !isMap:
			return "Column " + name + " cannot be used as a map"
		case !IsMultiCell(typ):
			return "Map-entry equality predicates on frozen map column " + name + " are not supported"
		case r.Op != RelEQ:
			return "Only EQ relations are supported on map entries"
		}
	case containsKey && !isMap:
		return "Cannot use " + r.Op + " on non-map column " + name
	case contains && !collection:
		return "Cannot use " + r.Op + " on non-collection column " + name
	case relationOps[r.Op].slice && containsDuration(typ):
		return "Slice restrictions are not supported on duration columns"
	}
	if _, udt := typ.(UserTypeRef); udt {
		return "Non-frozen UDT column '" + name + "' (" + typeString(typ) + ") cannot be restricted by any relation"
	}
	if IsMultiCell(typ) && !contains && !containsKey && r.Key == "" {
		return "Collection column '" + name + "' (" + typeString(typ) + ") cannot be restricted by a '" + r.Op + "' relation"
	}
	// The type of the values: a collection's element (a map's value) for
	// CONTAINS, its key for CONTAINS KEY, the map's value for an element.
	valueType, what := typ, c.Name
	switch m := inner.(type) {
	case MapType:
		switch {
		case containsKey:
			valueType, what = m.Key, "key("+c.Name+")"
		case contains || r.Key != "":
			valueType, what = m.Value, "value("+c.Name+")"
		}
		if r.Key != "" {
			kt, _ := parseTerm(r.Key)
			if rs := termTypeReason(k, kt, m.Key, "key("+c.Name+")", 0); rs != "" {
				return rs
			}
		}
	case ListType:
		if contains {
			valueType, what = m.Elem, "value("+c.Name+")"
		}
	case SetType:
		if contains {
			valueType, what = m.Elem, "value("+c.Name+")"
		}
	}
	terms, rs := relationTerms(r)
	if rs != "" {
		return rs
	}
	for _, v := range terms {
		if rs := termTypeReason(k, v, valueType, what, 0); rs != "" {
			return rs
		}
	}
	return ""
}

// tupleRelationReason checks multi-column relation r on cols of base:
// clustering columns only, each once, in key order, and values that are
// tuples of as many elements of the columns' types.
func tupleRelationReason(k *Keyspace, base *Table, r *ViewRelation, cols []*Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = QuoteIdentifier(c.Name)
	}
	list := Clip(strings.Join(names, ", "))
	prev := -1
	for i, c := range cols {
		if c.Kind != Clustering {
			return "Multi-column relations can only be applied to clustering columns but was applied to: " + Clip(QuoteIdentifier(c.Name))
		}
		for _, d := range cols[:i] {
			if d.Name == c.Name {
				return "Column \"" + Clip(c.Name) + "\" appeared twice in a relation: " + Clip(r.String())
			}
		}
		pos := clusteringPosition(base, c.Name)
		if prev >= 0 && pos != prev+1 {
			return "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (" + list + ")"
		}
		prev = pos
	}
	terms, rs := relationTerms(r)
	if rs != "" {
		return rs
	}
	for _, v := range terms {
		if v.kind != 't' {
			return "Invalid tuple literal for (" + list + "): expected a tuple of " + strconv.Itoa(len(cols)) + " elements, not " + Clip(renderTerm(v))
		}
		if len(v.elems) != len(cols) {
			return "Expected " + strconv.Itoa(len(cols)) + " elements in value tuple, but got " + strconv.Itoa(len(v.elems)) + ": " + Clip(renderTerm(v))
		}
		for i, e := range v.elems {
			if rs := termTypeReason(k, e, cols[i].Type, cols[i].Name, 0); rs != "" {
				return rs
			}
		}
	}
	return ""
}

// clusteringPosition returns the position of clustering column name in t.
func clusteringPosition(t *Table, name string) int {
	for i, cc := range t.Clustering {
		if cc.Name == name {
			return i
		}
	}
	return -1
}

// renderTerm writes v back as canonical text.
func renderTerm(v term) string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

// write writes v's canonical text.
func (v term) write(b *strings.Builder) {
	sep := func(i int, s string) {
		if i > 0 {
			b.WriteString(s)
		}
	}
	switch v.kind {
	case 'l', 't':
		open, close := "[", "]"
		if v.kind == 't' {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, e := range v.elems {
			sep(i, ", ")
			e.write(b)
		}
		b.WriteString(close)
	case 'e':
		b.WriteString("{")
		for i, e := range v.elems {
			sep(i, ", ")
			e.write(b)
		}
		b.WriteString("}")
	case 'm':
		b.WriteString("{")
		for i := 0; i+1 < len(v.elems); i += 2 {
			sep(i, ", ")
			v.elems[i].write(b)
			b.WriteString(": ")
			v.elems[i+1].write(b)
		}
		b.WriteString("}")
	case 'd':
		b.WriteString("{")
		for i, e := range v.elems {
			sep(i, ", ")
			b.WriteString(QuoteIdentifier(v.fields[i]))
			b.WriteString(": ")
			e.write(b)
		}
		b.WriteString("}")
	default:
		b.WriteString(v.text)
	}
}

// sortedRelations returns the relations' texts sorted, for comparing two
// WHERE clauses whatever the order of their relations.
func sortedRelations(rels []ViewRelation) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = r.String()
	}
	sort.Strings(out)
	return out
}
