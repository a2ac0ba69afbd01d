package cql

import (
	"iter"
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
)

// A property value, an index's OPTIONS and a mask's argument are terms,
// cqltext.Term values built from tokens here; their canonical text is
// cqltext.Write's (Term.String).

// constantKinds gives the term kind of each constant token kind.
var constantKinds = [...]cqltext.Kind{
	tokString:   cqltext.KindString,
	tokInt:      cqltext.KindInteger,
	tokFloat:    cqltext.KindFloat,
	tokUUID:     cqltext.KindUUID,
	tokBlob:     cqltext.KindBlob,
	tokDuration: cqltext.KindDuration,
}

// term parses a constant or a collection literal.
func (p *parser) term() (cqltext.Term, error) { return p.termDepth(0) }

// termDepth parses a term at depth levels of collection nesting, which is
// bounded so that hostile text cannot recurse without end.
func (p *parser) termDepth(depth int) (cqltext.Term, error) {
	t := p.peek()
	if depth > cqltext.MaxNesting {
		return cqltext.Term{}, p.errAt(t, "literal is nested too deeply")
	}
	if l, ok := p.signedFloatWord(); ok {
		return l, nil
	}
	switch t.kind {
	case tokString, tokInt, tokFloat, tokUUID, tokBlob, tokDuration:
		p.i++
		return cqltext.Term{Kind: constantKinds[t.kind], Text: t.val}, nil
	case tokIdent:
		if t.val == "true" || t.val == "false" {
			p.i++
			return cqltext.Term{Kind: cqltext.KindBoolean, Text: t.val}, nil
		}
		if raw := p.src[t.pos:t.end]; cqltext.DurationLen(raw) == len(raw) {
			p.i++ // an ISO duration that is also a name (P1D): see lex
			return cqltext.Term{Kind: cqltext.KindDuration, Text: raw}, nil
		}
	case tokPunct:
		switch t.val {
		case "{":
			p.i++
			return p.mapOrSet(depth)
		case "[":
			p.i++
			l := cqltext.Term{Kind: cqltext.KindList}
			if p.punct("]") {
				return l, nil
			}
			for {
				e, err := p.termDepth(depth + 1)
				if err != nil {
					return cqltext.Term{}, err
				}
				l.Elems = append(l.Elems, e)
				if p.punct("]") {
					return l, nil
				}
				if !p.punct(",") {
					return cqltext.Term{}, p.unexpected("',' or ']'")
				}
			}
		}
	}
	return cqltext.Term{}, p.unexpected("a constant or a map")
}

// mapOrSet parses the rest of "{k: v, ...}" or "{e, ...}".
func (p *parser) mapOrSet(depth int) (cqltext.Term, error) {
	if p.punct("}") {
		return cqltext.Term{Kind: cqltext.KindMap}, nil
	}
	first, err := p.termDepth(depth + 1)
	if err != nil {
		return cqltext.Term{}, err
	}
	if !p.punct(":") {
		l := cqltext.Term{Kind: cqltext.KindSet, Elems: []cqltext.Term{first}}
		for p.punct(",") {
			e, err := p.termDepth(depth + 1)
			if err != nil {
				return cqltext.Term{}, err
			}
			l.Elems = append(l.Elems, e)
		}
		if err := p.expectPunct("}"); err != nil {
			return cqltext.Term{}, err
		}
		return l, nil
	}
	l := cqltext.Term{Kind: cqltext.KindMap}
	key := first
	for {
		v, err := p.termDepth(depth + 1)
		if err != nil {
			return cqltext.Term{}, err
		}
		l.Elems = append(l.Elems, key, v)
		if p.punct("}") {
			return l, nil
		}
		if !p.punct(",") {
			return cqltext.Term{}, p.unexpected("',' or '}'")
		}
		if key, err = p.termDepth(depth + 1); err != nil {
			return cqltext.Term{}, err
		}
		if err := p.expectPunct(":"); err != nil {
			return cqltext.Term{}, err
		}
	}
}

// pairs yields the keys and values of map literal l in order.
func pairs(l cqltext.Term) iter.Seq2[cqltext.Term, cqltext.Term] {
	return func(yield func(cqltext.Term, cqltext.Term) bool) {
		for i := 0; i+1 < len(l.Elems); i += 2 {
			if !yield(l.Elems[i], l.Elems[i+1]) {
				return
			}
		}
	}
}

// boolean returns the value of a boolean or of the strings 'true'/'false'.
func boolean(l cqltext.Term) (bool, bool) {
	if l.Kind == cqltext.KindBoolean || l.Kind == cqltext.KindString {
		switch strings.ToLower(l.Text) {
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
func scalarText(l cqltext.Term) (string, bool) {
	switch l.Kind {
	case cqltext.KindString, cqltext.KindInteger, cqltext.KindFloat, cqltext.KindBoolean:
		return l.Text, true
	}
	return "", false
}
