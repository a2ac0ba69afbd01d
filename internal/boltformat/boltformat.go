// Package boltformat holds the constants of bbolt's file format, version
// 2, that internal/boltcheck reads and internal/boltpack writes: a 16-byte
// page header (id, flags, element count, overflow), 16-byte branch and
// leaf elements, a bucket value that is a 16-byte header (root page,
// sequence) followed, for an inline bucket, by a page of its own, and two
// meta pages whose checksum is an FNV-1a over the meta up to it. All
// integers are little-endian.
package boltformat

// The format's numbers.
const (
	// Magic opens a meta page.
	Magic = 0xED0CDAED
	// Version is the format version in a meta page.
	Version = 2
	// PageHeaderSize is the length of a page header.
	PageHeaderSize = 16
	// ElementSize is the length of a branch or leaf element.
	ElementSize = 16
	// BucketHeader is the length of a bucket value's header.
	BucketHeader = 16
	// MetaSize is the length of the meta, magic to checksum.
	MetaSize = 64
	// MetaSumOffset is where the checksum sits in the meta: it covers
	// the meta up to there.
	MetaSumOffset = 56
	// NoFreelist is the freelist page of a file without one.
	NoFreelist = ^uint64(0)
)

// Page flags.
const (
	FlagBranch   = 0x01
	FlagLeaf     = 0x02
	FlagMeta     = 0x04
	FlagFreelist = 0x10
)

// LeafBucket is the flag of a leaf element holding a nested bucket.
const LeafBucket = 0x01
