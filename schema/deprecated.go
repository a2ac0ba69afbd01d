package schema

import (
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Clip is clip.String, for the files of this package that have not moved
// to it yet.
//
// Deprecated: use clip.String.
func Clip(s string) string { return clip.String(s) }

// QuoteClip is clip.Quote, for the files of this package that have not
// moved to it yet.
//
// Deprecated: use clip.Quote.
func QuoteClip(s string) string { return clip.Quote(s) }

// QuoteIdentifier is cqltext.QuoteIdentifier, for the files of this
// package that have not moved to it yet.
//
// Deprecated: use cqltext.QuoteIdentifier.
func QuoteIdentifier(name string) string { return cqltext.QuoteIdentifier(name) }

// quoteStringClip is clip.String for a value a message shows as a CQL
// string constant (QuoteString): `'aaaa...' (1048576 bytes)` when long.
func quoteStringClip(s string) string {
	head, suffix := clip.Cut(s, clip.Max)
	return cqltext.QuoteString(head) + suffix
}
