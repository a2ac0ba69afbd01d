package schema

import (
	"sort"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// The WHERE clause of a materialized view is kept as its relations, each
// in canonical text: the restricted columns by name, the operator in
// upper case, and the right side as CQL term text in the one form the
// parser writes (strings in single quotes with '' inside, numbers as
// written, booleans, UUIDs and blobs in lower case, collections, tuples
// and user type literals with ", " and ": " between their parts; the
// expressions of view_terms.go: operations, function calls, type hints
// and durations). Relations
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
		b.WriteString(cqltext.QuoteIdentifier(c))
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

// parseTerms reads text, which must be exactly n terms in canonical text
// separated by sep (", " or " AND "), or any number (at least one) when n
// is -1: a relation's text must be exactly what the parser writes, so
// that equal relations are equal strings and DESCRIBE prints text that
// parses.
func parseTerms(text, sep string, n int) ([]cqltext.Term, string) {
	out, r := cqltext.ReadCanonical(text, sep, typeLen)
	if r != "" {
		return nil, r
	}
	if n >= 0 && len(out) != n {
		return nil, "expected " + strconv.Itoa(n) + " terms, found " + strconv.Itoa(len(out))
	}
	return out, ""
}

// parseTerm reads text, which must be exactly one term.
func parseTerm(text string) (cqltext.Term, string) {
	ts, r := parseTerms(text, ", ", 1)
	if r != "" {
		return cqltext.Term{}, r
	}
	return ts[0], ""
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
		return "relation " + clip.String(r.String()) + ": unknown operator " + clip.Quote(r.Op)
	}
	switch {
	case r.Key != "" && (r.Tuple || !op.compare):
		return "relation " + clip.String(r.String()) + ": a map element takes a comparison operator"
	case r.Tuple && !op.compare && r.Op != RelIn && r.Op != RelNotIn && r.Op != RelBetween:
		return "relation " + clip.String(r.String()) + ": a tuple relation takes a comparison, IN or BETWEEN"
	case r.Op == RelIsNot && r.Value != "NULL":
		return "relation " + clip.String(r.String()) + ": IS NOT takes NULL"
	}
	if r.Key != "" {
		if _, rs := parseTerm(r.Key); rs != "" {
			return "relation " + clip.String(r.String()) + ": map key: " + rs
		}
	}
	if r.Op == RelIsNot {
		return ""
	}
	if _, rs := relationTerms(r); rs != "" {
		return "relation " + clip.String(r.String()) + ": " + rs
	}
	return ""
}

// relationTerms returns the terms of r's value: one, the list of IN and
// NOT IN (in parentheses), or the two bounds of BETWEEN.
func relationTerms(r *ViewRelation) ([]cqltext.Term, string) {
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

// termTypeReason checks that term v can be a value of type t (user types
// resolved in k), for the column (or element) called what: a constant
// must be of a kind the native type takes, a collection, tuple or user
// type literal of the matching type, element by element. It returns
// Cassandra's message when it cannot.
func termTypeReason(k *Keyspace, v cqltext.Term, t Type, what string) string {
	var b strings.Builder
	return checkLiteral(&b, v, t, whereRules{k}, what, 0)
}

// whereRules are the rules of a view's WHERE clause, as Cassandra's
// Constants.Literal, Lists, Sets, Maps, Tuples and UserTypes check a
// term, in its words: no null anywhere.
type whereRules struct {
	k *Keyspace
}

func (c whereRules) native(b *strings.Builder, v cqltext.Term, t NativeType, what string) string {
	if !constantTakes(v.Kind, t) {
		return c.mismatch(v, t, what, "")
	}
	cqltext.Write(b, v, 0)
	return ""
}

func (whereRules) null(what string, _ bool) string {
	return "Invalid null value in condition for column " + clip.String(what)
}

func (whereRules) mismatch(v cqltext.Term, t Type, what, _ string) string {
	if name, constant := constantNames[v.Kind]; constant {
		return "Invalid " + name + " constant (" + clip.String(v.Text) + ") for \"" + clip.String(what) + "\" of type " + typeString(t)
	}
	return "Invalid " + collectionNames[v.Kind] + " literal for " + clip.String(what) + " of type " + typeString(t)
}

func (whereRules) vectorSize(v cqltext.Term, t VectorType, what string) string {
	return "Invalid vector literal for " + clip.String(what) + " of type " + typeString(t) + "; expected " + strconv.Itoa(t.Dimension) + " elements, but given " + strconv.Itoa(len(v.Elems))
}

func (whereRules) tupleSize(t TupleType, n int, what string) string {
	return "Invalid tuple literal for " + clip.String(what) + ": too many elements. Type " + typeString(t) + " expects " + strconv.Itoa(len(t.Elems)) + " but got " + strconv.Itoa(n)
}

// userType takes {} (an empty map) for any user type, and a user type
// literal's fields unchecked when the type is not in the keyspace.
func (c whereRules) userType(v cqltext.Term, t UserTypeRef, given Type, what string) (*UserType, string) {
	if v.Kind != cqltext.KindUserType && (v.Kind != cqltext.KindMap || len(v.Elems) != 0) {
		return nil, c.mismatch(v, given, what, "")
	}
	ut, _ := c.k.UserType(t.Name)
	return ut, ""
}

func (whereRules) fieldKey(cqltext.Term, int) string { return "" }

func (whereRules) unknownField(name string, ut *UserType, _ UserTypeRef) string {
	return "Unknown field '" + clip.String(name) + "' in value of user defined type " + clip.String(ut.Name)
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
				return nil, nil, "Undefined column name " + clip.String(cqltext.QuoteIdentifier(name)) + " in table " + clip.String(base.QualifiedName())
			}
			cols[j] = c
		}
		if r.Op == RelIsNot {
			notNull[r.Columns[0]] = true
			continue
		}
		if r.Op == RelLike {
			return nil, nil, "LIKE restriction is only supported on properly indexed columns. " + clip.String(r.String()) + " is not valid."
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
	col := clip.String(cqltext.QuoteIdentifier(name))
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
	name := clip.String(cqltext.QuoteIdentifier(c.Name))
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
			if rs := termTypeReason(k, kt, m.Key, "key("+c.Name+")"); rs != "" {
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
		if rs := termTypeReason(k, v, valueType, what); rs != "" {
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
		names[i] = cqltext.QuoteIdentifier(c.Name)
	}
	list := clip.String(strings.Join(names, ", "))
	prev := -1
	for i, c := range cols {
		if c.Kind != Clustering {
			return "Multi-column relations can only be applied to clustering columns but was applied to: " + clip.String(cqltext.QuoteIdentifier(c.Name))
		}
		for _, d := range cols[:i] {
			if d.Name == c.Name {
				return "Column \"" + clip.String(c.Name) + "\" appeared twice in a relation: " + clip.String(r.String())
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
		if v.Kind != cqltext.KindTuple {
			return "Invalid tuple literal for (" + list + "): expected a tuple of " + strconv.Itoa(len(cols)) + " elements, not " + clip.String(v.String())
		}
		if len(v.Elems) != len(cols) {
			return "Expected " + strconv.Itoa(len(cols)) + " elements in value tuple, but got " + strconv.Itoa(len(v.Elems)) + ": " + clip.String(v.String())
		}
		for i, e := range v.Elems {
			if rs := termTypeReason(k, e, cols[i].Type, cols[i].Name); rs != "" {
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
