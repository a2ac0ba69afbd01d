package cqltext

import (
	"maps"
	"slices"
	"strings"
)

// QuoteIdentifier returns name as a CQL identifier: unchanged when it is a
// lowercase unquoted identifier that is not reserved, otherwise in double
// quotes with embedded quotes doubled.
func QuoteIdentifier(name string) string {
	plain := name != "" && name[0] >= 'a' && name[0] <= 'z'
	for i := 1; plain && i < len(name); i++ {
		c := name[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain && !keywords[name] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteString returns s as a CQL string constant in single quotes.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// QuoteQualified returns ks.name with each part quoted as CQL needs
// (QuoteIdentifier); name alone when ks is empty, and nothing when both
// are.
func QuoteQualified(ks, name string) string {
	if ks == "" {
		return quoteNonEmpty(name)
	}
	return QuoteIdentifier(ks) + "." + quoteNonEmpty(name)
}

// quoteNonEmpty is QuoteIdentifier, except that an empty name stays
// empty (a statement that names no object).
func quoteNonEmpty(name string) string {
	if name == "" {
		return ""
	}
	return QuoteIdentifier(name)
}

// QuoteSignature returns a function or aggregate signature,
// "name(type,...)", with the name quoted as CQL needs (the types are CQL
// text already); text without parentheses is quoted as one name, and an
// empty one stays empty.
func QuoteSignature(sig string) string {
	name, args, ok := strings.Cut(sig, "(")
	if !ok {
		return quoteNonEmpty(sig)
	}
	return quoteNonEmpty(name) + "(" + args
}

// IsWordByte reports whether c may be part of an unquoted word: an ASCII
// letter, digit or underscore.
func IsWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// ScanIdentifier returns the identifier at the start of s and its length
// in s: a quoted one ("..." with "" for a quote, unquoted), or letters,
// digits and underscores after a lower-case letter; n is 0 when there is
// none. Whether it is in canonical form (QuoteIdentifier's) is the
// caller's check.
func ScanIdentifier(s string) (name string, n int) {
	switch {
	case s == "":
		return "", 0
	case s[0] == '"':
		var b strings.Builder
		n = 1
		for {
			j := strings.IndexByte(s[n:], '"')
			if j < 0 {
				return "", 0
			}
			b.WriteString(s[n : n+j])
			n += j + 1
			if n < len(s) && s[n] == '"' {
				b.WriteByte('"')
				n++
				continue
			}
			return b.String(), n
		}
	case s[0] >= 'a' && s[0] <= 'z':
		for n < len(s) && IsWordByte(s[n]) {
			n++
		}
		return s[:n], n
	}
	return "", 0
}

// WriteStringMap writes m as a CQL map literal of strings, {'k': 'v', ...},
// with the keys sorted so that equal maps print equally.
func WriteStringMap(b *strings.Builder, m map[string]string) {
	b.WriteString("{")
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteString(k))
		b.WriteString(": ")
		b.WriteString(QuoteString(m[k]))
	}
	b.WriteString("}")
}
