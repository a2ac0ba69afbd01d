// Package intparse parses integers given by users (guardrail values, config
// keys, flags, query parameters) as strconv does, with errors that say what
// is wrong in words.
//
// An error does not repeat the text: the caller names the setting and quotes
// the value.
//
//	_, err := intparse.Int("99999999999999999999", 10, 64)
//	err.Error() // "out of range (at most 9223372036854775807)"
//	_, err = intparse.Uint("-1", 10, 64)
//	err.Error() // "out of range (at least 0)"
//	errors.Is(err, intparse.ErrRange) // true
package intparse
