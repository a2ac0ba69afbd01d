// Package boltpack writes a whole bbolt file in memory from buckets whose
// keys come in ascending order, as a bulk load: every page is filled
// completely and written once, with no free pages. It is the writing
// counterpart of internal/boltcheck, and much cheaper than putting the
// same keys through bbolt, which seeks, splits and copies nodes per key.
//
// A file written by boltpack is one bbolt opens, checks and goes on
// writing like any other: two valid meta pages, no freelist (bbolt, opened
// with NoFreelistSync, rebuilds it), buckets inline where bbolt would make
// them inline.
//
//	f := boltpack.New(os.Getpagesize(), 0)
//	b, _ := f.Root().Bucket([]byte("tables"))
//	_ = b.Put([]byte("a"), []byte("1")) // keys ascending
//	_ = b.Close()
//	image, _ := f.Finish() // the bytes of the file
package boltpack
