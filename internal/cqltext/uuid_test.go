package cqltext

import (
	"testing"

	"pgregory.net/rapid"
)

// TestIsCanonicalUUIDMatchesCanonicalUUID checks the quick check against
// the canonical text, on UUID-like text with any character changed.
func TestIsCanonicalUUIDMatchesCanonicalUUID(t *testing.T) {
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
		c, ok := CanonicalUUID(s)
		if want := ok && c == s; IsCanonicalUUID(s) != want {
			t.Fatalf("IsCanonicalUUID(%q) = %v, want %v", s, !want, want)
		}
	})
}
