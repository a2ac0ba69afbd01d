package safetext

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"pgregory.net/rapid"
)

func TestUnsafe(t *testing.T) {
	unsafe := []rune{0, '\a', '\t', '\n', '\r', 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9b, 0x9f,
		0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029}
	for _, r := range unsafe {
		if !Unsafe(r) {
			t.Errorf("Unsafe(%U) = false", r)
		}
	}
	safe := []rune{' ', 'a', '~', 0xa0, 0xe9, 0x061b, 0x061d, 0x200b, 0x200d, 0x2010, 0x2027, 0x202f, 0x2065, 0x206a, 0xfeff, 0x540d, 0x1f642, utf8.RuneError}
	for _, r := range safe {
		if Unsafe(r) {
			t.Errorf("Unsafe(%U) = true", r)
		}
	}
}

func TestEscapes(t *testing.T) {
	for _, tc := range []struct {
		in, line, block, field string
	}{
		{"", "", "", `""`},
		{"plain", "plain", "plain", "plain"},
		{"naïve 名前 🙂", "naïve 名前 🙂", "naïve 名前 🙂", `"naïve 名前 🙂"`},
		{"token:ci", "token:ci", "token:ci", "token:ci"},
		{"r1  DROP KEYSPACE other", "r1  DROP KEYSPACE other", "r1  DROP KEYSPACE other", `"r1  DROP KEYSPACE other"`},
		{"\x1b[2K\rtoken:admin DROP", `\x1b[2K\rtoken:admin DROP`, `\x1b[2K\rtoken:admin DROP`, `"\x1b[2K\rtoken:admin DROP"`},
		{"bell\a\b\f\v\x00\x1f", `bell\a\b\f\v\x00\x1f`, `bell\a\b\f\v\x00\x1f`, `"bell\a\b\f\v\x00\x1f"`},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc", `"a\nb\tc"`},
		{"del\x7f c1\u0085\u009b", `del\u007f c1\u0085\u009b`, `del\u007f c1\u0085\u009b`, `"del\u007f c1\u0085\u009b"`},
		{"abc\u202edef\u2066\u2069\u200e\u200f\u061c", `abc\u202edef\u2066\u2069\u200e\u200f\u061c`, `abc\u202edef\u2066\u2069\u200e\u200f\u061c`, `"abc\u202edef\u2066\u2069\u200e\u200f\u061c"`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`, `ls\u2028ps\u2029`, `"ls\u2028ps\u2029"`},
		{"bad\xff\xe2\x80", `bad\xff\xe2\x80`, `bad\xff\xe2\x80`, `"bad\xff\xe2\x80"`},
		{`back\slash "quote"`, `back\slash "quote"`, `back\slash "quote"`, `"back\\slash \"quote\""`},
		{`"starts-quoted"`, `"starts-quoted"`, `"starts-quoted"`, `"\"starts-quoted\""`},
		{"nbsp\u00a0", "nbsp\u00a0", "nbsp\u00a0", `"nbsp` + "\u00a0" + `"`},
	} {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Block(tc.in); got != tc.block {
			t.Errorf("Block(%q) = %q, want %q", tc.in, got, tc.block)
		}
		if got := Field(tc.in); got != tc.field {
			t.Errorf("Field(%q) = %q, want %q", tc.in, got, tc.field)
		}
	}
}

func TestIndexAndDescribe(t *testing.T) {
	for _, tc := range []struct {
		in   string
		off  int
		what string
	}{
		{"7d1e0c9a-3b7f", -1, ""},
		{"r1\x1b[2K", 2, "a control character (U+001B)"},
		{"ab\r", 2, "a control character (U+000D)"},
		{"é\u202e", 2, "a bidirectional formatting character (U+202E)"},
		{"x\u2066", 1, "a bidirectional formatting character (U+2066)"},
		{"x\u2028", 1, "a line or paragraph separator (U+2028)"},
		{"x\u0085", 1, "a control character (U+0085)"},
		{"xy\xff", 2, "a byte that is not UTF-8 (0xff)"},
	} {
		off := Index(tc.in)
		if off != tc.off {
			t.Errorf("Index(%q) = %d, want %d", tc.in, off, tc.off)
			continue
		}
		if off >= 0 {
			if got := Describe(tc.in, off); got != tc.what {
				t.Errorf("Describe(%q, %d) = %q, want %q", tc.in, off, got, tc.what)
			}
		}
	}
}

// hostile draws strings rich in what the package escapes: unsafe runes,
// bytes that are not UTF-8, quotes, backslashes and white space, among
// any other runes.
func hostile() *rapid.Generator[string] {
	special := rapid.SampledFrom([]string{"\x1b", "\r", "\n", "\t", "\a", "\x00", "\x7f", "\u0085", "\u009b",
		"\u202a", "\u202e", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c", "\u2028", "\u2029",
		"\xff", "\xe2\x80", "\"", "\\", " ", "\u00a0", "[2K", "\\x1b"})
	piece := rapid.OneOf(special, rapid.StringN(0, 4, -1))
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(piece, 0, 12).Draw(t, "pieces"), "")
	})
}

// unsafeIn returns the first rune or invalid byte of s that a terminal
// may obey, or -1; layout allows new lines and tabs.
func unsafeIn(s string, layout bool) int {
	for i, r := range s {
		if r == utf8.RuneError || Unsafe(r) && !(layout && (r == '\n' || r == '\t')) {
			if r != utf8.RuneError || !strings.HasPrefix(s[i:], "\uFFFD") {
				return i
			}
		}
	}
	return -1
}

// TestEscapedTextIsSafe: whatever the text, Line, Field and a Writer's
// output hold no unsafe rune (Block and the Writer keep new lines and
// tabs) and are UTF-8; escaping again changes nothing; a quoted Field is a
// Go string literal of exactly the text.
func TestEscapedTextIsSafe(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := hostile().Draw(t, "s")
		for _, tc := range []struct {
			name   string
			out    string
			layout bool
		}{{"Line", Line(s), false}, {"Block", Block(s), true}, {"Field", Field(s), false}} {
			if i := unsafeIn(tc.out, tc.layout); i >= 0 || !utf8.ValidString(tc.out) {
				t.Fatalf("%s(%q) = %q: unsafe at %d", tc.name, s, tc.out, i)
			}
		}
		if Line(Line(s)) != Line(s) || Block(Block(s)) != Block(s) {
			t.Fatalf("escaping %q twice changed it", s)
		}
		if f := Field(s); f != s {
			back, err := strconv.Unquote(f)
			if err != nil || back != s {
				t.Fatalf("Field(%q) = %s: unquotes to %q, %v", s, f, back, err)
			}
		}
		var out bytes.Buffer
		if n, err := NewWriter(&out).Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
		if out.String() != Block(s) {
			t.Fatalf("Writer wrote %q, want Block's %q", out.String(), Block(s))
		}
	})
}

// TestJSONThroughAWriterIsExact: JSON of any UTF-8 text, as encoding/json
// and protojson (the --json outputs) write it, holds no unsafe rune once
// through a Writer, and decodes to exactly the text.
func TestJSONThroughAWriterIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := strings.ToValidUTF8(hostile().Draw(t, "s"), "\uFFFD")
		plain, err := json.Marshal(map[string]string{"s": s})
		if err != nil {
			t.Fatal(err)
		}
		proto, err := protojson.Marshal(wrapperspb.String(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range [][]byte{plain, proto} {
			var out bytes.Buffer
			if _, err := NewWriter(&out).Write(enc); err != nil {
				t.Fatal(err)
			}
			if i := unsafeIn(out.String(), false); i >= 0 {
				t.Fatalf("%q through a Writer is %q: unsafe at %d", enc, out.String(), i)
			}
			var back string
			if enc[0] == '{' {
				var m map[string]string
				err = json.Unmarshal(out.Bytes(), &m)
				back = m["s"]
			} else {
				err = json.Unmarshal(out.Bytes(), &back)
			}
			if err != nil || back != s {
				t.Fatalf("%q through a Writer is %q: decodes to %q, %v; want %q", enc, out.String(), back, err, s)
			}
		}
	})
}

func TestRaw(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(NewWriter(&out))
	if Raw(w) != &out || Raw(&out) != &out {
		t.Error("Raw does not find the writer under the Writers")
	}
}
