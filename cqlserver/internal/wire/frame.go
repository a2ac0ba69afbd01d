package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Version is a protocol version, without the direction bit.
type Version byte

// The versions this codec speaks.
const (
	Version4 Version = 4
	Version5 Version = 5
)

// SupportedVersions lists the versions this codec speaks, lowest first.
var SupportedVersions = []Version{Version4, Version5}

// Supported reports whether the codec speaks v.
func (v Version) Supported() bool { return v == Version4 || v == Version5 }

// responseBit is the version byte's direction bit: set on responses.
const responseBit = 0x80

// Flags are a frame's header flags.
type Flags byte

// The header flags (section 2.2 of the specs).
const (
	FlagCompression   Flags = 0x01 // v4: the body is compressed; ignored on v5
	FlagTracing       Flags = 0x02 // request: trace it; response: a tracing id opens the body
	FlagCustomPayload Flags = 0x04 // a [bytes map] payload precedes the message
	FlagWarning       Flags = 0x08 // response: a [string list] of warnings precedes the message
	FlagBeta          Flags = 0x10 // the client opts in to a beta version
)

// Opcode names a message.
type Opcode byte

// The opcodes (section 2.4 of the specs).
const (
	OpError         Opcode = 0x00
	OpStartup       Opcode = 0x01
	OpReady         Opcode = 0x02
	OpAuthenticate  Opcode = 0x03
	OpOptions       Opcode = 0x05
	OpSupported     Opcode = 0x06
	OpQuery         Opcode = 0x07
	OpResult        Opcode = 0x08
	OpPrepare       Opcode = 0x09
	OpExecute       Opcode = 0x0A
	OpRegister      Opcode = 0x0B
	OpEvent         Opcode = 0x0C
	OpBatch         Opcode = 0x0D
	OpAuthChallenge Opcode = 0x0E
	OpAuthResponse  Opcode = 0x0F
	OpAuthSuccess   Opcode = 0x10
)

var opcodeNames = map[Opcode]string{
	OpError: "ERROR", OpStartup: "STARTUP", OpReady: "READY", OpAuthenticate: "AUTHENTICATE",
	OpOptions: "OPTIONS", OpSupported: "SUPPORTED", OpQuery: "QUERY", OpResult: "RESULT",
	OpPrepare: "PREPARE", OpExecute: "EXECUTE", OpRegister: "REGISTER", OpEvent: "EVENT",
	OpBatch: "BATCH", OpAuthChallenge: "AUTH_CHALLENGE", OpAuthResponse: "AUTH_RESPONSE",
	OpAuthSuccess: "AUTH_SUCCESS",
}

// String returns the opcode's name in the spec.
func (o Opcode) String() string {
	if n, ok := opcodeNames[o]; ok {
		return n
	}
	return fmt.Sprintf("OPCODE(%#02x)", byte(o))
}

// HeaderLen is the length of a frame (v5: envelope) header.
const HeaderLen = 9

// EventStream is the stream id of server-initiated EVENT messages.
const EventStream int16 = -1

// Header is a frame's header.
type Header struct {
	Version  Version
	Response bool // the direction bit
	Flags    Flags
	Stream   int16
	Opcode   Opcode
	Length   int // of the body, in bytes
}

// Frame is one frame (a v5 envelope): its header and its body. The
// header's Length is the body's length when read; when written, the
// body's length is used.
type Frame struct {
	Header
	Body []byte
}

// UnsupportedVersionError is returned for a frame of a version the codec
// does not speak. It carries what Cassandra's answer needs: the client's
// version and stream, and the versions spoken.
type UnsupportedVersionError struct {
	Version   byte  // the client's version, without the direction bit
	Stream    int16 // the client's stream id (v1 and v2 have one byte)
	Supported []Version
}

// Error returns a message naming the client's version and the ones spoken.
func (e *UnsupportedVersionError) Error() string { return "cql wire: " + e.ProtocolMessage() }

// ProtocolMessage is the text of the PROTOCOL_ERROR to answer with. Drivers
// look for "Invalid or unsupported protocol version" in it to decide to
// retry with a lower version, so its opening words follow Cassandra's.
func (e *UnsupportedVersionError) ProtocolMessage() string {
	names := make([]string, len(e.Supported))
	for i, v := range e.Supported {
		names[i] = fmt.Sprintf("%d/v%d", v, v)
	}
	return fmt.Sprintf("Invalid or unsupported protocol version (%d); supported versions are (%s)",
		e.Version, strings.Join(names, ", "))
}

// ReplyVersion is the version to write the refusal in: the client's own
// when it is lower than any spoken (so an old driver can read it), the
// highest spoken otherwise.
func (e *UnsupportedVersionError) ReplyVersion() Version {
	if Version(e.Version) < e.Supported[0] {
		return Version(e.Version)
	}
	return e.Supported[len(e.Supported)-1]
}

// FrameTooLargeError is returned for a frame whose body is longer than
// the reader's limit. The body has not been read: to keep the stream
// usable the caller must discard Header.Length bytes, or close it.
type FrameTooLargeError struct {
	Header Header
	Max    int
}

// Error names both sizes.
func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("cql wire: frame body of %d bytes exceeds the limit of %d bytes",
		e.Header.Length, e.Max)
}

// ErrNegativeLength is returned for a header whose length is negative.
var ErrNegativeLength = errors.New("cql wire: negative frame length")

// ReadFrame reads one frame from r, refusing one whose body is longer
// than maxBody without reading that body. A version not spoken returns an
// *UnsupportedVersionError after reading only the first four bytes, the
// most a v1 or v2 header's stream id needs.
func ReadFrame(r io.Reader, maxBody int) (Frame, error) {
	var hb [HeaderLen]byte
	if _, err := io.ReadFull(r, hb[:4]); err != nil {
		return Frame{}, err
	}
	if err := checkVersion(hb[:4]); err != nil {
		return Frame{}, err
	}
	if _, err := io.ReadFull(r, hb[4:]); err != nil {
		return Frame{}, noEOF(err)
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return Frame{}, err
	}
	if h.Length > maxBody {
		return Frame{}, &FrameTooLargeError{Header: h, Max: maxBody}
	}
	body, err := readBody(r, h.Length)
	if err != nil {
		return Frame{}, err
	}
	return Frame{Header: h, Body: body}, nil
}

// bodyChunk is the most readBody allocates ahead of the bytes received.
const bodyChunk = 64 << 10

// readBody reads n bytes, growing its buffer as they arrive rather than
// trusting the header's n: a peer that claims a large body and sends
// little costs little memory.
func readBody(r io.Reader, n int) ([]byte, error) {
	if n <= bodyChunk {
		body := make([]byte, n)
		_, err := io.ReadFull(r, body)
		return body, noEOF(err)
	}
	var buf bytes.Buffer
	buf.Grow(bodyChunk)
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return nil, noEOF(err)
	}
	return buf.Bytes(), nil
}

// noEOF turns an EOF inside a frame into io.ErrUnexpectedEOF: only an EOF
// before a frame's first byte is a clean end.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// checkVersion checks the version byte of a header's first four bytes.
func checkVersion(b []byte) error {
	v := Version(b[0] &^ responseBit)
	if v.Supported() {
		return nil
	}
	e := &UnsupportedVersionError{Version: byte(v), Supported: SupportedVersions}
	if v <= 2 {
		e.Stream = int16(int8(b[2]))
	} else {
		e.Stream = int16(binary.BigEndian.Uint16(b[2:4]))
	}
	return e
}

// ParseHeader decodes a 9-byte header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("%w: header needs %d bytes, %d remain", ErrShortBody, HeaderLen, len(b))
	}
	if err := checkVersion(b[:4]); err != nil {
		return Header{}, err
	}
	n := int32(binary.BigEndian.Uint32(b[5:9]))
	if n < 0 {
		return Header{}, fmt.Errorf("%w: %d", ErrNegativeLength, n)
	}
	return Header{
		Version:  Version(b[0] &^ responseBit),
		Response: b[0]&responseBit != 0,
		Flags:    Flags(b[1]),
		Stream:   int16(binary.BigEndian.Uint16(b[2:4])),
		Opcode:   Opcode(b[4]),
		Length:   int(n),
	}, nil
}

// AppendHeader appends h with length n. Any version byte may be written,
// so that a refusal can answer in the client's version; below v3 the
// header has that version's layout (a one-byte stream id).
func AppendHeader(b []byte, h Header, n int) []byte {
	v := byte(h.Version)
	if h.Response {
		v |= responseBit
	}
	b = append(b, v, byte(h.Flags))
	if h.Version < 3 {
		// v1 and v2 have a one-byte stream id and an eight-byte header:
		// only a refusal is written in them, to a client that reads
		// nothing else.
		b = append(b, byte(h.Stream))
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(h.Stream))
	}
	b = append(b, byte(h.Opcode))
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

// AppendFrame appends f's header and body.
func AppendFrame(b []byte, f Frame) []byte {
	return append(AppendHeader(b, f.Header, len(f.Body)), f.Body...)
}

// WriteFrame writes f to w in one Write.
func WriteFrame(w io.Writer, f Frame) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, HeaderLen+len(f.Body)), f))
	return err
}
