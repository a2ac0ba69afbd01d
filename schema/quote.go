package schema

import "github.com/metalog/metalog/internal/clip"

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

// quoteStringClip is clip.String for a value a message shows as a CQL
// string constant (QuoteString): `'aaaa...' (1048576 bytes)` when long.
func quoteStringClip(s string) string {
	head, suffix := clip.Cut(s, clip.Max)
	return QuoteString(head) + suffix
}
