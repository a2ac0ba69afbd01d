package schema_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/internal/testkit"
	"github.com/metalog/metalog/schema"
)

// TestCanonicalUUIDMatchesParseUUID checks the text-only canonical form
// of package cqltext against parsing and formatting a UUID, on UUID-like
// text with any character changed.
func TestCanonicalUUIDMatchesParseUUID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := testkit.UUIDText(t)
		c, ok := cqltext.CanonicalUUID(s)
		u, parsed := schema.ParseUUID(s)
		if ok != parsed || ok && c != u.String() {
			t.Fatalf("cqltext.CanonicalUUID(%q) = %q, %v; ParseUUID gives %q, %v", s, c, ok, u.String(), parsed)
		}
	})
}
