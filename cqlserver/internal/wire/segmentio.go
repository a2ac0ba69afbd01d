package wire

import (
	"fmt"
	"io"
)

// SegmentReader reads frames (envelopes) from a v5 connection after the
// STARTUP exchange, where they travel inside segments: several whole
// envelopes in one self-contained segment, or one large envelope spread
// over segments that are not self-contained.
//
// A SegmentReader is for one goroutine.
type SegmentReader struct {
	r          io.Reader
	compressed bool
	maxBody    int
	pending    []byte // what is left of the last self-contained payload
}

// NewSegmentReader returns a reader of the segments on r, lz4-compressed
// if compressed, refusing envelopes whose body exceeds maxBody.
func NewSegmentReader(r io.Reader, compressed bool, maxBody int) *SegmentReader {
	return &SegmentReader{r: r, compressed: compressed, maxBody: maxBody}
}

// ReadFrame returns the next envelope. Its body aliases the segment's
// payload, which the reader does not reuse.
func (s *SegmentReader) ReadFrame() (Frame, error) {
	for len(s.pending) == 0 {
		seg, err := ReadSegment(s.r, s.compressed)
		if err != nil {
			return Frame{}, err
		}
		if !seg.SelfContained {
			return s.readLarge(seg.Payload)
		}
		s.pending = seg.Payload
	}
	h, err := s.header(s.pending)
	if err != nil {
		s.pending = nil
		return Frame{}, err
	}
	end := HeaderLen + h.Length
	if end > len(s.pending) {
		n := len(s.pending)
		s.pending = nil
		return Frame{}, fmt.Errorf("%w: envelope of %d bytes crosses the end of a self-contained segment of %d remaining bytes",
			ErrSegment, end, n)
	}
	f := Frame{Header: h, Body: s.pending[HeaderLen:end:end]}
	s.pending = s.pending[end:]
	return f, nil
}

// header parses the envelope header at the start of b and checks its
// length against the limit.
func (s *SegmentReader) header(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("%w: %d bytes cannot hold an envelope header", ErrSegment, len(b))
	}
	h, err := ParseHeader(b)
	if err != nil {
		return Header{}, err
	}
	if h.Length > s.maxBody {
		return Header{}, &FrameTooLargeError{Header: h, Max: s.maxBody}
	}
	return h, nil
}

// readLarge assembles an envelope that starts in first and continues in
// the segments after it, none of them self-contained.
func (s *SegmentReader) readLarge(first []byte) (Frame, error) {
	h, err := s.header(first)
	if err != nil {
		return Frame{}, err
	}
	total := HeaderLen + h.Length
	if len(first) > total {
		return Frame{}, fmt.Errorf("%w: segment of %d bytes is not self-contained but holds an envelope of %d",
			ErrSegment, len(first), total)
	}
	// The buffer grows as segments arrive, not to the header's claim.
	buf := append([]byte(nil), first...)
	for len(buf) < total {
		seg, err := ReadSegment(s.r, s.compressed)
		if err != nil {
			return Frame{}, noEOF(err)
		}
		if seg.SelfContained || len(buf)+len(seg.Payload) > total {
			return Frame{}, fmt.Errorf("%w: envelope of %d bytes has %d, then a segment of %d bytes (self-contained %v)",
				ErrSegment, total, len(buf), len(seg.Payload), seg.SelfContained)
		}
		buf = append(buf, seg.Payload...)
	}
	return Frame{Header: h, Body: buf[HeaderLen:]}, nil
}

// SegmentWriter writes frames (envelopes) to a v5 connection after the
// STARTUP exchange: the frames of one WriteFrames call share
// self-contained segments where they fit, and a frame too large for one
// segment is split over several that are not self-contained.
//
// A SegmentWriter is for one goroutine.
type SegmentWriter struct {
	w          io.Writer
	compress   bool
	maxPayload int    // MaxSegmentPayload but in tests
	out        []byte // the segments of the current call, reused
	batch      []byte // the self-contained payload being filled, reused
}

// NewSegmentWriter returns a writer of segments to w, lz4-compressed if
// compress.
func NewSegmentWriter(w io.Writer, compress bool) *SegmentWriter {
	return &SegmentWriter{w: w, compress: compress, maxPayload: MaxSegmentPayload}
}

// WriteFrames writes frames in order, in one Write.
func (s *SegmentWriter) WriteFrames(frames ...Frame) error {
	s.out, s.batch = s.out[:0], s.batch[:0]
	for _, f := range frames {
		n := HeaderLen + len(f.Body)
		if len(s.batch)+n > s.maxPayload {
			s.flush()
		}
		if n <= s.maxPayload {
			s.batch = AppendFrame(s.batch, f)
			continue
		}
		s.split(AppendFrame(nil, f))
	}
	s.flush()
	_, err := s.w.Write(s.out)
	return err
}

// flush turns the batch into one self-contained segment.
func (s *SegmentWriter) flush() {
	if len(s.batch) == 0 {
		return
	}
	s.out = AppendSegment(s.out, Segment{Payload: s.batch, SelfContained: true}, s.compress)
	s.batch = s.batch[:0]
}

// split writes one encoded envelope over segments that are not
// self-contained.
func (s *SegmentWriter) split(env []byte) {
	for len(env) > 0 {
		n := min(len(env), s.maxPayload)
		s.out = AppendSegment(s.out, Segment{Payload: env[:n]}, s.compress)
		env = env[n:]
	}
}
