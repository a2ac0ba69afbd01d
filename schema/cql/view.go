package cql

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// The materialized view statements, after Cassandra's Parser.g rules
// createMaterializedViewStatement, alterMaterializedViewStatement and
// dropMaterializedViewStatement. What Cassandra refuses of them whatever
// the schema (an alias or an expression in the selection, a token
// relation, a custom index expression, a bind variable) is refused here,
// at its token, in Cassandra's words; the rest is schema.Apply's.

// createView parses the rest of CREATE MATERIALIZED VIEW, after VIEW:
// [IF NOT EXISTS] [ks.]name AS SELECT selectors FROM [ks.]base
// [WHERE relations] PRIMARY KEY (...) [WITH viewProperty AND ...].
func (p *parser) createView() (schema.Statement, error) {
	st := &schema.CreateView{}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a view name"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("as", "AS"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("select", "SELECT"); err != nil {
		return nil, err
	}
	if err := p.viewSelectors(st); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("from", "FROM"); err != nil {
		return nil, err
	}
	if st.BaseKeyspace, st.Base, err = p.qualifiedName("a table name"); err != nil {
		return nil, err
	}
	if p.keyword("where") {
		if st.Where, err = p.viewWhere(st.Name); err != nil {
			return nil, err
		}
	}
	if !isKeyword(p.peek(), "primary") {
		if st.Where == nil {
			return nil, p.unexpected("WHERE or PRIMARY KEY")
		}
		return nil, p.unexpected("AND or PRIMARY KEY")
	}
	if err := p.viewPrimaryKey(st); err != nil {
		return nil, err
	}
	if p.keyword("with") {
		if err := p.viewProperties(st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// viewSelectors parses "*" or "column, ...": a view selects columns by
// name, without aliases.
func (p *parser) viewSelectors(st *schema.CreateView) error {
	if p.punct("*") {
		st.AllColumns = true
		return nil
	}
	for {
		t := p.peek()
		name, err := p.ident("a column name or *")
		if err != nil {
			if t.kind != tokEOF && !isKeyword(t, "from") {
				return p.errAt(t, "Can only select columns by name when defining a materialized view (got "+p.src[t.pos:t.end]+")")
			}
			return err
		}
		if n := p.peek(); n.kind == tokPunct && (n.val == "(" || n.val == "." || n.val == "[") {
			return p.errAt(t, "Can only select columns by name when defining a materialized view (got "+p.src[t.pos:n.end]+"...)")
		}
		if isKeyword(p.peek(), "as") && !isKeyword(p.peekAt(1), "from") {
			alias := p.peekAt(1)
			return p.errAt(t, "Cannot use aliases when defining a materialized view (got "+p.src[t.pos:alias.end]+")")
		}
		st.Columns = append(st.Columns, name)
		if !p.punct(",") {
			return nil
		}
	}
}

// viewWhere parses the relations of the WHERE clause, joined by AND.
func (p *parser) viewWhere(view string) ([]schema.ViewRelation, error) {
	var out []schema.ViewRelation
	for {
		r, err := p.viewRelation(view, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if !p.keyword("and") {
			return out, nil
		}
	}
}

// adjacent reports whether the next two tokens are a and b with nothing
// between them, as Cassandra's lexer reads "<=" and ">=".
func (p *parser) adjacent(a, b string) bool {
	t, u := p.peek(), p.peekAt(1)
	return t.kind == tokPunct && t.val == a && u.kind == tokPunct && u.val == b && t.end == u.pos
}

// relationType parses one of = < <= > >= !=, or returns "".
func (p *parser) relationType() string {
	t := p.peek()
	if t.kind != tokPunct {
		return ""
	}
	switch t.val {
	case "<", ">":
		if p.adjacent(t.val, "=") {
			p.i += 2
			return t.val + "="
		}
		p.i++
		return t.val
	case "=", "!=":
		p.i++
		return t.val
	}
	return ""
}

// viewRelation parses one relation (Parser.g's relation): a column and an
// operator and its value, a map element, a tuple of columns, or a
// relation in parentheses (depth counts them).
func (p *parser) viewRelation(view string, depth int) (schema.ViewRelation, error) {
	var r schema.ViewRelation
	t := p.peek()
	if depth > cqltext.MaxNesting {
		return r, p.errAt(t, "relation is nested too deeply")
	}
	switch {
	case isKeyword(t, "token") && p.peekAt(1).kind == tokPunct && p.peekAt(1).val == "(":
		return r, p.errAt(t, "Cannot use token relation when defining a materialized view")
	case isKeyword(t, "expr") && p.peekAt(1).kind == tokPunct && p.peekAt(1).val == "(" && t.end == p.peekAt(1).pos:
		return r, p.errAt(t, "WHERE clause for materialized view '"+view+"' cannot contain custom index expressions")
	case t.kind == tokPunct && t.val == "(":
		n := p.peekAt(2)
		if n.kind == tokPunct && (n.val == "," || n.val == ")") {
			return p.tupleRelation()
		}
		p.i++
		r, err := p.viewRelation(view, depth+1)
		if err != nil {
			return r, err
		}
		return r, p.expectPunct(")")
	}
	name, err := p.ident("a column name")
	if err != nil {
		return r, err
	}
	r.Columns = []string{name}
	if p.punct("[") {
		if r.Key, err = p.viewTerm(0); err != nil {
			return r, err
		}
		if err := p.expectPunct("]"); err != nil {
			return r, err
		}
		if r.Op = p.relationType(); r.Op == "" {
			return r, p.unexpected("=, <, <=, >, >= or !=")
		}
		r.Value, err = p.viewTerm(0)
		return r, err
	}
	if r.Op = p.relationType(); r.Op != "" {
		r.Value, err = p.viewTerm(0)
		return r, err
	}
	switch {
	case p.keyword("is"):
		if err := p.expectKeyword("not", "NOT"); err != nil {
			return r, err
		}
		if err := p.expectKeyword("null", "NULL"); err != nil {
			return r, err
		}
		r.Op, r.Value = schema.RelIsNot, "NULL"
		return r, nil
	case p.keyword("between"):
		r.Op = schema.RelBetween
		r.Value, err = p.betweenValues(p.viewTerm)
		return r, err
	case p.keyword("like"):
		r.Op = schema.RelLike
		r.Value, err = p.viewTerm(0)
		return r, err
	case p.keyword("in"):
		r.Op = schema.RelIn
		r.Value, err = p.inValues()
		return r, err
	case p.keyword("contains"):
		r.Op = schema.RelContains
		if p.keyword("key") {
			r.Op = schema.RelContainsKey
		}
		r.Value, err = p.viewTerm(0)
		return r, err
	case p.keyword("not"):
		switch {
		case p.keyword("in"):
			r.Op = schema.RelNotIn
			r.Value, err = p.inValues()
		case p.keyword("contains"):
			r.Op = schema.RelNotContains
			if p.keyword("key") {
				r.Op = schema.RelNotContainsKey
			}
			r.Value, err = p.viewTerm(0)
		default:
			err = p.unexpected("IN or CONTAINS")
		}
		return r, err
	}
	return r, p.unexpected("an operator (=, <, <=, >, >=, !=, IN, NOT IN, CONTAINS, BETWEEN, LIKE or IS NOT NULL)")
}

// tupleRelation parses "(a, b) op value": a comparison with a tuple, IN
// a list of tuples, or BETWEEN two tuples.
func (p *parser) tupleRelation() (schema.ViewRelation, error) {
	r := schema.ViewRelation{Tuple: true}
	p.i++ // (
	for {
		name, err := p.ident("a column name")
		if err != nil {
			return r, err
		}
		r.Columns = append(r.Columns, name)
		if p.punct(")") {
			break
		}
		if err := p.expectPunct(","); err != nil {
			return r, err
		}
	}
	var err error
	switch {
	case p.keyword("in"):
		r.Op = schema.RelIn
		r.Value, err = p.inValues()
	case isKeyword(p.peek(), "not") && isKeyword(p.peekAt(1), "in"):
		p.i += 2
		r.Op = schema.RelNotIn
		r.Value, err = p.inValues()
	case p.keyword("between"):
		r.Op = schema.RelBetween
		r.Value, err = p.betweenValues(p.tupleTerm)
	default:
		if r.Op = p.relationType(); r.Op == "" {
			return r, p.unexpected("=, <, <=, >, >=, !=, IN or BETWEEN")
		}
		r.Value, err = p.tupleTerm(0)
	}
	return r, err
}

// tupleTerm parses a tuple literal, the value of a tuple relation.
func (p *parser) tupleTerm(depth int) (string, error) {
	if t := p.peek(); t.kind != tokPunct || t.val != "(" {
		if err := p.bindMarker(); err != nil {
			return "", err
		}
		return "", p.unexpected("a tuple of values")
	}
	return p.viewTerm(depth)
}

// betweenValues parses "t1 AND t2" of BETWEEN, each term read by term.
func (p *parser) betweenValues(term func(int) (string, error)) (string, error) {
	a, err := term(0)
	if err != nil {
		return "", err
	}
	if err := p.expectKeyword("and", "AND"); err != nil {
		return "", err
	}
	b, err := term(0)
	if err != nil {
		return "", err
	}
	return a + " AND " + b, nil
}

// inValues parses the list of IN: "(t1, t2, ...)", possibly empty.
func (p *parser) inValues() (string, error) {
	if err := p.bindMarker(); err != nil {
		return "", err
	}
	if err := p.expectPunct("("); err != nil {
		return "", err
	}
	var parts []string
	if !p.punct(")") {
		for {
			v, err := p.viewTerm(0)
			if err != nil {
				return "", err
			}
			parts = append(parts, v)
			if p.punct(")") {
				break
			}
			if !p.punct(",") {
				return "", p.unexpected("',' or ')'")
			}
		}
	}
	return "(" + strings.Join(parts, ", ") + ")", nil
}

// termList parses the rest of a list or tuple literal, after open.
func (p *parser) termList(depth int, open, close string) (string, error) {
	var parts []string
	if close == "]" && p.punct(close) {
		return open + close, nil
	}
	for {
		v, err := p.viewTerm(depth + 1)
		if err != nil {
			return "", err
		}
		parts = append(parts, v)
		if p.punct(close) {
			return open + strings.Join(parts, ", ") + close, nil
		}
		if !p.punct(",") {
			return "", p.unexpected("',' or " + strconv.Quote(close))
		}
	}
}

// braceTerm parses the rest of {}, a set, a map or a user type literal
// (whose keys are field names, identifiers followed by ':').
func (p *parser) braceTerm(depth int) (string, error) {
	if p.punct("}") {
		return "{}", nil
	}
	var parts []string
	isField := func() bool {
		t, n := p.peek(), p.peekAt(1)
		return (t.kind == tokQuoted || t.kind == tokIdent && t.val != "true" && t.val != "false" && t.val != "null") &&
			n.kind == tokPunct && n.val == ":"
	}
	if isField() {
		for {
			if !isField() {
				return "", p.unexpected("a field name and ':'")
			}
			name := p.advance().val
			p.i++ // :
			v, err := p.viewTerm(depth + 1)
			if err != nil {
				return "", err
			}
			parts = append(parts, cqltext.QuoteIdentifier(name)+": "+v)
			if p.punct("}") {
				return "{" + strings.Join(parts, ", ") + "}", nil
			}
			if !p.punct(",") {
				return "", p.unexpected("',' or '}'")
			}
		}
	}
	isMap := false
	for i := 0; ; i++ {
		k, err := p.viewTerm(depth + 1)
		if err != nil {
			return "", err
		}
		if i == 0 {
			isMap = p.punct(":")
		} else if isMap {
			if err := p.expectPunct(":"); err != nil {
				return "", err
			}
		}
		if isMap {
			v, err := p.viewTerm(depth + 1)
			if err != nil {
				return "", err
			}
			k += ": " + v
		}
		parts = append(parts, k)
		if p.punct("}") {
			return "{" + strings.Join(parts, ", ") + "}", nil
		}
		if !p.punct(",") {
			return "", p.unexpected("',' or '}'")
		}
	}
}

// viewPrimaryKey parses PRIMARY KEY (pk, ck...) or PRIMARY KEY ((pk1,
// pk2), ck...).
func (p *parser) viewPrimaryKey(st *schema.CreateView) error {
	var ct schema.CreateTable
	if err := p.primaryKeyClause(&ct); err != nil {
		return err
	}
	st.PartitionKey, st.Clustering = ct.PartitionKey, ct.Clustering
	return nil
}

// viewProperties parses the view properties after WITH: table properties,
// id = uuid, and CLUSTERING ORDER BY (c ASC|DESC, ...), whose direction a
// view requires (as Cassandra's viewClusteringOrder does); several
// CLUSTERING ORDER BY extend the order, as in Cassandra.
func (p *parser) viewProperties(st *schema.CreateView) error {
	for {
		t := p.peek()
		switch {
		case isKeyword(t, "clustering") && isKeyword(p.peekAt(1), "order"):
			p.i += 2
			if err := p.expectKeyword("by", "BY"); err != nil {
				return err
			}
			if err := p.expectPunct("("); err != nil {
				return err
			}
			for {
				name, err := p.ident("a clustering column")
				if err != nil {
					return err
				}
				cc := schema.ClusteringColumn{Name: name}
				switch {
				case p.keyword("asc"):
				case p.keyword("desc"):
					cc.Order = schema.Desc
				default:
					return p.unexpected("ASC or DESC")
				}
				st.ClusteringOrder = append(st.ClusteringOrder, cc)
				if p.punct(")") {
					break
				}
				if !p.punct(",") {
					return p.unexpected("',' or ')'")
				}
			}
		case isKeyword(t, "compact") && isKeyword(p.peekAt(1), "storage"):
			return p.errAt(t, "COMPACT STORAGE tables are not allowed starting with version 4.0")
		case isKeyword(t, "clustering"):
			p.i++
			return p.unexpected("ORDER")
		case isIDProperty(p, t):
			if err := p.idProperty(&st.ID); err != nil {
				return err
			}
		case t.kind == tokIdent, t.kind == tokQuoted:
			if err := p.property(&st.Options); err != nil {
				return err
			}
		default:
			return p.unexpected("a view property or CLUSTERING ORDER BY")
		}
		if !p.keyword("and") {
			return nil
		}
	}
}

// alterView parses the rest of ALTER MATERIALIZED VIEW, after VIEW:
// [IF EXISTS] [ks.]name WITH properties.
func (p *parser) alterView() (schema.Statement, error) {
	st := &schema.AlterView{}
	var err error
	if st.IfExists, err = p.ifExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a view name"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("with", "WITH"); err != nil {
		return nil, err
	}
	if err := p.alterProperties(&st.Options, "view"); err != nil {
		return nil, err
	}
	return st, nil
}

// dropView parses the rest of DROP MATERIALIZED VIEW, after VIEW:
// [IF EXISTS] [ks.]name.
func (p *parser) dropView() (schema.Statement, error) {
	st := &schema.DropView{}
	var err error
	if st.IfExists, err = p.ifExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedName("a view name"); err != nil {
		return nil, err
	}
	return st, nil
}
