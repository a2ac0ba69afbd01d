// Package clip cuts user input down to the size an error message or a log
// line may quote.
//
// Input is bounded only by the request size, and a message that repeats a
// megabyte-long name twice helps nobody: every layer that names user
// input (a name, a value, a token, a request id) in a message shows it
// through String or Quote, which keep its first Max bytes and say how long
// it was.
//
//	clip.String(name) // name, or "aaaa... (1048576 bytes)"
//	clip.Quote(name)  // strconv.Quote(name), or `"aaaa..." (1048576 bytes)`
//
// It owns the cut only; how a message spells a CQL name or string is
// package cqltext's.
package clip
