package cql

import (
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/cqltext"
)

// TestUnreservedKeywords checks the parser's list of unreserved keywords
// against the conformance test's, which follows Parser.g rule by rule.
func TestUnreservedKeywords(t *testing.T) {
	var want []string
	want = append(want, basicUnreservedKeywords...)
	want = append(want, nativeTypeKeywords...)
	want = append(want, extraUnreservedKeywords...)
	slices.Sort(want)
	got := cqltext.Keywords(false)
	if !slices.Equal(got, slices.Compact(want)) {
		t.Errorf("unreserved keywords\n got %v\nwant %v", got, want)
	}
}

// TestNewConstants checks the tokens of the constant forms of gap 11 and
// the property value of gap 10: what each lexes to and its literal text,
// which DESCRIBE writes back.
func TestNewConstants(t *testing.T) {
	for _, tt := range []struct{ in, text string }{
		{"1h30m", "1h30m"}, {"-2MO10US", "-2MO10US"}, {"1µs", "1µs"}, {"0d", "0d"},
		{"P1DT2H", "P1DT2H"}, {"P", "P"}, {"PT", "PT"}, {"P2W", "P2W"}, {"-P0001-02-03T04:05:06", "-P0001-02-03T04:05:06"},
		{"1.", "1."}, {"1.e-2", "1.e-2"}, {"NaN", "NaN"}, {"-Infinity", "-Infinity"}, {"- nan", "-nan"},
		{"static", "'static'"}, {"DEFAULT", "'DEFAULT'"}, {"'x'", "'x'"},
	} {
		toks, err := lex(tt.in)
		if err != nil {
			t.Errorf("lex %q: %v", tt.in, err)
			continue
		}
		p := &parser{src: tt.in, toks: toks}
		l, err := p.propertyValue()
		if err != nil || p.peek().kind != tokEOF || l.String() != tt.text {
			t.Errorf("%q: %q, %v, want %q", tt.in, l.String(), err, tt.text)
		}
	}
	for _, tt := range []struct{ in, err string }{
		{"1h30", "malformed duration"}, {"1hx", "malformed duration"}, {"1.x", "malformed number"},
	} {
		if _, err := lex(tt.in); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("lex %q: %v, want %q", tt.in, err, tt.err)
		}
	}
	for _, tt := range []struct {
		in   string
		kind tokenKind
	}{{"Px", tokIdent}, {"P1Dx", tokIdent}, {"p1d", tokIdent}, {"PRIMARY", tokIdent}, {"P1D", tokIdent}, {"P0001-02-03T04:05:06", tokDuration}, {"-P1D", tokDuration}, {"-", tokPunct}, {"-x", tokPunct}} {
		toks, err := lex(tt.in)
		if err != nil || toks[0].kind != tt.kind {
			t.Errorf("lex %q: %v %v, want kind %v", tt.in, toks, err, tt.kind)
		}
	}
}
