package safetext

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether a terminal may obey r instead of showing it: a
// control character (C0, DEL, C1), a bidirectional formatting character
// (embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069, the
// marks U+200E, U+200F, U+061C), or the line or paragraph separator
// (U+2028, U+2029).
func Unsafe(r rune) bool {
	switch {
	case r < 0x80:
		return r < 0x20 || r == 0x7f
	case r <= 0x9f:
		return true // C1
	case r < 0x061c:
		return false
	}
	switch r {
	case 0x061c, 0x200e, 0x200f, 0x2028, 0x2029:
		return true
	}
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Index returns the byte offset in s of the first unsafe rune or byte that
// is not UTF-8, or -1 when there is none: where a name or an id that must
// show as itself goes wrong.
func Index(s string) int { return index(s, false) }

// Describe says what the unsafe rune or invalid byte at offset off of s
// (as Index returns) is, for an error message: e.g. "a control character
// (U+001B)", "a bidirectional formatting character (U+202E)", "a byte that
// is not UTF-8 (0xff)".
func Describe(s string, off int) string {
	r, size := utf8.DecodeRuneInString(s[off:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return "a byte that is not UTF-8 (0x" + hex2(s[off]) + ")"
	case unicode.IsControl(r):
		return "a control character (" + codePoint(r) + ")"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator (" + codePoint(r) + ")"
	}
	return "a bidirectional formatting character (" + codePoint(r) + ")"
}

// Line returns s with every unsafe rune and invalid byte escaped, new
// lines and tabs included: for text shown on one line, or in one cell of
// a table. It returns s itself when nothing needs escaping.
func Line(s string) string { return escape(s, false) }

// Block is Line for text of several lines (a statement, CQL, an error of
// several lines): new lines and tabs are kept, everything else unsafe is
// escaped. It returns s itself when nothing needs escaping.
func Block(s string) string { return escape(s, true) }

// Field returns s as one field of a line of several, so that it cannot be
// read as more than one or as another's: s itself when it holds no unsafe
// rune, invalid byte or white space and does not start with '"';
// otherwise s quoted, as strconv.Quote does ("r1  DROP x" becomes
// `"r1  DROP x"`, and a field that starts with a quote is quoted too, so
// that a quoted field is always an escaped one).
func Field(s string) string {
	if s != "" && s[0] != '"' && !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || Unsafe(r) || r == utf8.RuneError }) {
		return s
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == utf8.RuneError && size == 1, Unsafe(r):
			b = appendEscape(b, s, i)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(append(b, '"'))
}

// index is Index; layout allows new lines and tabs.
func index(s string, layout bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Unsafe(r) && !(layout && (r == '\n' || r == '\t')) {
			return i
		}
		i += size
	}
	return -1
}

// escape is Line, or Block when layout is set.
func escape(s string, layout bool) string {
	i := index(s, layout)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	return string(appendEscaped(b, s, i, layout))
}

// appendEscaped appends s to b with the unsafe runes and invalid bytes
// escaped; s[:from] needs none.
func appendEscaped(b []byte, s string, from int, layout bool) []byte {
	b = append(b, s[:from]...)
	for i := from; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Unsafe(r) && !(layout && (r == '\n' || r == '\t')) {
			b = appendEscape(b, s, i)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// appendEscape appends the escape of the unsafe rune or invalid byte at
// s[i].
func appendEscape(b []byte, s string, i int) []byte {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return append(b, `\x`+hex2(s[i])...)
	}
	switch r {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\v':
		return append(b, `\v`...)
	}
	if r < 0x20 {
		return append(b, `\x`+hex2(byte(r))...)
	}
	return append(b, `\u`+hex2(byte(r>>8))+hex2(byte(r))...)
}

// hex2 is c in two lowercase hexadecimal digits.
func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// codePoint is r as U+XXXX.
func codePoint(r rune) string {
	return "U+" + strings.ToUpper(hex2(byte(r>>8))+hex2(byte(r)))
}

// Writer escapes everything written through it as Block does before
// passing it on: new lines and tabs pass, every other unsafe rune and
// invalid byte is escaped. Put on a command's output, it keeps whatever
// the command prints from acting on the terminal, and leaves JSON exact.
// A Write should hold whole runes (fmt, tabwriter and io.WriteString do):
// a rune cut between two Writes is shown as the escapes of its bytes.
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p to the underlying writer, escaped. It returns len(p) when
// all of the escaped text was written.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	i := index(s, true)
	if i < 0 {
		return w.w.Write(p)
	}
	if _, err := w.w.Write(appendEscaped(make([]byte, 0, len(p)+8), s, i, true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Raw returns the writer under w when w is a *Writer, so that a command
// asked for the exact text (describe --raw) can write it; w itself
// otherwise.
func Raw(w io.Writer) io.Writer {
	if sw, ok := w.(*Writer); ok {
		return Raw(sw.w)
	}
	return w
}
