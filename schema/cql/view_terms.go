package cql

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
)

// The terms of a view's WHERE clause, after Parser.g's term: termAddition
// (+ and - of products), termMultiplication (*, / and % of groups),
// termGroup (a simple term, or '-' and one) and simpleTerm (a value, a
// function call or a type hint '(' type ')' simpleTerm). Each is returned
// in the canonical text cqltext.ReadCanonical reads back: one
// space each side of an operator, a function as [ks.]name(args) with
// names as cqltext.QuoteIdentifier writes them, a hint as (type)term, a
// duration as written, and the '-' of a number or a duration folded into
// the constant. Each operator, argument, element and hinted term nests one
// level, as schema counts them. Bind markers are refused, as Cassandra
// refuses them in CREATE MATERIALIZED VIEW.

// viewTerm parses a term of a relation (termAddition).
func (p *parser) viewTerm(depth int) (string, error) {
	return p.viewOperations(depth, p.viewProduct, "+", "-")
}

// viewProduct parses termMultiplication.
func (p *parser) viewProduct(depth int) (string, error) {
	return p.viewOperations(depth, p.viewGroup, "*", "/", "%")
}

// viewOperations parses operands joined by the operators ops, left to
// right.
func (p *parser) viewOperations(depth int, operand func(int) (string, error), ops ...string) (string, error) {
	left, err := operand(depth)
	if err != nil {
		return "", err
	}
	for {
		t := p.peek()
		op := ""
		for _, o := range ops {
			if t.kind == tokPunct && t.val == o {
				op = o
			}
		}
		if op == "" {
			return left, nil
		}
		p.i++
		if depth++; depth > cqltext.MaxNesting {
			return "", p.errAt(t, "literal is nested too deeply")
		}
		right, err := operand(depth)
		if err != nil {
			return "", err
		}
		left += " " + op + " " + right
	}
}

// viewGroup parses termGroup: a simple term, or '-' and one (a number or
// a duration takes the sign).
func (p *parser) viewGroup(depth int) (string, error) {
	if t := p.peek(); t.kind != tokPunct || t.val != "-" {
		return p.viewSimple(depth)
	}
	p.i++
	switch n := p.peek(); n.kind {
	case tokUUID, tokBlob:
		return "", p.errAt(n, "a UUID or a blob cannot be negated")
	case tokInt, tokFloat, tokDuration:
		p.i++
		if rest, ok := strings.CutPrefix(n.val, "-"); ok {
			return rest, nil
		}
		return "-" + n.val, nil
	}
	v, err := p.viewSimple(depth + 1)
	return "-" + v, err
}

// viewSimple parses simpleTerm: a constant (strings quoted with ”, the
// others as the lexer reads them), null, a list [a, b], a set {a, b}, a
// map {k: v}, a user type literal {field: v}, a tuple (a, b), a function
// call or a type hint.
func (p *parser) viewSimple(depth int) (string, error) {
	t := p.peek()
	if depth > cqltext.MaxNesting {
		return "", p.errAt(t, "literal is nested too deeply")
	}
	if err := p.bindMarker(); err != nil {
		return "", err
	}
	switch t.kind {
	case tokString:
		p.i++
		return cqltext.QuoteString(t.val), nil
	case tokInt, tokFloat, tokUUID, tokBlob, tokDuration:
		p.i++
		return t.val, nil
	case tokIdent, tokQuoted:
		if call, ok, err := p.viewFunction(depth); ok {
			return call, err
		}
		if t.kind == tokQuoted {
			break
		}
		switch t.val {
		case "true", "false", "null":
			p.i++
			return t.val, nil
		}
		if raw := p.src[t.pos:t.end]; cqltext.DurationLen(raw) == len(raw) {
			p.i++ // an ISO duration that is also a name (P1D): see lex
			return raw, nil
		}
	case tokPunct:
		switch t.val {
		case "[":
			p.i++
			return p.termList(depth, "[", "]")
		case "(":
			if hint, ok, err := p.viewHint(depth); ok {
				return hint, err
			}
			p.i++
			return p.termList(depth, "(", ")")
		case "{":
			p.i++
			return p.braceTerm(depth)
		}
	}
	return "", p.unexpected("a constant, a collection, a tuple, a user type literal, a function call or a type hint")
}

// viewFunction parses a function call, [ks.]name(args), if one is next;
// ok is false, and nothing consumed, when none is.
func (p *parser) viewFunction(depth int) (call string, ok bool, err error) {
	t, n := p.peek(), 1
	name := cqltext.QuoteIdentifier(t.val)
	if dot, fn := p.peekAt(1), p.peekAt(2); dot.kind == tokPunct && dot.val == "." && (fn.kind == tokIdent || fn.kind == tokQuoted) {
		name += "." + cqltext.QuoteIdentifier(fn.val)
		n = 3
	}
	if open := p.peekAt(n); open.kind != tokPunct || open.val != "(" {
		return "", false, nil
	}
	if t.kind == tokIdent && t.val == "cast" && n == 1 {
		return "", true, p.errAt(t, "CAST(... AS type) in the WHERE clause of a materialized view is not supported; use a type hint, (type) term")
	}
	p.i += n + 1
	var args []string
	if !p.punct(")") {
		for {
			a, err := p.viewTerm(depth + 1)
			if err != nil {
				return "", true, err
			}
			args = append(args, a)
			if p.punct(")") {
				break
			}
			if !p.punct(",") {
				return "", true, p.unexpected("',' or ')'")
			}
		}
	}
	return name + "(" + strings.Join(args, ", ") + ")", true, nil
}

// viewHint parses a type hint, '(' type ')' simpleTerm, if one is next: a
// type, its ')', then the start of a term. ok is false, and nothing
// consumed, when none is (a tuple).
func (p *parser) viewHint(depth int) (hint string, ok bool, err error) {
	save := p.i
	p.i++
	if n := p.peek(); n.kind == tokIdent && (n.val == "true" || n.val == "false" || n.val == "null" || cqltext.DurationLen(p.src[n.pos:n.end]) == n.end-n.pos) {
		p.i = save
		return "", false, nil
	}
	typ, terr := p.typ(0)
	if terr != nil || !p.punct(")") || !startsTerm(p.peek()) {
		p.i = save
		return "", false, nil
	}
	v, err := p.viewSimple(depth + 1)
	return "(" + typ.String() + ")" + v, true, err
}

// startsTerm reports whether t can begin a simple term.
func startsTerm(t token) bool {
	switch t.kind {
	case tokString, tokInt, tokFloat, tokUUID, tokBlob, tokDuration, tokIdent, tokQuoted:
		return true
	case tokPunct:
		return strings.Contains("[({:?", t.val)
	}
	return false
}

// bindMarker refuses a bind variable (":name" or "?"), as Cassandra
// refuses them in CREATE MATERIALIZED VIEW.
func (p *parser) bindMarker() error {
	if t := p.peek(); t.kind == tokPunct && (t.val == ":" || t.val == "?") {
		return p.errAt(t, "Bind variables are not allowed in CREATE MATERIALIZED VIEW statements")
	}
	return nil
}
