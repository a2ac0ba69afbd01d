package cqltext

import "strings"

// DurationLen returns the length of the DURATION constant at the start of
// s, or 0. s starts with an optional '-', then either digits, for the
// form with units ("1h30m", "2mo", "10us": Lexer.g's first alternative,
// units in any case), or 'P', for the ISO 8601 forms, whose letters are
// upper case: "P1Y2M3DT4H5M6S" (each part optional), "P2W" and
// "P0001-02-03T04:05:06".
func DurationLen(s string) int {
	n := 0
	if strings.HasPrefix(s, "-") {
		n = 1
	}
	if n < len(s) && s[n] == 'P' {
		if m := isoDurationLen(s[n+1:]); m >= 0 {
			return n + 1 + m
		}
		return 0
	}
	end := 0
	for {
		d := digits(s[n:])
		if d == 0 {
			return end
		}
		u := unitLen(s[n+d:])
		if u == 0 {
			return end
		}
		n += d + u
		end = n
	}
}

// digits returns the number of leading ASCII digits of s.
func digits(s string) int {
	n := 0
	for n < len(s) && isASCIIDigit(s[n]) {
		n++
	}
	return n
}

// unitLen returns the length of the longest duration unit at the start of
// s (y, mo, w, d, h, m, s, ms, us, µs, ns, in any case), or 0.
func unitLen(s string) int {
	for _, u := range []string{"mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"} {
		if len(s) >= len(u) && strings.EqualFold(s[:len(u)], u) {
			return len(u)
		}
	}
	return 0
}

// isoDurationLen returns the length of the longest ISO 8601 duration body
// after the 'P' at the start of s, or -1 when none matches (a bare "P" is
// one: every part of the designator form is optional).
func isoDurationLen(s string) int {
	best := designatorsLen(s)
	if d := digits(s); d > 0 && d < len(s) && s[d] == 'W' && d+1 > best {
		best = d + 1
	}
	if alternativeFormat(s) && 19 > best {
		best = 19
	}
	return best
}

// designatorsLen returns the length of "[nY][nM][nD][T[nH][nM][nS]]" at
// the start of s, each part taken when it matches.
func designatorsLen(s string) int {
	n := 0
	part := func(letter byte) {
		if d := digits(s[n:]); d > 0 && n+d < len(s) && s[n+d] == letter {
			n += d + 1
		}
	}
	part('Y')
	part('M')
	part('D')
	if n < len(s) && s[n] == 'T' {
		n++
		part('H')
		part('M')
		part('S')
	}
	return n
}

// alternativeFormat reports whether s starts with "dddd-dd-ddTdd:dd:dd".
func alternativeFormat(s string) bool {
	const pattern = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(pattern) {
		return false
	}
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == 'd' && !isASCIIDigit(s[i]) || pattern[i] != 'd' && s[i] != pattern[i] {
			return false
		}
	}
	return true
}

// isASCIIDigit reports whether c is 0 to 9.
func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }
