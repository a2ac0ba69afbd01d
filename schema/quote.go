package schema

import (
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// quoteStringClip is clip.String for a value a message shows as a CQL
// string constant (QuoteString): `'aaaa...' (1048576 bytes)` when long.
func quoteStringClip(s string) string {
	head, suffix := clip.Cut(s, clip.Max)
	return cqltext.QuoteString(head) + suffix
}
