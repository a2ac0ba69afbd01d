package cql

import "github.com/metalog/metalog/internal/cqltext"

// The constant forms of Cassandra's Lexer.g and Parser.g's constant rule
// that property values rarely need but a schema may hold (a mask's
// argument): DURATION, a FLOAT with nothing after its point ("1."), and
// NaN and Infinity with an optional '-' before them.

// identLen returns the length of the identifier characters at the start
// of s.
func identLen(s string) int {
	n := 0
	for n < len(s) && cqltext.IsWordByte(s[n]) {
		n++
	}
	return n
}

// signedFloatWord parses "NaN" or "Infinity" (any case), with an optional
// '-' token before it, as Parser.g's constant does; ok is false when
// neither is next. The text is the sign and the word as written.
func (p *parser) signedFloatWord() (cqltext.Term, bool) {
	t, sign := p.peek(), ""
	if t.kind == tokPunct && t.val == "-" {
		t, sign = p.peekAt(1), "-"
	}
	if !isKeyword(t, "nan") && !isKeyword(t, "infinity") {
		return cqltext.Term{}, false
	}
	p.i += len(sign) + 1
	return cqltext.Term{Kind: cqltext.KindFloat, Text: sign + p.src[t.pos:t.end]}, true
}
