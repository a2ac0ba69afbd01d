package cqltext

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit"
)

// TestIsCanonicalUUIDMatchesCanonicalUUID checks the quick check against
// the canonical text, on UUID-like text with any character changed.
func TestIsCanonicalUUIDMatchesCanonicalUUID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := testkit.UUIDText(t)
		c, ok := CanonicalUUID(s)
		if want := ok && c == s; IsCanonicalUUID(s) != want {
			t.Fatalf("IsCanonicalUUID(%q) = %v, want %v", s, !want, want)
		}
	})
}
