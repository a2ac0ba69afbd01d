package wire

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzMaxBody is the body limit of the fuzz tests' readers.
const fuzzMaxBody = 1 << 20

// fuzzAllocBound is what reading n hostile bytes may allocate: a segment's
// payload (128 KiB, bounded by its 17-bit length) or a body chunk, plus
// a multiple of the input that lz4's 255-fold expansion allows.
func fuzzAllocBound(n int) uint64 { return 512<<10 + 300*uint64(n) }

// heapAllocated returns the bytes f allocates, without forcing a
// collection (the fuzzer calls it often).
func heapAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func requestSeeds() [][]byte {
	seeds := [][]byte{optionsV4, startupV5}
	for _, v := range SupportedVersions {
		for _, m := range []Message{
			&Query{Query: "SELECT * FROM system.local", Params: allParams(v)},
			&Execute{ID: []byte{1}, ResultMetadataID: onV5(v, []byte{2}), Params: allParams(v)},
			&Prepare{Query: "SELECT 1", Keyspace: string(onV5(v, []byte("ks")))},
			&Register{Events: []string{EventSchemaChange}},
			&AuthResponse{Token: []byte("\x00u\x00p")},
			&Batch{Queries: []BatchQuery{{Query: "q"}, {Prepared: true, ID: []byte{1}}}, Params: QueryParams{Consistency: One}},
		} {
			seeds = append(seeds, AppendFrame(nil, requestFrame(v, 0, m)))
		}
	}
	return seeds
}

func FuzzReadFrame(f *testing.F) {
	for _, s := range requestSeeds() {
		f.Add(s)
	}
	f.Add(AppendFrame(nil, requestFrame(Version4, 0, &Startup{}).Compress()))
	f.Add([]byte{0x04, 0, 0, 0, 0x07, 0x7F, 0xFF, 0xFF, 0xFF})                      // claims 2 GiB
	f.Add([]byte{0x04, 0, 0, 0, 0x07, 0x00, 0x0F, 0xFF, 0xFF})                      // claims 1 MiB, sends nothing
	f.Add([]byte{0x04, 0x01, 0, 0, 0x07, 0, 0, 0, 5, 0x7F, 0xFF, 0xFF, 0xFF, 0x10}) // lz4 lying length
	f.Fuzz(func(t *testing.T, data []byte) {
		n := heapAllocated(func() {
			fr, err := ReadFrame(bytes.NewReader(data), fuzzMaxBody)
			if err != nil {
				return
			}
			if fr.Length != len(fr.Body) {
				t.Fatalf("header length %d, body %d", fr.Length, len(fr.Body))
			}
			if fr, err = fr.Decompress(fuzzMaxBody); err == nil {
				_, _ = DecodeRequest(fr)
			}
		})
		if n > fuzzAllocBound(len(data)) {
			t.Fatalf("allocated %d bytes reading %d", n, len(data))
		}
	})
}

func FuzzSegments(f *testing.F) {
	for _, compress := range []bool{false, true} {
		var frames []Frame
		for _, s := range requestSeeds() {
			fr, err := ReadFrame(bytes.NewReader(s), fuzzMaxBody)
			if err != nil {
				f.Fatal(err)
			}
			frames = append(frames, fr)
		}
		var buf bytes.Buffer
		w := NewSegmentWriter(&buf, compress)
		w.maxPayload = 64 // several envelopes spread over segments
		if err := w.WriteFrames(frames...); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), compress)
		f.Add(AppendSegment(nil, Segment{Payload: bytes.Repeat([]byte{5}, 300), SelfContained: true}, compress), compress)
	}
	f.Fuzz(func(t *testing.T, data []byte, compress bool) {
		var got []Frame
		n := heapAllocated(func() {
			r := NewSegmentReader(bytes.NewReader(data), compress, fuzzMaxBody)
			for {
				fr, err := r.ReadFrame()
				if err != nil {
					return
				}
				_, _ = DecodeRequest(fr)
				got = append(got, fr)
			}
		})
		if n > fuzzAllocBound(len(data))+uint64(len(got))*256 {
			t.Fatalf("allocated %d bytes reading %d", n, len(data))
		}
		// What was read writes and reads back the same.
		var buf bytes.Buffer
		if err := NewSegmentWriter(&buf, compress).WriteFrames(got...); err != nil {
			t.Fatal(err)
		}
		r := NewSegmentReader(&buf, compress, fuzzMaxBody)
		for _, want := range got {
			fr, err := r.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(want, fr, equateEmpty) {
				t.Fatalf("rewritten frame differs: %+v, want %+v", fr.Header, want.Header)
			}
		}
	})
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range requestSeeds() {
		fr, err := ReadFrame(bytes.NewReader(s), fuzzMaxBody)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(fr.Version), byte(fr.Flags), byte(fr.Opcode), fr.Body)
	}
	f.Add(byte(4), byte(FlagCustomPayload), byte(OpQuery), []byte{0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, version, flags, opcode byte, body []byte) {
		fr := Frame{Header: Header{Version: Version(version), Flags: Flags(flags), Opcode: Opcode(opcode), Length: len(body)}, Body: body}
		var m Message
		var err error
		n := heapAllocated(func() { m, err = DecodeRequest(fr) })
		if n > fuzzAllocBound(len(body)) {
			t.Fatalf("allocated %d bytes decoding %d", n, len(body))
		}
		if err != nil || fr.Flags&FlagCustomPayload != 0 {
			return
		}
		// A decoded request encodes to a body that decodes to it again.
		fr.Body = m.AppendBody(nil, fr.Version)
		again, err := DecodeRequest(fr)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", fr.Opcode, err)
		}
		if diff := cmp.Diff(m, again, equateEmpty); diff != "" {
			t.Fatalf("%s (-first +again)\n%s", fr.Opcode, diff)
		}
	})
}
