package cqltext

import (
	"strings"
	"testing"
)

func TestKeywords(t *testing.T) {
	reserved, unreserved := Keywords(true), Keywords(false)
	if len(reserved) == 0 || len(unreserved) == 0 {
		t.Fatalf("Keywords: %d reserved, %d unreserved", len(reserved), len(unreserved))
	}
	for _, w := range reserved {
		if !IsReserved(w) || !IsReserved(strings.ToUpper(w)) || IsUnreserved(w) {
			t.Errorf("reserved %q: IsReserved %v, IsUnreserved %v", w, IsReserved(w), IsUnreserved(w))
		}
		if got := QuoteIdentifier(w); got != `"`+w+`"` {
			t.Errorf("QuoteIdentifier(%q) = %s", w, got)
		}
	}
	for _, w := range unreserved {
		if IsReserved(w) || !IsUnreserved(w) {
			t.Errorf("unreserved %q: IsReserved %v, IsUnreserved %v", w, IsReserved(w), IsUnreserved(w))
		}
		if got := QuoteIdentifier(w); got != w {
			t.Errorf("QuoteIdentifier(%q) = %s", w, got)
		}
	}
	// replace and unset were reserved by Cassandra 3 and are names again.
	for _, w := range []string{"replace", "unset", "shop"} {
		if IsReserved(w) {
			t.Errorf("IsReserved(%q)", w)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{QuoteIdentifier("shop"), "shop"},
		{QuoteIdentifier("Shop"), `"Shop"`},
		{QuoteIdentifier(`a"b`), `"a""b"`},
		{QuoteIdentifier(""), `""`},
		{QuoteIdentifier("1a"), `"1a"`},
		{QuoteString("it's"), `'it''s'`},
		{QuoteQualified("ks", "T"), `ks."T"`},
		{QuoteQualified("", "t"), "t"},
		{QuoteQualified("", ""), ""},
		{QuoteSignature(`Twice(int,frozen<"Addr">)`), `"Twice"(int,frozen<"Addr">)`},
		{QuoteSignature("f"), "f"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

// TestReadWrite checks that both readers give back terms whose canonical
// text is what the canonical reader reads unchanged.
func TestReadWrite(t *testing.T) {
	isName := func(s string) bool { return len(s) <= 48 }
	for _, tt := range []struct{ in, want string }{
		{"1", "1"},
		{" [ 1 , 2 ] ", "[1, 2]"},
		{"{'a' : TRUE}", "{'a': true}"},
		{"$$x$$", "'x'"},
		{"NaN", "NaN"},
		{"-Infinity", "-Infinity"},
		{"(1, null)", "(1, null)"},
		{"{f: 0X0A}", "{f: 0x0a}"},
		{"0123ABCD-EF01-4567-89AB-CDEF01234567", "0123abcd-ef01-4567-89ab-cdef01234567"},
	} {
		v, r := Read(tt.in, isName)
		if r != "" || v.String() != tt.want {
			t.Errorf("Read(%q) = %q, %q; want %q", tt.in, v.String(), r, tt.want)
		}
	}
	for _, in := range []string{"1", "'a', 2", "now()", "1 + 2 * 3", "-x(1)", "{f: [1h30m]}", "(int)1"} {
		typeLen := func(s string) int {
			if strings.HasPrefix(s, "int") {
				return 3
			}
			return 0
		}
		ts, r := ReadCanonical(in, ", ", typeLen)
		if r != "" {
			t.Errorf("ReadCanonical(%q): %s", in, r)
			continue
		}
		var parts []string
		for _, v := range ts {
			parts = append(parts, v.String())
		}
		if got := strings.Join(parts, ", "); got != in {
			t.Errorf("ReadCanonical(%q) writes back %q", in, got)
		}
	}
	for _, in := range []string{"1 ", "[1,2]", "TRUE", "(text)1", "--1"} {
		if _, r := ReadCanonical(in, ", ", func(string) int { return 0 }); r == "" {
			t.Errorf("ReadCanonical(%q) reads non-canonical text", in)
		}
	}
	deep := Term{Kind: KindInteger, Text: "1"}
	for range MaxNesting + 1 {
		deep = Term{Kind: KindList, Elems: []Term{deep}}
	}
	var b strings.Builder
	if r := Write(&b, deep, 0); r == "" {
		t.Errorf("Write wrote a term nested %d deep", MaxNesting+1)
	}
}
