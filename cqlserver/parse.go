package cqlserver

import (
	"errors"
	"fmt"
	"strings"
)

// tokKind is the kind of a token of the small SELECT grammar.
type tokKind uint8

const (
	tokIdent  tokKind = iota // an unquoted name or keyword, lowercased
	tokQuoted                // a "quoted" name, as written
	tokString                // a 'string' literal, unescaped
	tokMarker                // ?
	tokPunct                 // * , . = ;
)

// token is one token; text is the name, the literal or the punctuation.
type token struct {
	kind tokKind
	text string
}

// errLex is a statement with a character the grammar does not know.
var errLex = errors.New("unexpected character")

// lex cuts text into tokens.
func lex(text string) ([]token, error) {
	var toks []token
	for i := 0; i < len(text); {
		ch := text[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n':
			i++
		case isNameStart(ch):
			j := i + 1
			for j < len(text) && (isNameStart(text[j]) || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			toks = append(toks, token{tokIdent, strings.ToLower(text[i:j])})
			i = j
		case ch == '"' || ch == '\'':
			s, n, ok := unquote(text[i:], ch)
			if !ok {
				return nil, fmt.Errorf("%w: unterminated %c", errLex, ch)
			}
			kind := tokString
			if ch == '"' {
				kind = tokQuoted
			}
			toks = append(toks, token{kind, s})
			i += n
		case ch == '?':
			toks = append(toks, token{tokMarker, "?"})
			i++
		case strings.IndexByte("*,.=;", ch) >= 0:
			toks = append(toks, token{tokPunct, string(ch)})
			i++
		default:
			return nil, fmt.Errorf("%w %q", errLex, ch)
		}
	}
	return toks, nil
}

func isNameStart(ch byte) bool {
	return ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
}

// unquote reads a quoted token at the start of s, the quote doubled
// inside it; it returns the content and the length read.
func unquote(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

// selectStmt is a SELECT of the shapes drivers send for system tables:
// a column list or *, a table, and equalities joined by AND.
type selectStmt struct {
	columns  []string // nil for *
	keyspace string   // empty when the table is not qualified
	table    string
	where    []condition
	markers  int // how many bind markers
}

// condition is column = value; marker says the value is the bind marker
// numbered index (from 0) instead of the literal value.
type condition struct {
	column string
	value  string
	marker bool
	index  int
}

// parser reads a selectStmt from tokens.
type parser struct {
	toks    []token
	pos     int
	markers int
}

// parseSelect parses text, refusing whatever is not of the shapes known.
func parseSelect(text string) (*selectStmt, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	st := &selectStmt{}
	if !p.keyword("select") {
		return nil, errors.New("expected SELECT")
	}
	if !p.punct("*") {
		if st.columns, err = p.names(); err != nil {
			return nil, err
		}
	}
	if !p.keyword("from") {
		return nil, errors.New("expected FROM")
	}
	if st.table, err = p.name(); err != nil {
		return nil, err
	}
	if p.punct(".") {
		st.keyspace = st.table
		if st.table, err = p.name(); err != nil {
			return nil, err
		}
	}
	if p.keyword("where") {
		if st.where, err = p.conditions(); err != nil {
			return nil, err
		}
	}
	p.punct(";")
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos].text)
	}
	st.markers = p.markers
	return st, nil
}

func (p *parser) keyword(w string) bool {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tokIdent && p.toks[p.pos].text == w {
		p.pos++
		return true
	}
	return false
}

func (p *parser) punct(s string) bool {
	if p.pos < len(p.toks) && p.toks[p.pos].kind == tokPunct && p.toks[p.pos].text == s {
		p.pos++
		return true
	}
	return false
}

func (p *parser) name() (string, error) {
	if p.pos < len(p.toks) && (p.toks[p.pos].kind == tokIdent || p.toks[p.pos].kind == tokQuoted) {
		p.pos++
		return p.toks[p.pos-1].text, nil
	}
	return "", errors.New("expected a name")
}

func (p *parser) names() ([]string, error) {
	var out []string
	for {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if !p.punct(",") {
			return out, nil
		}
	}
}

func (p *parser) conditions() ([]condition, error) {
	var out []condition
	for {
		col, err := p.name()
		if err != nil {
			return nil, err
		}
		if !p.punct("=") {
			return nil, errors.New("only = restrictions are served")
		}
		if p.pos == len(p.toks) {
			return nil, errors.New("expected a value")
		}
		t := p.toks[p.pos]
		p.pos++
		switch t.kind {
		case tokString:
			out = append(out, condition{column: col, value: t.text})
		case tokMarker:
			out = append(out, condition{column: col, marker: true, index: p.markers})
			p.markers++
		default:
			return nil, errors.New("expected a string or a bind marker")
		}
		if !p.keyword("and") {
			return out, nil
		}
	}
}
