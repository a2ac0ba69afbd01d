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

// TestLongTokensAreCut checks that a syntax error quotes at most 40 bytes
// of a 1 MB token, cut at a rune boundary, with the token's length, and
// that messages naming a long property or option cut it too.
func TestLongTokensAreCut(t *testing.T) {
	long := strings.Repeat("é", 1<<19)
	tests := []struct{ in, want string }{
		{strings.Repeat("a", 1<<20), `line 1:1: unexpected "` + strings.Repeat("a", 40) + `..." (1048576 bytes), expected a statement`},
		{`DROP TABLE "` + long + `" x`, `line 1:524303: unexpected "x", expected ';' or end of input`},
		{"CREATE TABLE t (c int PRIMARY KEY) " + long, `line 1:36: unexpected character "é"`},
		{`DROP TABLE t "` + long + `"`, `line 1:14: unexpected "\"` + strings.Repeat("é", 19) + `..." (1048578 bytes), expected ';' or end of input`},
		{"CREATE TABLE t (c int PRIMARY KEY) WITH " + strings.Repeat("p", 1<<20) + " = 1", `unknown table property "` + strings.Repeat("p", 200) + `..." (1048576 bytes)`},
		{"CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', '" + long + "': 1, '" + long + "': 2}", `replication option "` + strings.Repeat("é", 100) + `..." (1048576 bytes) given twice`},
		{"CREATE TABLE t (c int PRIMARY KEY) WITH gc_grace_seconds = 1" + strings.Repeat("x", 1<<20), `malformed number "1` + strings.Repeat("x", 39) + `..." (1048577 bytes)`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) || len(err.Error()) > 400 {
			t.Errorf("Parse(%.40q...): %.400v, want a SyntaxError of at most 400 bytes containing %.300q", tt.in, err, tt.want)
		}
	}
}
