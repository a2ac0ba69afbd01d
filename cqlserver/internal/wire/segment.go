package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// MaxSegmentPayload is the largest payload of a v5 segment (17 bits).
const MaxSegmentPayload = 1<<17 - 1

// The lengths of a segment's header (its content and the CRC24 after it)
// and trailer.
const (
	plainHeaderLen      = 3 + 3
	compressedHeaderLen = 5 + 3
	trailerLen          = 4
)

// ErrChecksum is returned when a segment's header or payload does not
// match its CRC.
var ErrChecksum = errors.New("cql wire: segment checksum mismatch")

// ErrSegment is returned for segments that do not carry whole envelopes
// the way the v5 framing requires.
var ErrSegment = errors.New("cql wire: malformed segment")

// The CRC24 parameters of protocol v5's segment header (the
// specification's section 2.1): initial value and polynomial, bits
// processed most significant first, no final xor.
const (
	crc24Init = 0x875060
	crc24Poly = 0x1974F0B
)

// CRC24 returns the checksum protocol v5 puts after a segment header's
// content, computed over b in wire order.
func CRC24(b []byte) uint32 {
	crc := uint32(crc24Init)
	for _, c := range b {
		crc ^= uint32(c) << 16
		for range 8 {
			crc <<= 1
			if crc&0x1000000 != 0 {
				crc ^= crc24Poly
			}
		}
	}
	return crc & 0xFFFFFF
}

// crc32Seed are the bytes protocol v5 feeds a standard (IEEE) CRC32
// before a segment's payload.
var crc32Seed = []byte{0xFA, 0x2D, 0x55, 0xCA}

var crc32Primed = crc32.Update(0, crc32.IEEETable, crc32Seed)

// CRC32 returns the checksum of a segment payload's trailer: the IEEE
// CRC32 of the four seed bytes FA 2D 55 CA followed by b.
func CRC32(b []byte) uint32 { return crc32.Update(crc32Primed, crc32.IEEETable, b) }

// Segment is one v5 segment's payload, decompressed.
type Segment struct {
	Payload       []byte
	SelfContained bool // the payload holds whole envelopes only
}

// AppendSegment appends s in the uncompressed or the lz4 format. When
// compressing, a payload lz4 does not shrink is sent as it is (with an
// uncompressed length of 0, as the spec allows). A payload over
// MaxSegmentPayload is a broken invariant of the caller.
func AppendSegment(dst []byte, s Segment, compress bool) []byte {
	if len(s.Payload) > MaxSegmentPayload {
		panic(fmt.Sprintf("cql wire: segment payload of %d bytes exceeds %d", len(s.Payload), MaxSegmentPayload))
	}
	var sc uint64
	if s.SelfContained {
		sc = 1
	}
	if !compress {
		h := uint64(len(s.Payload)) | sc<<17
		dst = appendHeaderLE(dst, h, 3)
		dst = append(dst, s.Payload...)
		return binary.LittleEndian.AppendUint32(dst, CRC32(s.Payload))
	}
	payload, rawLen := s.Payload, 0
	if c := appendLZ4Block(nil, s.Payload); len(c) < len(s.Payload) {
		payload, rawLen = c, len(s.Payload)
	}
	h := uint64(len(payload)) | uint64(rawLen)<<17 | sc<<34
	dst = appendHeaderLE(dst, h, 5)
	dst = append(dst, payload...)
	return binary.LittleEndian.AppendUint32(dst, CRC32(payload))
}

// appendHeaderLE appends the n low bytes of h little-endian, then their
// CRC24 in three little-endian bytes.
func appendHeaderLE(dst []byte, h uint64, n int) []byte {
	start := len(dst)
	for i := range n {
		dst = append(dst, byte(h>>(8*i)))
	}
	crc := CRC24(dst[start:])
	return append(dst, byte(crc), byte(crc>>8), byte(crc>>16))
}

// ReadSegment reads one segment from r in the uncompressed or the lz4
// format and checks both its CRCs. An io.EOF before its first byte is
// returned as is; inside it, as io.ErrUnexpectedEOF.
func ReadSegment(r io.Reader, compressed bool) (Segment, error) {
	var hb [compressedHeaderLen]byte
	n := plainHeaderLen
	if compressed {
		n = compressedHeaderLen
	}
	if _, err := io.ReadFull(r, hb[:n]); err != nil {
		return Segment{}, err
	}
	hn := n - 3
	var h uint64
	for i := range hn {
		h |= uint64(hb[i]) << (8 * i)
	}
	want := uint32(hb[hn]) | uint32(hb[hn+1])<<8 | uint32(hb[hn+2])<<16
	if got := CRC24(hb[:hn]); got != want {
		return Segment{}, fmt.Errorf("%w: header CRC24 %06x, computed %06x", ErrChecksum, want, got)
	}
	length := int(h & MaxSegmentPayload)
	rawLen := 0
	sc := h&(1<<17) != 0
	if compressed {
		rawLen = int(h >> 17 & MaxSegmentPayload)
		sc = h&(1<<34) != 0
	}
	buf := make([]byte, length+trailerLen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return Segment{}, noEOF(err)
	}
	payload := buf[:length:length]
	want = binary.LittleEndian.Uint32(buf[length:])
	if got := CRC32(payload); got != want {
		return Segment{}, fmt.Errorf("%w: payload CRC32 %08x, computed %08x", ErrChecksum, want, got)
	}
	if rawLen != 0 {
		var err error
		if payload, err = decodeLZ4Block(payload, rawLen); err != nil {
			return Segment{}, err
		}
	}
	return Segment{Payload: payload, SelfContained: sc}, nil
}
