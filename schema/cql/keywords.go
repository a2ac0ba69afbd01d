package cql

import (
	"github.com/metalog/metalog/internal/cqltext"
)

// propertyValue parses the value of a property (Parser.g's propertyValue
// or a map): a constant, a collection literal, or a bare unreserved
// keyword, which is the string of its text as written (`comment =
// static` is comment = 'static').
func (p *parser) propertyValue() (cqltext.Term, error) {
	if t := p.peek(); t.kind == tokIdent && cqltext.IsUnreserved(t.val) {
		p.i++
		return cqltext.Term{Kind: cqltext.KindString, Text: p.src[t.pos:t.end]}, nil
	}
	return p.term()
}
