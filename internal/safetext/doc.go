// Package safetext shows text that came from outside — names, comments and
// other string literals, request ids, principals, statements, error
// messages — on a terminal as what it is, never as what it would do there.
//
// A terminal obeys some characters instead of showing them: ESC starts a
// control sequence (clear the screen, move the cursor), CR returns to the
// start of the line, so that what follows overwrites it, and the
// bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, the
// marks U+200E, U+200F and U+061C) reorder what follows. Text holding them
// can erase a line of metalog history and draw a forged one in its place.
// Unsafe reports those runes: the control characters (C0, DEL, C1), the
// bidirectional formatting characters, and the line and paragraph
// separators U+2028 and U+2029, which some terminals and editors break
// lines at.
//
// Every rendering escapes an unsafe rune as Go's strconv.Quote does, with
// one rendering throughout so that it reads the same everywhere: \a \b \t
// \n \v \f \r for those, \xNN for the other C0 characters, \uNNNN for DEL,
// C1 and the formatting characters (\u007f, \u0085, \u202e), and \xNN for
// a byte that is not UTF-8. The \uNNNN forms are JSON's own escapes, so
// JSON passed through a Writer decodes to exactly the text it held (JSON
// encoders already escape the C0 characters and invalid bytes).
//
//	safetext.Line("a\x1b[2Kb\r")     // `a\x1b[2Kb\r`
//	safetext.Block("x\ny\u202ez")    // "x\ny\\u202ez": new lines and tabs kept
//	safetext.Field("token:ci")       // `token:ci`
//	safetext.Field("r1  DROP x")     // `"r1  DROP x"`: quoted, as %q would
//	w := safetext.NewWriter(os.Stdout) // escapes all it is given, as Block
//
// The escaped text is ASCII where the input was unsafe, so it is safe to
// escape twice: the second time changes nothing.
package safetext
