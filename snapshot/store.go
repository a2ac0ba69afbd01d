package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/pierrec/lz4/v4"
)

// StoreMagic is the first four bytes of a store snapshot: the member's
// schema store as a whole file, which the receiver installs as its own
// instead of rebuilding one from records (Magic starts those).
const StoreMagic = "MLSB"

// StoreVersion is the store snapshot format version this build writes
// and reads.
const StoreVersion = 1

// StoreChunk is the most file bytes one chunk of a store snapshot holds.
const StoreChunk = 1 << 20

// storeSumSize is the length of the trailing CRC-32C.
const storeSumSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// IsStore reports whether data is (or claims to be) a store snapshot,
// rather than a record stream (Encode) or something else.
func IsStore(data []byte) bool { return bytes.HasPrefix(data, []byte(StoreMagic)) }

// StoreHeader is what a store snapshot says of the file it carries.
type StoreHeader struct {
	// Index and Epoch are the raft log index and the epoch the file
	// covers; the file records them too, and the receiver checks both.
	Index, Epoch uint64
	// Size is the file's length in bytes.
	Size uint64
	// FileSum is the CRC-32C (Castagnoli) of the file's bytes.
	FileSum uint32
}

// EncodeStore appends to dst the store snapshot of file, a schema store's
// whole file covering index and epoch, and returns the extended slice.
// The file is cut into chunks of StoreChunk bytes, each compressed as an
// LZ4 block (or kept as it is when that is not smaller): a store's pages
// hold much padding and repeated structure. Equal inputs give equal
// bytes. The format, all integers unsigned varints unless noted:
//
//	"MLSB" version(1 byte)
//	index epoch file-size file-CRC-32C(4 bytes, little-endian)
//	chunks, until file-size bytes are covered:
//	  raw-length stored-length stored-bytes
//	  (LZ4 block unless stored-length equals raw-length)
//	CRC-32C of everything before it (4 bytes, little-endian)
func EncodeStore(dst []byte, index, epoch uint64, file []byte) []byte {
	start := len(dst)
	dst = append(dst, StoreMagic...)
	dst = append(dst, StoreVersion)
	dst = binary.AppendUvarint(dst, index)
	dst = binary.AppendUvarint(dst, epoch)
	dst = binary.AppendUvarint(dst, uint64(len(file)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(file, castagnoli))
	var c lz4.Compressor
	// One chunk's compressed bytes, before they are appended behind
	// their length.
	var body []byte
	if len(file) > 0 {
		body = make([]byte, lz4.CompressBlockBound(min(len(file), StoreChunk)))
	}
	for off := 0; off < len(file); off += StoreChunk {
		raw := file[off:min(off+StoreChunk, len(file))]
		dst = binary.AppendUvarint(dst, uint64(len(raw)))
		stored := raw
		if n, err := c.CompressBlock(raw, body); err == nil && n > 0 && n < len(raw) {
			stored = body[:n]
		}
		dst = binary.AppendUvarint(dst, uint64(len(stored)))
		dst = append(dst, stored...)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// StoreSnapshot is a store snapshot whose framing and checksum were
// checked (DecodeStore); WriteFile writes the file it carries.
type StoreSnapshot struct {
	StoreHeader
	// body is the snapshot without its checksum; its chunks start at at.
	body []byte
	at   int
}

// DecodeStore checks data, a store snapshot (EncodeStore): its magic, its
// version and its trailing checksum, and reads its header. It decompresses
// nothing: WriteFile does, chunk by chunk. Any problem is a *CorruptError
// matching ErrCorrupt (and ErrChecksum, ErrUnsupportedVersion where they
// apply). The result aliases data.
func DecodeStore(data []byte) (*StoreSnapshot, error) {
	head := len(StoreMagic) + 1
	switch {
	case len(data) < head+storeSumSize:
		return nil, &CorruptError{Reason: fmt.Sprintf("a store snapshot of %d bytes is truncated", len(data))}
	case !IsStore(data):
		return nil, &CorruptError{Reason: fmt.Sprintf("bad magic %q, not a metalog store snapshot", data[:len(StoreMagic)])}
	case data[len(StoreMagic)] != StoreVersion:
		return nil, &CorruptError{Offset: len(StoreMagic), Kind: ErrUnsupportedVersion,
			Reason: fmt.Sprintf("store snapshot format version %d, this build reads version %d", data[len(StoreMagic)], StoreVersion)}
	}
	end := len(data) - storeSumSize
	if got, want := crc32.Checksum(data[:end], castagnoli), binary.LittleEndian.Uint32(data[end:]); got != want {
		return nil, &CorruptError{Offset: end, Kind: ErrChecksum,
			Reason: fmt.Sprintf("store snapshot checksum mismatch (%08x, computed %08x): damaged or truncated", want, got)}
	}
	return readStoreHeader(data[:end])
}

// readStoreHeader reads the header of the store snapshot body (the
// snapshot without its checksum), whose magic and version are checked.
func readStoreHeader(body []byte) (*StoreSnapshot, error) {
	r := reader{b: body, off: len(StoreMagic) + 1}
	s := &StoreSnapshot{body: r.b}
	s.Index, s.Epoch, s.Size = r.uvarint("index"), r.uvarint("epoch"), r.uvarint("file size")
	sum := r.bytes(4, "file checksum")
	if r.err != nil {
		return nil, r.err
	}
	s.FileSum, s.at = binary.LittleEndian.Uint32(sum), r.off
	return s, nil
}

// PeekStore reads the header of a store snapshot without checking
// anything past it (DecodeStore checks the checksum), for a caller that
// only needs what the header says, e.g. the size of the file, cheaply.
// Its error is a *CorruptError.
func PeekStore(data []byte) (StoreHeader, error) {
	if !IsStore(data) || len(data) <= len(StoreMagic) || data[len(StoreMagic)] != StoreVersion {
		return StoreHeader{}, &CorruptError{Reason: "not a store snapshot of a version this build reads"}
	}
	s, err := readStoreHeader(data)
	if err != nil {
		return StoreHeader{}, err
	}
	return s.StoreHeader, nil
}

// WriteFile decompresses the file chunk by chunk into w, and checks that
// the chunks make up exactly Size bytes whose CRC-32C is FileSum. It
// holds one chunk at a time; on an error w may have received part of the
// file. Its errors other than w's are *CorruptErrors.
func (s *StoreSnapshot) WriteFile(w io.Writer) error {
	r := reader{b: s.body, off: s.at}
	buf := make([]byte, min(StoreChunk, s.Size))
	var written uint64
	var sum uint32
	for r.off < len(r.b) {
		at := r.off
		raw, stored := r.uvarint("chunk length"), r.uvarint("stored chunk length")
		if r.err == nil && (raw == 0 || raw > StoreChunk || stored > raw || written+raw > s.Size) {
			r.failf(at, "a chunk of %d bytes stored in %d (at most %d, within the file's %d bytes)", raw, stored, StoreChunk, s.Size)
		}
		body := r.bytes(stored, "chunk")
		if r.err != nil {
			return r.err
		}
		chunk := body
		if stored < raw {
			n, err := lz4.UncompressBlock(body, buf[:raw])
			if err != nil || uint64(n) != raw {
				r.failf(at, "a chunk that does not decompress to its %d bytes (%d, %v)", raw, n, err)
				return r.err
			}
			chunk = buf[:raw]
		}
		sum = crc32.Update(sum, castagnoli, chunk)
		written += raw
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	switch {
	case written != s.Size:
		r.failf(r.off, "the chunks hold %d of the file's %d bytes", written, s.Size)
		return r.err
	case sum != s.FileSum:
		return &CorruptError{Offset: s.at, Kind: ErrChecksum, Reason: fmt.Sprintf("the file's checksum is %08x, the snapshot says %08x", sum, s.FileSum)}
	}
	return nil
}
