package cql

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// SyntaxError is returned by Parse for text that is not valid CQL of the
// supported statements. Its message gives the line and column, the
// offending token and what was expected.
type SyntaxError struct {
	// Line is the 1-based line of the offending token.
	Line int
	// Column is the 1-based column, in characters, of the offending token.
	Column int
	// Token is the source text of the offending token; empty at the end of
	// the input.
	Token string
	// Expected says what would have been valid there, e.g. "a column type".
	Expected string
	// Msg, when set, replaces the "unexpected ..., expected ..." text, e.g.
	// "unterminated string".
	Msg string
}

// Error returns e.g. `line 1:27: unexpected "PRIMRY", expected PRIMARY KEY
// or a column type`.
func (e *SyntaxError) Error() string {
	var b strings.Builder
	b.WriteString("line ")
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString(":")
	b.WriteString(strconv.Itoa(e.Column))
	b.WriteString(": ")
	if e.Msg != "" {
		b.WriteString(e.Msg)
		return b.String()
	}
	b.WriteString("unexpected ")
	if e.Token == "" {
		b.WriteString("end of input")
	} else {
		b.WriteString(quoteTok(e.Token))
	}
	if e.Expected != "" {
		b.WriteString(", expected ")
		b.WriteString(e.Expected)
	}
	return b.String()
}

// maxTokenQuoted is how much of the offending token a syntax error
// quotes: less than clip.Max, as the message also gives the
// position and what was expected.
const maxTokenQuoted = 40

// quoteTok quotes a token for a message, cutting a long one (with its
// length) as clip.QuoteN does.
func quoteTok(s string) string { return clip.QuoteN(s, maxTokenQuoted) }
