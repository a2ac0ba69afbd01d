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

// anyStatement is AnyStatement as a generator.
var anyStatement = rapid.Custom(func(t *rapid.T) string { return AnyStatement(t, "stmt") })

// TestAnyStatementCoversEveryKind checks that AnyStatement draws every
// kind of AllKinds, each text starting as its kind does.
func TestAnyStatementCoversEveryKind(t *testing.T) {
	seen := map[string]bool{}
	for seed := range 4000 {
		s := anyStatement.Example(seed)
		if a, b := s, anyStatement.Example(seed); a != b {
			t.Fatalf("seed %d: %q, then %q", seed, a, b)
		}
		kind := ""
		for _, k := range AllKinds() {
			if anyKindOf(s, k) {
				kind = k
			}
		}
		if kind == "" {
			t.Fatalf("seed %d: %q is of no known kind", seed, s)
		}
		seen[kind] = true
	}
	for _, k := range AllKinds() {
		if !seen[k] {
			t.Errorf("kind %s never drawn", k)
		}
	}
}

// anyKindOf reports whether statement s is of kind k of AllKinds.
func anyKindOf(s, k string) bool {
	switch k {
	case "CREATE TABLE LIKE":
		return strings.HasPrefix(s, "CREATE TABLE ") && strings.Contains(s, " LIKE ")
	case "CREATE TABLE":
		return strings.HasPrefix(s, "CREATE TABLE ") && !strings.Contains(s, " LIKE ")
	case "ALTER TABLE MASK":
		return strings.HasPrefix(s, "ALTER TABLE ") && strings.Contains(s, "MASKED")
	case "ALTER TABLE":
		return strings.HasPrefix(s, "ALTER TABLE ") && !strings.Contains(s, "MASKED")
	case "CREATE INDEX":
		return strings.HasPrefix(s, "CREATE INDEX") || strings.HasPrefix(s, "CREATE CUSTOM INDEX")
	case "CREATE FUNCTION", "CREATE AGGREGATE":
		return strings.HasPrefix(s, k+" ") || strings.HasPrefix(s, strings.Replace(k, "CREATE", "CREATE OR REPLACE", 1)+" ")
	}
	return strings.HasPrefix(s, k+" ")
}
