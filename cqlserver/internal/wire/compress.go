package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// ErrCompression is returned for a compressed body or payload that does
// not decompress to the length it declares.
var ErrCompression = errors.New("cql wire: bad lz4 data")

// LZ4 is the COMPRESSION option's value naming the only compression
// this codec speaks.
const LZ4 = "lz4"

var compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// appendLZ4Block appends src compressed as one LZ4 block.
func appendLZ4Block(dst, src []byte) []byte {
	start := len(dst)
	bound := lz4.CompressBlockBound(len(src))
	dst = append(dst, make([]byte, bound)...)
	c := compressors.Get().(*lz4.Compressor)
	n, err := c.CompressBlock(src, dst[start:])
	compressors.Put(c)
	if err != nil {
		panic(fmt.Sprintf("cql wire: lz4 compression of %d bytes into %d failed: %v", len(src), bound, err))
	}
	if n == 0 && len(src) > 0 {
		panic(fmt.Sprintf("cql wire: lz4 compression of %d bytes into its bound %d wrote nothing", len(src), bound))
	}
	if len(src) == 0 {
		// An empty block is one token byte saying no literals.
		return append(dst[:start], 0)
	}
	return dst[:start+n]
}

// decodeLZ4Block decompresses src, which must decompress to exactly n
// bytes.
func decodeLZ4Block(src []byte, n int) ([]byte, error) {
	out := make([]byte, n)
	if n == 0 {
		return out, nil
	}
	got, err := lz4.UncompressBlock(src, out)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCompression, err)
	}
	if got != n {
		return nil, fmt.Errorf("%w: decompressed to %d bytes, declared %d", ErrCompression, got, n)
	}
	return out, nil
}

// CompressV4 returns body in protocol v4's frame-level lz4 format: the
// uncompressed length as a 4-byte big-endian integer, then the block.
// The frame carrying it sets FlagCompression.
func CompressV4(body []byte) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+lz4.CompressBlockBound(len(body))), uint32(len(body)))
	return appendLZ4Block(out, body)
}

// DecompressV4 reverses CompressV4, refusing a declared length over
// maxLen before allocating it.
func DecompressV4(body []byte, maxLen int) ([]byte, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("%w: compressed body of %d bytes has no length", ErrCompression, len(body))
	}
	n := int64(binary.BigEndian.Uint32(body))
	if n > int64(maxLen) {
		return nil, fmt.Errorf("%w: declares %d uncompressed bytes, the limit is %d", ErrCompression, n, maxLen)
	}
	// LZ4 expands at most 255 times; a claim beyond that is a lie that
	// must not cost an allocation.
	if n > 255*int64(len(body)) {
		return nil, fmt.Errorf("%w: declares %d bytes from %d compressed", ErrCompression, n, len(body)-4)
	}
	return decodeLZ4Block(body[4:], int(n))
}

// Decompress returns f with its body decompressed if FlagCompression is
// set on a v4 frame; v5 ignores the flag (its segments compress).
func (f Frame) Decompress(maxLen int) (Frame, error) {
	if f.Version != Version4 || f.Flags&FlagCompression == 0 {
		return f, nil
	}
	body, err := DecompressV4(f.Body, maxLen)
	if err != nil {
		return Frame{}, err
	}
	f.Body, f.Length = body, len(body)
	f.Flags &^= FlagCompression
	return f, nil
}

// Compress returns f with its body compressed and FlagCompression set;
// only v4 frames are compressed, others are returned as they are.
func (f Frame) Compress() Frame {
	if f.Version != Version4 {
		return f
	}
	f.Body = CompressV4(f.Body)
	f.Length = len(f.Body)
	f.Flags |= FlagCompression
	return f
}
