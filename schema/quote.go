package schema

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of one piece of user input (a name, a value,
// a token, a request id) an error message or a log line quotes. Input is
// bounded only by the request size, and a message that repeats a megabyte
// name twice helps nobody.
const MaxQuoted = 200

// Clip returns s as an error message or a log line should show it: s
// itself when it is at most MaxQuoted bytes long, otherwise its first
// MaxQuoted bytes cut back to a rune boundary, then "..." and its full
// length, e.g. `aaaa... (1048576 bytes)`. Every layer that names user
// input in a message uses it (or QuoteClip), which is why it lives in the
// package everything else imports.
func Clip(s string) string { return clipQuoted(s, MaxQuoted, noQuotes) }

// QuoteClip is Clip for quoted input: strconv.Quote(s) for a short s,
// e.g. `"aaaa..." (1048576 bytes)` for a long one.
func QuoteClip(s string) string { return clipQuoted(s, MaxQuoted, goQuotes) }

// QuoteClipN is QuoteClip with a bound of max bytes instead of MaxQuoted,
// for messages that must stay shorter (a syntax error's token).
func QuoteClipN(s string, max int) string { return clipQuoted(s, max, goQuotes) }

// quoteStringClip is Clip for a value a message shows as a CQL string
// constant (QuoteString): `'aaaa...' (1048576 bytes)` when long.
func quoteStringClip(s string) string { return clipQuoted(s, MaxQuoted, cqlQuotes) }

// How clipQuoted quotes. Not a func value: a call through one would make
// every argument escape, and the guardrails' silent path must not allocate.
const (
	noQuotes = iota
	goQuotes
	cqlQuotes
)

// clipQuoted returns s quoted as quotes says when it is at most max bytes
// long; otherwise its first max bytes, cut back to a rune boundary, and
// "...", quoted, then its full length.
func clipQuoted(s string, max, quotes int) string {
	suffix := ""
	if len(s) > max {
		cut := max
		for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
			cut--
		}
		s, suffix = s[:cut]+"...", " ("+strconv.Itoa(len(s))+" bytes)"
	}
	switch quotes {
	case goQuotes:
		s = strconv.Quote(s)
	case cqlQuotes:
		s = QuoteString(s)
	}
	return s + suffix
}
