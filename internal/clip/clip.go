package clip

import (
	"strconv"
	"unicode/utf8"
)

// Max is how many bytes of one piece of user input (a name, a value, a
// token, a request id) an error message or a log line quotes.
const Max = 200

// String returns s as an error message or a log line should show it: s
// itself when it is at most Max bytes long, otherwise its first Max bytes
// cut back to a rune boundary, then "..." and its full length, e.g.
// `aaaa... (1048576 bytes)`.
func String(s string) string {
	head, suffix := Cut(s, Max)
	return head + suffix
}

// Quote is String for quoted input: strconv.Quote(s) for a short s, e.g.
// `"aaaa..." (1048576 bytes)` for a long one.
func Quote(s string) string { return QuoteN(s, Max) }

// QuoteN is Quote with a bound of max bytes instead of Max, for messages
// that must stay shorter (a syntax error's token).
func QuoteN(s string, max int) string {
	head, suffix := Cut(s, max)
	return strconv.Quote(head) + suffix
}

// Cut splits what String shows of s, at a bound of max bytes, into the
// part to quote and the part after the quotes: s and "" when s is at most
// max bytes long, otherwise its first max bytes cut back to a rune
// boundary followed by "...", and " (n bytes)". A caller that quotes in
// its own way (a CQL string constant) quotes head and appends suffix.
// It allocates only for a long s.
func Cut(s string, max int) (head, suffix string) {
	if len(s) <= max {
		return s, ""
	}
	cut := max
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return s[:cut] + "...", " (" + strconv.Itoa(len(s)) + " bytes)"
}
