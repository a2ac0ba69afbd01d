package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// storeFile is a file for the tests: n bytes, mostly compressible (zero
// runs and repeats, like a store's pages) with random stretches.
func storeFile(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		for j := i; j < min(i+300, n); j++ {
			b[j] = byte(r.IntN(256))
		}
	}
	return b
}

// writtenFile is what WriteFile writes of data.
func writtenFile(t *testing.T, data []byte) ([]byte, *StoreSnapshot, error) {
	t.Helper()
	s, err := DecodeStore(data)
	if err != nil {
		return nil, nil, err
	}
	var out bytes.Buffer
	err = s.WriteFile(&out)
	return out.Bytes(), s, err
}

func TestStoreRoundTrip(t *testing.T) {
	random := make([]byte, 3*StoreChunk/2)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32()) // incompressible: kept as it is
	}
	for _, file := range [][]byte{nil, {1}, storeFile(10_000, 1), storeFile(2*StoreChunk+17, 2), random} {
		data := EncodeStore([]byte("prefix"), 42, 7, file)
		if !bytes.Equal(data[:6], []byte("prefix")) || !IsStore(data[6:]) {
			t.Fatalf("EncodeStore did not append a store snapshot: %q", data[:10])
		}
		got, s, err := writtenFile(t, data[6:])
		if err != nil {
			t.Fatalf("%d bytes: %v", len(file), err)
		}
		if s.Index != 42 || s.Epoch != 7 || s.Size != uint64(len(file)) || !bytes.Equal(got, file) {
			t.Fatalf("%d bytes: header %+v, %d bytes back", len(file), s.StoreHeader, len(got))
		}
		if again := EncodeStore(nil, 42, 7, file); !bytes.Equal(again, data[6:]) {
			t.Fatal("the same file encodes to other bytes")
		}
	}
	if IsStore(Encode(nil, &Contents{})) {
		t.Fatal("a record stream is taken for a store snapshot")
	}
	file := storeFile(10_000, 9)
	if h, err := PeekStore(EncodeStore(nil, 3, 4, file)); err != nil || h.Index != 3 || h.Epoch != 4 || h.Size != uint64(len(file)) {
		t.Fatalf("PeekStore: %+v, %v", h, err)
	}
	if _, err := PeekStore(Encode(nil, &Contents{})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("PeekStore of a record stream: %v", err)
	}
}

// TestStoreDamageIsRefused: a flipped byte anywhere, a truncation, another
// version: DecodeStore refuses them before anything is written.
func TestStoreDamageIsRefused(t *testing.T) {
	data := EncodeStore(nil, 5, 3, storeFile(3*StoreChunk, 3))
	for _, at := range []int{0, 4, 5, 9, len(data) / 2, len(data) - 1} {
		bad := bytes.Clone(data)
		bad[at] ^= 0x10
		if _, err := DecodeStore(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v", at, err)
		}
	}
	for _, n := range []int{0, 3, 10, len(data) - 1} {
		if _, err := DecodeStore(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	v2 := bytes.Clone(data)
	v2[len(StoreMagic)] = StoreVersion + 1
	if _, err := DecodeStore(v2); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("version %d: %v", StoreVersion+1, err)
	}
}

// resealed recomputes the trailing checksum of a store snapshot whose
// body was changed, to reach the checks behind it.
func resealed(b []byte) []byte {
	end := len(b) - storeSumSize
	binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[:end], castagnoli))
	return b
}

// TestStoreFramingIsChecked: with a valid checksum, a file size or a
// chunk that does not match is still refused by WriteFile.
func TestStoreFramingIsChecked(t *testing.T) {
	file := storeFile(StoreChunk+100, 4)
	// The file size (third varint) one larger: the chunks fall short.
	short := EncodeStore(nil, 1, 1, file)
	short = resealed(append(short[:7:7], append(binary.AppendUvarint(nil, uint64(len(file)+1)), short[7+3:]...)...))
	if _, _, err := writtenFile(t, short); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a file size one too large: %v", err)
	}
	// The file's checksum off: every chunk decodes, the sum does not match.
	sum := EncodeStore(nil, 1, 1, file)
	sum[7+3] ^= 1
	if _, _, err := writtenFile(t, resealed(sum)); !errors.Is(err, ErrChecksum) {
		t.Fatalf("a wrong file checksum: %v", err)
	}
}

// FuzzStoreSnapshot: no input makes DecodeStore or WriteFile panic or
// write more than the size the header states; checksums are recomputed
// so that the fuzzer reaches the chunks.
func FuzzStoreSnapshot(f *testing.F) {
	f.Add(EncodeStore(nil, 1, 2, storeFile(5000, 5)))
	f.Add(EncodeStore(nil, 9, 9, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > storeSumSize {
			data = resealed(bytes.Clone(data))
		}
		got, s, err := writtenFile(t, data)
		if err == nil && uint64(len(got)) != s.Size {
			t.Fatalf("wrote %d bytes of a file of %d", len(got), s.Size)
		}
		if err != nil && s != nil && uint64(len(got)) > s.Size {
			t.Fatalf("wrote %d bytes of a file of %d before failing", len(got), s.Size)
		}
	})
}
