// Package boltcheck checks the page structure of a bbolt file before bbolt
// maps it.
//
// bbolt trusts its file: a damaged page header or element sends it out of
// bounds of its memory map, into a nil dereference or into its own
// consistency panic, some of them on goroutines of its own that no caller
// can recover. Verify reads the file with plain reads instead, and walks
// every page reachable from the newest valid meta page the way bbolt
// would: each page's id, type, element table, key order and overflow must
// be in bounds and agree, and no page may be reached twice. A file that
// passes can be opened and read by bbolt without touching memory outside
// its pages; what the records mean (and their checksums) is for the
// file's owner to check.
//
// The on-disk format walked here is bbolt's (version 2): a 16-byte page
// header (id, flags, element count, overflow), 16-byte branch and leaf
// elements, and a bucket value that is a 16-byte header (root page,
// sequence) followed, for an inline bucket, by a page of its own.
package boltcheck
