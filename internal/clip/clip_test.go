package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	a200, a201 := strings.Repeat("a", 200), strings.Repeat("a", 201)
	e100 := strings.Repeat("é", 100) // 200 bytes
	tests := []struct{ in, clip, quote string }{
		{"", "", `""`},
		{"shop", "shop", `"shop"`},
		{"new\nline", "new\nline", `"new\nline"`},
		{a200, a200, `"` + a200 + `"`},
		{a201, a200 + "... (201 bytes)", `"` + a200 + `..." (201 bytes)`},
		{e100 + "x", e100 + "... (201 bytes)", `"` + e100 + `..." (201 bytes)`},
		// The 200th byte is the first of a two-byte rune: cut before it.
		{"a" + e100, "a" + strings.Repeat("é", 99) + "... (201 bytes)", `"a` + strings.Repeat("é", 99) + `..." (201 bytes)`},
		{strings.Repeat("a", 1<<20), a200 + "... (1048576 bytes)", `"` + a200 + `..." (1048576 bytes)`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.clip {
			t.Errorf("String(%.20q...) = %.300q, want %.300q", tt.in, got, tt.clip)
		}
		if got := Quote(tt.in); got != tt.quote {
			t.Errorf("Quote(%.20q...) = %.300q, want %.300q", tt.in, got, tt.quote)
		}
		if got := String(tt.in); !utf8.ValidString(got) && utf8.ValidString(tt.in) {
			t.Errorf("String(%.20q...) is not valid UTF-8", tt.in)
		}
	}
	if got := QuoteN("abcdef", 3); got != `"abc..." (6 bytes)` {
		t.Errorf("QuoteN = %q", got)
	}
	if head, suffix := Cut("abcdef", 3); head != "abc..." || suffix != " (6 bytes)" {
		t.Errorf("Cut = %q, %q", head, suffix)
	}
}

// TestShortInputDoesNotAllocate checks that quoting nothing long costs
// nothing: the guardrails' silent path clips names it may never print.
func TestShortInputDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("a", Max)
	if n := testing.AllocsPerRun(100, func() { _ = String(s) }); n != 0 {
		t.Errorf("String allocates %v times", n)
	}
}
