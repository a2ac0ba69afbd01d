package cql

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestHostileInput checks that deep nesting, huge statements and invalid
// UTF-8 give clear errors quickly instead of a stack overflow or a hang.
func TestHostileInput(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "int" + strings.Repeat(close, n)
	}
	wide := "CREATE TABLE ks.t (k int PRIMARY KEY" + strings.Repeat(", c int", 1<<17) + ")"
	tests := []struct {
		name, in, want string
	}{
		{"1000-deep frozen lists", "CREATE TABLE t (c " + deep("frozen<list<", ">>", 1000) + ")", "line 1:"},
		{"65-deep lists", "CREATE TABLE t (c " + deep("list<", ">", 65) + ")", "type nesting exceeds the limit of 64 levels"},
		{"deep literal", "CREATE TABLE t (c int) WITH comment = " + strings.Repeat("[", 100000), "literal is nested too deeply"},
		{"1 MiB of parentheses", "CREATE TABLE t " + strings.Repeat("(", 1<<20), `expected a column name or PRIMARY KEY`},
		{"1 MiB string", "CREATE TABLE t (c int) WITH comment = '" + strings.Repeat("x", 1<<20), "unterminated string"},
		{"1 MiB comment", "/*" + strings.Repeat("*", 1<<20), "unterminated comment"},
		{"1 MiB on one line", "CREATE TABLE t (c int)" + strings.Repeat(" ", 1<<20) + "?", "line 1:1048599: unexpected character"},
		{"wide table", wide + " x", `line 1:917543: unexpected "x", expected ';' or end of input`},
		{"invalid UTF-8", "CREATE TABLE t (c int);\n  -- é\xff", "line 2:7: invalid UTF-8 (byte 0xff at offset 31)"},
		{"invalid UTF-8 in a quoted name", "DROP TABLE \"a\xc3\"", "line 1:14: invalid UTF-8 (byte 0xc3 at offset 13)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse(tt.in)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a SyntaxError containing %q", err, tt.want)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error message is %d bytes long", len(err.Error()))
			}
			t.Logf("%v in %v", err, time.Since(start))
		})
	}
	// A valid wide table parses (in linear time).
	if ps, err := Parse(wide); err != nil || len(ps) != 1 {
		t.Fatalf("wide table: %v", err)
	}
}
