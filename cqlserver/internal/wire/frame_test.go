package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An OPTIONS request as section 2 lays it out: version 4 request, no
// flags, stream 0x0102, opcode 0x05, empty body.
var optionsV4 = []byte{0x04, 0x00, 0x01, 0x02, 0x05, 0x00, 0x00, 0x00, 0x00}

// A STARTUP request on v5 with the beta flag, stream 1, whose body is the
// [string map] {"CQL_VERSION": "3.0.0"}.
var startupV5 = []byte{
	0x05, 0x10, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x16,
	0x00, 0x01,
	0x00, 0x0B, 'C', 'Q', 'L', '_', 'V', 'E', 'R', 'S', 'I', 'O', 'N',
	0x00, 0x05, '3', '.', '0', '.', '0',
}

func TestReadFrameHandBuilt(t *testing.T) {
	f, err := ReadFrame(bytes.NewReader(optionsV4), 1024)
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Version: Version4, Stream: 0x0102, Opcode: OpOptions}
	if diff := cmp.Diff(want, f.Header); diff != "" {
		t.Errorf("OPTIONS header (-want +got)\n%s", diff)
	}
	f, err = ReadFrame(bytes.NewReader(startupV5), 1024)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != Version5 || f.Flags != FlagBeta || f.Stream != 1 || f.Opcode != OpStartup || f.Length != 22 {
		t.Errorf("STARTUP header %+v", f.Header)
	}
	m, err := DecodeRequest(f)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}}, m); diff != "" {
		t.Errorf("STARTUP (-want +got)\n%s", diff)
	}
	// Written back, the bytes are the spec's.
	var buf bytes.Buffer
	if err := WriteFrame(&buf, Frame{Header: f.Header, Body: m.AppendBody(nil, Version5)}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), startupV5) {
		t.Errorf("written % x\nwant    % x", buf.Bytes(), startupV5)
	}
}

func TestResponseHeader(t *testing.T) {
	f := ResponseFrame(Version4, 7, &Ready{}, nil)
	got := AppendFrame(nil, f)
	want := []byte{0x84, 0x00, 0x00, 0x07, 0x02, 0, 0, 0, 0}
	if !bytes.Equal(got, want) {
		t.Errorf("READY % x, want % x", got, want)
	}
	ev := ResponseFrame(Version5, EventStream, &StatusChangeEvent{Change: "UP"}, nil)
	if b := AppendFrame(nil, ev); b[0] != 0x85 || b[2] != 0xFF || b[3] != 0xFF || b[4] != 0x0C {
		t.Errorf("EVENT header % x", b[:9])
	}
}

func TestReadFrameTooLarge(t *testing.T) {
	hdr := []byte{0x04, 0x00, 0x00, 0x03, 0x07, 0x00, 0x10, 0x00, 0x00} // 1 MiB body
	r := &countingReader{r: io.MultiReader(bytes.NewReader(hdr), infinite{})}
	_, err := ReadFrame(r, 4096)
	var tl *FrameTooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want *FrameTooLargeError", err)
	}
	if tl.Header.Length != 1<<20 || tl.Max != 4096 || tl.Header.Stream != 3 {
		t.Errorf("error %+v", tl)
	}
	if msg := err.Error(); !strings.Contains(msg, "1048576") || !strings.Contains(msg, "4096") {
		t.Errorf("message %q does not name both sizes", msg)
	}
	if r.n != HeaderLen {
		t.Errorf("read %d bytes, want only the header's %d", r.n, HeaderLen)
	}
}

func TestReadFrameUnsupportedVersion(t *testing.T) {
	cases := []struct {
		name   string
		in     []byte
		ver    byte
		stream int16
		reply  Version
	}{
		{"v3", []byte{0x03, 0x00, 0x00, 0x09, 0x05, 0, 0, 0, 0}, 3, 9, 3},
		{"v2 one-byte stream, only 4 bytes sent", []byte{0x02, 0x00, 0x05, 0x05}, 2, 5, 2},
		{"v1 negative stream", []byte{0x01, 0x00, 0xFF, 0x05}, 1, -1, 1},
		{"v6", []byte{0x06, 0x10, 0x01, 0x00, 0x01, 0, 0, 0, 0}, 6, 256, Version5},
		{"v65 as a response", []byte{0xC1, 0x00, 0x00, 0x02}, 0x41, 2, Version5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(c.in), 1024)
			var uv *UnsupportedVersionError
			if !errors.As(err, &uv) {
				t.Fatalf("err = %v", err)
			}
			if uv.Version != c.ver || uv.Stream != c.stream || uv.ReplyVersion() != c.reply {
				t.Errorf("got version %d stream %d reply %d", uv.Version, uv.Stream, uv.ReplyVersion())
			}
			msg := uv.ProtocolMessage()
			if !strings.HasPrefix(msg, "Invalid or unsupported protocol version") || !strings.Contains(msg, "4/v4, 5/v5") {
				t.Errorf("message %q", msg)
			}
		})
	}
}

func TestReadFrameTruncated(t *testing.T) {
	full := startupV5
	for n := range len(full) {
		_, err := ReadFrame(bytes.NewReader(full[:n]), 1024)
		want := io.ErrUnexpectedEOF
		if n == 0 {
			want = io.EOF
		}
		if !errors.Is(err, want) {
			t.Errorf("%d bytes: err = %v, want %v", n, err, want)
		}
	}
	neg := []byte{0x04, 0, 0, 0, 0x05, 0x80, 0, 0, 0}
	if _, err := ReadFrame(bytes.NewReader(neg), 1024); !errors.Is(err, ErrNegativeLength) {
		t.Errorf("negative length: err = %v", err)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// infinite is a reader of endless zeros.
type infinite struct{}

func (infinite) Read(p []byte) (int, error) { clear(p); return len(p), nil }
