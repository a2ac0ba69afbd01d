package cql

import (
	"strings"

	"github.com/metalog/metalog/schema"
)

// litKind classifies a constant or collection literal.
type litKind uint8

const (
	litString litKind = iota + 1
	litInt
	litFloat
	litBool
	litUUID
	litBlob
	litDuration
	litMap
	litList
	litSet
)

// literal is a parsed term of a property value.
type literal struct {
	kind    litKind
	str     string // the value of a string, or the text of other constants
	entries []mapEntry
	elems   []literal
}

// mapEntry is one key: value of a map literal.
type mapEntry struct{ key, value literal }

// constantKinds gives the literal kind of each constant token kind.
var constantKinds = [...]litKind{
	tokString:   litString,
	tokInt:      litInt,
	tokFloat:    litFloat,
	tokUUID:     litUUID,
	tokBlob:     litBlob,
	tokDuration: litDuration,
}

// maxLiteralDepth bounds nesting of collection literals.
const maxLiteralDepth = 16

// term parses a constant or a collection literal.
func (p *parser) term() (literal, error) { return p.termDepth(0) }

// termDepth parses a term at depth levels of collection nesting, which is
// bounded so that hostile text cannot recurse without end.
func (p *parser) termDepth(depth int) (literal, error) {
	t := p.peek()
	if depth > maxLiteralDepth {
		return literal{}, p.errAt(t, "literal is nested too deeply")
	}
	if l, ok := p.signedFloatWord(); ok {
		return l, nil
	}
	switch t.kind {
	case tokString, tokInt, tokFloat, tokUUID, tokBlob, tokDuration:
		p.i++
		return literal{kind: constantKinds[t.kind], str: t.val}, nil
	case tokIdent:
		if t.val == "true" || t.val == "false" {
			p.i++
			return literal{kind: litBool, str: t.val}, nil
		}
		if raw := p.src[t.pos:t.end]; durationLen(raw) == len(raw) {
			p.i++ // an ISO duration that is also a name (P1D): see lex
			return literal{kind: litDuration, str: raw}, nil
		}
	case tokPunct:
		switch t.val {
		case "{":
			p.i++
			return p.mapOrSet(depth)
		case "[":
			p.i++
			l := literal{kind: litList}
			if p.punct("]") {
				return l, nil
			}
			for {
				e, err := p.termDepth(depth + 1)
				if err != nil {
					return literal{}, err
				}
				l.elems = append(l.elems, e)
				if p.punct("]") {
					return l, nil
				}
				if !p.punct(",") {
					return literal{}, p.unexpected("',' or ']'")
				}
			}
		}
	}
	return literal{}, p.unexpected("a constant or a map")
}

// mapOrSet parses the rest of "{k: v, ...}" or "{e, ...}".
func (p *parser) mapOrSet(depth int) (literal, error) {
	if p.punct("}") {
		return literal{kind: litMap}, nil
	}
	first, err := p.termDepth(depth + 1)
	if err != nil {
		return literal{}, err
	}
	if !p.punct(":") {
		l := literal{kind: litSet, elems: []literal{first}}
		for p.punct(",") {
			e, err := p.termDepth(depth + 1)
			if err != nil {
				return literal{}, err
			}
			l.elems = append(l.elems, e)
		}
		if err := p.expectPunct("}"); err != nil {
			return literal{}, err
		}
		return l, nil
	}
	l := literal{kind: litMap}
	key := first
	for {
		v, err := p.termDepth(depth + 1)
		if err != nil {
			return literal{}, err
		}
		l.entries = append(l.entries, mapEntry{key, v})
		if p.punct("}") {
			return l, nil
		}
		if !p.punct(",") {
			return literal{}, p.unexpected("',' or '}'")
		}
		if key, err = p.termDepth(depth + 1); err != nil {
			return literal{}, err
		}
		if err := p.expectPunct(":"); err != nil {
			return literal{}, err
		}
	}
}

// boolean returns the value of a boolean or of the strings 'true'/'false'.
func (l literal) boolean() (bool, bool) {
	if l.kind == litBool || l.kind == litString {
		switch strings.ToLower(l.str) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// scalarText returns the value of a string, or the text of a number or a
// boolean, as used for replication options.
func (l literal) scalarText() (string, bool) {
	switch l.kind {
	case litString, litInt, litFloat, litBool:
		return l.str, true
	}
	return "", false
}

// text returns the literal as canonical CQL text, which parses back to an
// equal literal.
func (l literal) text() string {
	var b strings.Builder
	l.write(&b)
	return b.String()
}

// write writes the text that text returns.
func (l literal) write(b *strings.Builder) {
	switch l.kind {
	case litString:
		b.WriteString(schema.QuoteString(l.str))
	case litMap:
		b.WriteString("{")
		for i, e := range l.entries {
			if i > 0 {
				b.WriteString(", ")
			}
			e.key.write(b)
			b.WriteString(": ")
			e.value.write(b)
		}
		b.WriteString("}")
	case litList, litSet:
		open, close := "[", "]"
		if l.kind == litSet {
			open, close = "{", "}"
		}
		b.WriteString(open)
		for i, e := range l.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteString(close)
	default:
		b.WriteString(l.str)
	}
}
