package cql

import "github.com/metalog/metalog/schema"

// The constant forms of Cassandra's Lexer.g and Parser.g's constant rule
// that property values rarely need but a schema may hold (a mask's
// argument): DURATION, a FLOAT with nothing after its point ("1."), and
// NaN and Infinity with an optional '-' before them.

// durationLen returns the length of the DURATION constant at the start of
// s, or 0 (schema.DurationLen, which the canonical text of a view's WHERE
// clause is read with too).
func durationLen(s string) int { return schema.DurationLen(s) }

// identLen returns the length of the identifier characters at the start
// of s.
func identLen(s string) int {
	n := 0
	for n < len(s) && isIdentChar(s[n]) {
		n++
	}
	return n
}

// signedFloatWord parses "NaN" or "Infinity" (any case), with an optional
// '-' token before it, as Parser.g's constant does; ok is false when
// neither is next. The text is the sign and the word as written.
func (p *parser) signedFloatWord() (literal, bool) {
	t, sign := p.peek(), ""
	if t.kind == tokPunct && t.val == "-" {
		t, sign = p.peekAt(1), "-"
	}
	if !isKeyword(t, "nan") && !isKeyword(t, "infinity") {
		return literal{}, false
	}
	p.i += len(sign) + 1
	return literal{kind: litFloat, str: sign + p.src[t.pos:t.end]}, true
}
