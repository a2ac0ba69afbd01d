package cql

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// functionName parses a function or aggregate name, as Cassandra's
// allowedFunctionName: an identifier (unquoted names are lowercased), a
// quoted name, or one of the keywords Cassandra allows there unquoted
// (token, which metalog's reserved list holds; count and the unreserved
// keywords are identifiers here already).
func (p *parser) functionName(what string) (string, error) {
	if p.keyword("token") {
		return "token", nil
	}
	return p.ident(what)
}

// qualifiedFunctionName parses [keyspace.]function.
func (p *parser) qualifiedFunctionName(what string) (ks, name string, err error) {
	if t := p.peek(); (t.kind == tokIdent || t.kind == tokQuoted) && isPunct(p.peekAt(1), ".") {
		if ks, err = p.ident("a keyspace name"); err != nil {
			return "", "", err
		}
		p.i++
	}
	name, err = p.functionName(what)
	return ks, name, err
}

// isPunct reports whether t is the punctuation s.
func isPunct(t token, s string) bool { return t.kind == tokPunct && t.val == s }

// createFunction parses the rest of CREATE [OR REPLACE] FUNCTION, after
// FUNCTION: [IF NOT EXISTS] [ks.]name ([arg type, ...]) (CALLED | RETURNS
// NULL) ON NULL INPUT RETURNS type LANGUAGE lang AS 'body'.
func (p *parser) createFunction(orReplace bool) (schema.Statement, error) {
	st := &schema.CreateFunction{OrReplace: orReplace}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedFunctionName("a function name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	if !p.punct(")") {
		for {
			var a schema.FunctionArg
			if a.Name, err = p.ident("an argument name"); err != nil {
				return nil, err
			}
			if a.Type, err = p.typ(0); err != nil {
				return nil, err
			}
			st.Args = append(st.Args, a)
			if p.punct(")") {
				break
			}
			if !p.punct(",") {
				return nil, p.unexpected("',' or ')'")
			}
		}
	}
	switch {
	case p.keyword("called"):
		st.CalledOnNullInput = true
	case p.keyword("returns"):
		if err := p.expectKeyword("null", "NULL"); err != nil {
			return nil, err
		}
	default:
		return nil, p.unexpected("CALLED ON NULL INPUT or RETURNS NULL ON NULL INPUT")
	}
	for _, kw := range [...]string{"on", "null", "input", "returns"} {
		if err := p.expectKeyword(kw, strings.ToUpper(kw)); err != nil {
			return nil, err
		}
	}
	if st.ReturnType, err = p.typ(0); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("language", "LANGUAGE"); err != nil {
		return nil, err
	}
	lang := p.peek()
	if lang.kind != tokIdent || cqltext.IsReserved(lang.val) {
		return nil, p.unexpected("a language name (java)")
	}
	p.i++
	st.Language = lang.val
	if err := p.expectKeyword("as", "AS"); err != nil {
		return nil, err
	}
	body := p.peek()
	if body.kind != tokString {
		return nil, p.unexpected("the function body as a string ('...' or $$...$$)")
	}
	p.i++
	st.Body = body.val
	return st, nil
}

// argTypes parses "(type, ...)", which may be empty; the '(' is consumed.
func (p *parser) argTypes() ([]schema.Type, error) {
	if p.punct(")") {
		return nil, nil
	}
	var out []schema.Type
	for {
		t, err := p.typ(0)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if p.punct(")") {
			return out, nil
		}
		if !p.punct(",") {
			return nil, p.unexpected("',' or ')'")
		}
	}
}

// createAggregate parses the rest of CREATE [OR REPLACE] AGGREGATE, after
// AGGREGATE: [IF NOT EXISTS] [ks.]name ([type, ...]) SFUNC f STYPE type
// [FINALFUNC f] [INITCOND term].
func (p *parser) createAggregate(orReplace bool) (schema.Statement, error) {
	st := &schema.CreateAggregate{OrReplace: orReplace}
	var err error
	if st.IfNotExists, err = p.ifNotExists(); err != nil {
		return nil, err
	}
	if st.Keyspace, st.Name, err = p.qualifiedFunctionName("an aggregate name"); err != nil {
		return nil, err
	}
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	if st.ArgTypes, err = p.argTypes(); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("sfunc", "SFUNC"); err != nil {
		return nil, err
	}
	if st.StateFunc, err = p.functionName("a state function name"); err != nil {
		return nil, err
	}
	if err := p.expectKeyword("stype", "STYPE"); err != nil {
		return nil, err
	}
	if st.StateType, err = p.typ(0); err != nil {
		return nil, err
	}
	if p.keyword("finalfunc") {
		if st.FinalFunc, err = p.functionName("a final function name"); err != nil {
			return nil, err
		}
	}
	if p.keyword("initcond") {
		if st.InitCond, err = p.initCond(); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// initCond parses the INITCOND term, the statement's last part: constants
// (strings, numbers, booleans, null, UUIDs, blobs), field names, and
// (), [] and {} with ',' and ':' between them, balanced. It returns the
// term's tokens as text, spaced as "{a: [1, 2]}" (comments dropped);
// schema.Apply checks the term against the state type.
func (p *parser) initCond() (string, error) {
	start := p.peek()
	var parts []string
	var open []string
	for {
		t := p.peek()
		if t.kind == tokEOF || len(open) == 0 && isPunct(t, ";") {
			break
		}
		switch t.kind {
		case tokString, tokInt, tokFloat, tokUUID, tokBlob, tokQuoted:
		case tokIdent:
		case tokPunct:
			switch t.val {
			case "(", "[", "{":
				if len(open) >= 16 {
					return "", p.errAt(t, "INITCOND is nested too deeply")
				}
				open = append(open, map[string]string{"(": ")", "[": "]", "{": "}"}[t.val])
			case ")", "]", "}":
				if len(open) == 0 || open[len(open)-1] != t.val {
					return "", p.errAt(t, "unbalanced "+quoteTok(t.val)+" in INITCOND")
				}
				open = open[:len(open)-1]
			case ",", ":":
				if len(open) == 0 {
					return "", p.unexpected("';' or end of input")
				}
			default:
				return "", p.unexpected("a term (a constant or a collection)")
			}
		default:
			return "", p.unexpected("a term (a constant or a collection)")
		}
		text := p.src[t.pos:t.end]
		if n := len(parts); n > 0 && !strings.Contains("([{", parts[n-1]) && !strings.Contains(")]},:", text) {
			parts = append(parts, " ")
		}
		parts = append(parts, text)
		p.i++
		if len(open) == 0 {
			break
		}
	}
	if len(open) > 0 {
		return "", p.unexpected(quoteTok(open[len(open)-1]))
	}
	if len(parts) == 0 {
		return "", p.errAt(start, "INITCOND needs a term")
	}
	return strings.Join(parts, ""), nil
}

// dropFunction parses the rest of DROP FUNCTION or DROP AGGREGATE (after
// the kind): [IF EXISTS] [ks.]name [(type, ...)].
func (p *parser) dropFunction(aggregate bool) (schema.Statement, error) {
	ifExists, err := p.ifExists()
	if err != nil {
		return nil, err
	}
	what := "a function name"
	if aggregate {
		what = "an aggregate name"
	}
	ks, name, err := p.qualifiedFunctionName(what)
	if err != nil {
		return nil, err
	}
	var args []schema.Type
	given := p.punct("(")
	if given {
		if args, err = p.argTypes(); err != nil {
			return nil, err
		}
	}
	if aggregate {
		return &schema.DropAggregate{Keyspace: ks, Name: name, IfExists: ifExists, ArgTypes: args, ArgsGiven: given}, nil
	}
	return &schema.DropFunction{Keyspace: ks, Name: name, IfExists: ifExists, ArgTypes: args, ArgsGiven: given}, nil
}
