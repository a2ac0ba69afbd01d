package schema

import (
	"testing"

	"github.com/metalog/metalog/internal/cqltext"
	"pgregory.net/rapid"
)

// TestCanonicalUUIDMatchesParseUUID checks the text-only canonical form
// of package cqltext against parsing and formatting a UUID, on UUID-like
// text with any character changed.
func TestCanonicalUUIDMatchesParseUUID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := []byte("0123abcd-ef01-4567-89ab-cdef01234567")
		if rapid.Bool().Draw(t, "upper") {
			b[4] = 'A'
		}
		for range rapid.IntRange(0, 3).Draw(t, "changes") {
			b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.SampledFrom([]byte("-0aAfFgG9{ ")).Draw(t, "to")
		}
		s := string(b)
		if rapid.Bool().Draw(t, "cut") {
			s = s[:rapid.IntRange(0, len(s)).Draw(t, "len")]
		}
		c, ok := cqltext.CanonicalUUID(s)
		u, parsed := ParseUUID(s)
		if ok != parsed || ok && c != u.String() {
			t.Fatalf("cqltext.CanonicalUUID(%q) = %q, %v; ParseUUID gives %q, %v", s, c, ok, u.String(), parsed)
		}
	})
}
