package schema

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
		if got := Clip(tt.in); got != tt.clip {
			t.Errorf("Clip(%.20q...) = %.300q, want %.300q", tt.in, got, tt.clip)
		}
		if got := QuoteClip(tt.in); got != tt.quote {
			t.Errorf("QuoteClip(%.20q...) = %.300q, want %.300q", tt.in, got, tt.quote)
		}
		if got := Clip(tt.in); !utf8.ValidString(got) && utf8.ValidString(tt.in) {
			t.Errorf("Clip(%.20q...) is not valid UTF-8", tt.in)
		}
	}
	if got := quoteStringClip("it's" + a200); got != `'it''s`+strings.Repeat("a", 196)+`...' (204 bytes)` {
		t.Errorf("quoteStringClip = %q", got)
	}
	if got := QuoteClipN("abcdef", 3); got != `"abc..." (6 bytes)` {
		t.Errorf("QuoteClipN = %q", got)
	}
}

// TestErrorClipsTheObject checks that an Error names a long object cut,
// and that statements with a 1 MB name keep their errors small.
func TestErrorClipsTheObject(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	base := mustApply(t, Schema{}, simpleKS("shop"), simpleTable("shop", "orders"))
	for _, st := range []Statement{
		simpleTable("shop", long),
		simpleTable(long, "t"),
		&DropTable{Keyspace: "shop", Name: long},
		&DropKeyspace{Name: long},
		&AlterTable{Keyspace: "shop", Name: "orders", Drop: []string{long}},
		&AlterTable{Keyspace: "shop", Name: "orders", Add: []ColumnDef{{Name: "w", Type: UserTypeRef{Name: long}}}},
		&CreateIndex{Keyspace: "shop", Name: long, Table: "orders", Target: IndexTarget{Column: "v"}},
		&CreateIndex{Keyspace: "shop", Table: "orders", Target: IndexTarget{Column: long}},
		&CreateType{Keyspace: "shop", Name: long, Fields: []Field{{Name: "a", Type: TypeInt}}},
		&DropType{Keyspace: "shop", Name: long},
	} {
		_, _, _, err := Apply(base, st, Env{Epoch: 10})
		if err == nil || len(err.Error()) > 1024 || !strings.HasPrefix(err.Error(), st.Kind()+" ") || !strings.Contains(err.Error(), "... (") {
			t.Errorf("%s: %.400v", st.Kind(), err)
		}
	}
}
