// Package boltcheck checks a bbolt file's page structure before bbolt maps
// it, and turns bbolt's panics and memory faults on a damaged file into
// errors.
//
// bbolt trusts its file: a damaged page sends it out of its memory map, into
// a nil dereference or its own consistency panic, some on goroutines no
// caller can recover. Verify reads the file with plain reads and walks every
// page reachable from the newest valid meta page as bbolt would; a file that
// passes can be opened and read without bbolt touching memory outside its
// pages. What the records mean, and their checksums, is for the file's owner
// to check. Guard and Recover catch what Verify cannot see. Every damage is
// an *Error matching ErrDamaged.
package boltcheck
