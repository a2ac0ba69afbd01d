// Package safetext shows text that came from outside (names, comments,
// request ids, statements, error messages) on a terminal as what it is, never
// as what it would do there.
//
// A terminal obeys some characters instead of showing them (ESC sequences,
// CR, the bidirectional formatting characters), so such text could erase a
// line of output and draw a forged one; Unsafe lists them. It owns that list
// and one escaping used everywhere: Go's strconv.Quote forms (\n, \r, \xNN
// for the other C0 characters and for bytes that are not UTF-8, \uNNNN for
// DEL, C1 and the formatting characters). The \uNNNN forms are JSON's own,
// so JSON passed through a Writer decodes to exactly the text it held. The
// result is ASCII wherever the input was unsafe, so escaping twice changes
// nothing.
//
//	safetext.Line("a\x1b[2Kb\r")       // `a\x1b[2Kb\r`
//	safetext.Block("x\ny\u202ez")      // "x\ny\\u202ez": new lines and tabs kept
//	safetext.Field("r1  DROP x")       // `"r1  DROP x"`: quoted, as %q would
//	w := safetext.NewWriter(os.Stdout) // escapes all it is given, as Block
package safetext
