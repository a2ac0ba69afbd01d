package ddlgen

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// statement is Statement as a generator.
var statement = rapid.Custom(func(t *rapid.T) string { return Statement(t, "stmt") })

// TestStatementIsDeterministic checks that the same draws give the same
// text.
func TestStatementIsDeterministic(t *testing.T) {
	for seed := range 200 {
		if a, b := statement.Example(seed), statement.Example(seed); a != b {
			t.Fatalf("seed %d: %q, then %q", seed, a, b)
		}
	}
}

// TestStatementCoversEveryKind checks that every kind is drawn, with and
// without its IF [NOT] EXISTS, and that every text starts with its kind.
func TestStatementCoversEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for seed := range 3000 {
		s := statement.Example(seed)
		kind := ""
		for _, k := range Kinds() {
			if strings.HasPrefix(s, k+" ") || strings.HasPrefix(s, "CREATE CUSTOM INDEX") && k == "CREATE INDEX" {
				kind = k
			}
		}
		if kind == "" {
			t.Fatalf("seed %d: %q starts with no known kind", seed, s)
		}
		seen[kind+" "+boolText(strings.Contains(s, " IF "))] = true
	}
	for _, k := range Kinds() {
		for _, cond := range []string{"true", "false"} {
			if !seen[k+" "+cond] {
				t.Errorf("kind %s with IF clause %s never drawn", k, cond)
			}
		}
	}
}

// boolText returns "true" or "false".
func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
