package cql

import (
	"strings"
	"testing"
)

// TestParseCreateTableAllocs bounds the allocations of parsing one
// CREATE TABLE, which every DDL request pays twice (on the member before
// it is proposed, and again on every member when it applies). Keywords in
// upper case come from the interned words, so they cost nothing, and the
// texts of the errors that could follow a column are constants: the
// count is the token slice, the statement and its parts (12, 8 and 31
// allocations before).
func TestParseCreateTableAllocs(t *testing.T) {
	for _, tc := range []struct {
		text string
		max  float64
	}{
		{"CREATE TABLE ks.t_1 (id int PRIMARY KEY, v text)", 5},
		{"create table ks.t_1 (id int primary key, v text)", 5},
		{"CREATE TABLE IF NOT EXISTS ks.t_1 (id INT, c TEXT, v TEXT STATIC, PRIMARY KEY (id, c)) WITH CLUSTERING ORDER BY (c DESC)", 8},
	} {
		if _, err := Parse(tc.text); err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		n := testing.AllocsPerRun(100, func() { _, _ = Parse(tc.text) })
		t.Logf("%s: %.0f allocs", tc.text, n)
		if n > tc.max {
			t.Errorf("parsing %q makes %.0f allocations, want at most %.0f", tc.text, n, tc.max)
		}
	}
}

// TestLowerIdent checks that lowerIdent is strings.ToLower for every
// unquoted identifier, interned or not.
func TestLowerIdent(t *testing.T) {
	for _, s := range []string{"CREATE", "create", "Table", "PRIMARY", "key", "t_1", "MyTable",
		"ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOPQ", "DURABLE_WRITES", "x", "X9_"} {
		if got, want := lowerIdent(s), strings.ToLower(s); got != want {
			t.Errorf("lowerIdent(%q) = %q, want %q", s, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = lowerIdent("PRIMARY") }); n != 0 {
		t.Errorf("lowerIdent of an interned keyword makes %.0f allocations, want 0", n)
	}
}
