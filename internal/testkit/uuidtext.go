package testkit

import "pgregory.net/rapid"

// UUIDText draws UUID-like text: a canonical UUID with up to three
// characters changed (to other hex digits of either case, dashes, braces
// or spaces), sometimes cut short, for checks of the readers of UUID text.
func UUIDText(t *rapid.T) string {
	b := []byte("0123abcd-ef01-4567-89ab-cdef01234567")
	if rapid.Bool().Draw(t, "upper") {
		b[4] = 'A'
	}
	for range rapid.IntRange(0, 3).Draw(t, "changes") {
		b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.SampledFrom([]byte("-0aAfFgG9{ ")).Draw(t, "to")
	}
	s := string(b)
	if rapid.Bool().Draw(t, "cut") {
		s = s[:rapid.IntRange(0, len(s)).Draw(t, "len")]
	}
	return s
}
