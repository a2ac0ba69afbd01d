package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refCRC24 computes the v5 header CRC the long way, as the spec defines
// it: the remainder of (init·x^(8n) + M(x)·x^24) modulo the polynomial
// 0x1974F0B, over the message's bits, most significant first. It
// divides a slice of bits rather than shifting a register.
func refCRC24(msg []byte) uint32 {
	const poly = 0x1974F0B
	n := 8 * len(msg)
	bits := make([]byte, n+24) // coefficients, highest degree first
	for i := range n {
		bits[i] = msg[i/8] >> (7 - i%8) & 1
	}
	for i := range 24 { // init·x^(8n): its 24 bits sit on the message's first 24
		if i < len(bits) {
			bits[i] ^= byte(uint32(0x875060)>>(23-i)) & 1
		}
	}
	for i := 0; i < n; i++ {
		if bits[i] == 1 {
			for j := range 25 {
				bits[i+j] ^= byte(uint32(poly)>>(24-j)) & 1
			}
		}
	}
	var r uint32
	for _, b := range bits[n:] {
		r = r<<1 | uint32(b)
	}
	return r
}

// refCRC32 is the reflected CRC-32 (polynomial 0xEDB88320, initial and
// final value all ones) bit by bit.
func refCRC32(msg []byte) uint32 {
	crc := ^uint32(0)
	for _, c := range msg {
		crc ^= uint32(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xEDB88320
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

func TestCRC(t *testing.T) {
	if got := refCRC32([]byte("123456789")); got != 0xCBF43926 {
		t.Fatalf("reference CRC-32 of the check string = %08x, want cbf43926", got)
	}
	if got := CRC24(nil); got != 0x875060 {
		t.Errorf("CRC24 of nothing = %06x, want the initial value 875060", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{nil, {0}, {0xFF}, {0x32, 0x00, 0x02}, []byte("123456789")}
	for range 50 {
		b := make([]byte, r.IntN(9))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		if got, want := CRC24(in), refCRC24(in); got != want {
			t.Errorf("CRC24(% x) = %06x, want %06x", in, got, want)
		}
		seeded := append([]byte{0xFA, 0x2D, 0x55, 0xCA}, in...)
		if got, want := CRC32(in), refCRC32(seeded); got != want {
			t.Errorf("CRC32(% x) = %08x, want %08x", in, got, want)
		}
	}
}

// TestSegmentHandBuilt checks an uncompressed segment byte by byte: 50
// payload bytes, self-contained, so the 3-byte little-endian header is
// 50 | 1<<17.
func TestSegmentHandBuilt(t *testing.T) {
	payload := bytes.Repeat([]byte{'b'}, 50)
	hdr := []byte{0x32, 0x00, 0x02}
	crc := refCRC24(hdr)
	want := append(hdr, byte(crc), byte(crc>>8), byte(crc>>16))
	want = append(want, payload...)
	want = binary.LittleEndian.AppendUint32(want, refCRC32(append([]byte{0xFA, 0x2D, 0x55, 0xCA}, payload...)))

	got := AppendSegment(nil, Segment{Payload: payload, SelfContained: true}, false)
	if !bytes.Equal(got, want) {
		t.Fatalf("segment\n% x\nwant\n% x", got, want)
	}
	seg, err := ReadSegment(bytes.NewReader(want), false)
	if err != nil || !seg.SelfContained || !bytes.Equal(seg.Payload, payload) {
		t.Fatalf("read %+v, %v", seg, err)
	}
	for _, i := range []int{0, 4, 10, len(want) - 1} { // header, CRC24, payload, CRC32
		bad := bytes.Clone(want)
		bad[i] ^= 0x01
		if _, err := ReadSegment(bytes.NewReader(bad), false); !errors.Is(err, ErrChecksum) {
			t.Errorf("flipped byte %d: err = %v", i, err)
		}
	}
}

// TestCompressedSegmentHeader checks the 5-byte header of the lz4 format:
// compressed length in bits 0-16, uncompressed in 17-33, self-contained
// in bit 34.
func TestCompressedSegmentHeader(t *testing.T) {
	payload := bytes.Repeat([]byte("schema "), 100)
	b := AppendSegment(nil, Segment{Payload: payload, SelfContained: true}, true)
	var h uint64
	for i := range 5 {
		h |= uint64(b[i]) << (8 * i)
	}
	clen, ulen := int(h&MaxSegmentPayload), int(h>>17&MaxSegmentPayload)
	if ulen != len(payload) || h&(1<<34) == 0 || clen >= len(payload) || len(b) != 8+clen+4 {
		t.Fatalf("header %x: compressed %d, uncompressed %d, total %d", h, clen, ulen, len(b))
	}
	if crc := uint32(b[5]) | uint32(b[6])<<8 | uint32(b[7])<<16; crc != refCRC24(b[:5]) {
		t.Errorf("header CRC24 %06x, want %06x", crc, refCRC24(b[:5]))
	}
	if got := binary.LittleEndian.Uint32(b[8+clen:]); got != refCRC32(append([]byte{0xFA, 0x2D, 0x55, 0xCA}, b[8:8+clen]...)) {
		t.Errorf("trailer CRC32 %08x is not of the compressed payload", got)
	}
	seg, err := ReadSegment(bytes.NewReader(b), true)
	if err != nil || !bytes.Equal(seg.Payload, payload) {
		t.Fatalf("read back: %v", err)
	}
	// Incompressible data goes as it is, with an uncompressed length of 0.
	noise := make([]byte, 64)
	for i := range noise {
		noise[i] = byte(i * 131 % 251)
	}
	b = AppendSegment(nil, Segment{Payload: noise}, true)
	if h := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32; h != 64 {
		t.Errorf("raw payload header %x, want 64 with no uncompressed length and not self-contained", h)
	}
	if seg, err := ReadSegment(bytes.NewReader(b), true); err != nil || !bytes.Equal(seg.Payload, noise) {
		t.Errorf("raw payload read back: %v", err)
	}
}

func bigFrame(stream int16, n int) Frame {
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i % 7)
	}
	return Frame{Header: Header{Version: Version5, Stream: stream, Opcode: OpQuery}, Body: body}
}

// TestSegmentsMultiFrame writes small and large envelopes and reads them
// back, plain and compressed, with the real 128 KiB limit.
func TestSegmentsMultiFrame(t *testing.T) {
	frames := []Frame{bigFrame(1, 10), bigFrame(2, 0), bigFrame(3, 300_000), bigFrame(4, MaxSegmentPayload-HeaderLen), bigFrame(5, 3)}
	for _, compress := range []bool{false, true} {
		var buf bytes.Buffer
		w := NewSegmentWriter(&buf, compress)
		if err := w.WriteFrames(frames...); err != nil {
			t.Fatal(err)
		}
		segs := countSegments(t, buf.Bytes(), compress)
		// 1-2 share one; 3 spans three; 4 fills one alone; 5 has its own.
		if want := []bool{true, false, false, false, true, true}; !cmp.Equal(segs, want) {
			t.Errorf("compress %v: self-contained flags %v, want %v", compress, segs, want)
		}
		r := NewSegmentReader(&buf, compress, 1<<20)
		for _, want := range frames {
			f, err := r.ReadFrame()
			if err != nil {
				t.Fatalf("compress %v, stream %d: %v", compress, want.Stream, err)
			}
			if f.Stream != want.Stream || !bytes.Equal(f.Body, want.Body) {
				t.Fatalf("compress %v: got stream %d with %d bytes, want %d with %d", compress, f.Stream, len(f.Body), want.Stream, len(want.Body))
			}
		}
		if _, err := r.ReadFrame(); err != io.EOF {
			t.Errorf("after the last frame: %v, want io.EOF", err)
		}
	}
}

func countSegments(t *testing.T, b []byte, compress bool) []bool {
	t.Helper()
	var flags []bool
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		seg, err := ReadSegment(r, compress)
		if err != nil {
			t.Fatal(err)
		}
		flags = append(flags, seg.SelfContained)
	}
	return flags
}

func TestSegmentsMalformed(t *testing.T) {
	env := AppendFrame(nil, bigFrame(1, 40))
	seg := func(p []byte, sc bool) []byte {
		return AppendSegment(nil, Segment{Payload: p, SelfContained: sc}, false)
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"envelope crosses a self-contained segment", seg(env[:30], true), ErrSegment},
		{"stub header", seg(env[:5], true), ErrSegment},
		{"large envelope then self-contained", append(seg(env[:30], false), seg(env[30:], true)...), ErrSegment},
		{"large envelope overrun", append(seg(env[:30], false), seg(append(bytes.Clone(env[30:]), 1), false)...), ErrSegment},
		{"large envelope cut short", seg(env[:30], false), io.ErrUnexpectedEOF},
		{"not self-contained yet whole", seg(append(bytes.Clone(env), env...), false), ErrSegment},
		{"too large", seg(AppendFrame(nil, bigFrame(1, 100)), true), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewSegmentReader(bytes.NewReader(c.in), false, 64).ReadFrame()
			if c.want == nil {
				var tl *FrameTooLargeError
				if !errors.As(err, &tl) {
					t.Fatalf("err = %v, want *FrameTooLargeError", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestLZ4V4(t *testing.T) {
	for _, body := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("CREATE TABLE "), 500)} {
		f := Frame{Header: Header{Version: Version4, Opcode: OpQuery}, Body: body}
		c := f.Compress()
		if c.Flags&FlagCompression == 0 || binary.BigEndian.Uint32(c.Body) != uint32(len(body)) {
			t.Fatalf("compressed frame %+v", c.Header)
		}
		d, err := c.Decompress(1 << 20)
		if err != nil || !bytes.Equal(d.Body, body) || d.Flags&FlagCompression != 0 {
			t.Fatalf("round trip of %d bytes: %v", len(body), err)
		}
	}
	lies := [][]byte{
		{0, 0},                         // no length
		{0x7F, 0xFF, 0xFF, 0xFF, 0x10}, // 2 GiB claimed
		{0, 0, 0, 200, 0x10, 'a'},      // more than 255 times the input
		{0, 0, 0, 5, 0x10, 'a'},        // decompresses to 1, claims 5
		{0, 0, 0, 1, 0xF0},             // garbage
	}
	for _, in := range lies {
		n := allocated(func() { _, _ = DecompressV4(in, 1<<30) })
		if _, err := DecompressV4(in, 1<<30); !errors.Is(err, ErrCompression) {
			t.Errorf("% x: err = %v", in, err)
		}
		if n > allocBound(len(in)) {
			t.Errorf("% x: allocated %d bytes", in, n)
		}
	}
	if _, err := DecompressV4(CompressV4(make([]byte, 1000)), 999); !errors.Is(err, ErrCompression) {
		t.Errorf("over the limit: err = %v", err)
	}
}
