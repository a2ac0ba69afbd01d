package raftlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// A frame's length is the peer's word, and a peer may lie: a frame is read
// into a buffer that grows as its bytes arrive (doubling, from
// frameFreeBytes), so that an announced length costs nothing until the
// bytes come, and at most twice what came. A frame longer than the limit
// ends the stream before anything is allocated for it. The buffers past
// frameFreeBytes are counted against a budget shared by every stream of a
// Transport, so that many streams together cannot hold more than it.
const (
	// frameFreeBytes is the buffer a stream reads frames into without
	// asking the budget: heartbeats, votes and small appends fit.
	frameFreeBytes = 64 << 10
	// frameKeepBytes is the largest buffer kept from one frame to the
	// next (with its share of the budget): an append of raft's default
	// MaxSizePerMsg (1 MiB) and its framing fits, so a follower catching
	// up does not allocate one per message. A larger buffer is given back
	// once its frame was handled.
	frameKeepBytes = 2 << 20
	// frameBodyTimeout bounds how long a frame that needs a larger buffer
	// may take to arrive once its length was read: a peer that announces
	// a frame and stops sending does not hold its buffer and budget. A
	// sender gives up a flush after streamWriteTimeout.
	frameBodyTimeout = 30 * time.Second
)

var (
	// errFrameTooLarge is a frame longer than the reader's limit: the
	// stream is closed.
	errFrameTooLarge = errors.New("raftlog: peer stream: message larger than this member accepts")
	// errFrameBudget is a frame whose buffer would take the frames of all
	// streams together past their budget: the stream is closed, and the
	// sender opens another and sends again.
	errFrameBudget = errors.New("raftlog: peer stream: too many bytes of messages held at once on all streams")
)

// frameReader reads the frames of one log stream: a uvarint length, then
// that many bytes. Its zero value with r set reads frames of up to
// defaultMaxMessageBytes without a budget or a deadline.
type frameReader struct {
	r *bufio.Reader
	// limit is the longest frame accepted; 0 means
	// defaultMaxMessageBytes.
	limit int
	// budget, if not nil, is shared with the other streams' readers:
	// every buffer byte past frameFreeBytes is taken from it while held.
	budget *frameBudget
	// deadline, if not nil, sets the connection's read deadline: a frame
	// longer than its buffer must arrive within frameBodyTimeout (the
	// zero time clears it).
	deadline func(time.Time) error
	// bodyTimeout overrides frameBodyTimeout when not zero (tests).
	bodyTimeout time.Duration

	buf  []byte // reused: a frame is valid until the next call
	held int    // bytes of buf taken from budget
}

// next returns the next frame's bytes, valid until the next call. An
// error ends the stream: the caller must not call next again (and must
// call release).
func (f *frameReader) next() ([]byte, error) {
	if cap(f.buf) > frameKeepBytes {
		f.drop()
	}
	size, err := binary.ReadUvarint(f.r)
	if err != nil {
		return nil, err
	}
	limit := f.limit
	if limit <= 0 {
		limit = defaultMaxMessageBytes
	}
	if size > uint64(limit) {
		return nil, fmt.Errorf("%w: %d bytes announced, at most %d accepted", errFrameTooLarge, size, limit)
	}
	n := int(size)
	switch {
	case n <= cap(f.buf):
		// The buffer of earlier frames holds it.
	case n <= frameFreeBytes:
		// Small: allocated at once (at most frameFreeBytes), growing
		// geometrically over the stream's frames.
		f.buf = make([]byte, 0, min(frameFreeBytes, max(n, 2*cap(f.buf), 512)))
	default:
		return f.grow(n)
	}
	return f.fill(f.buf, n)
}

// fill reads the n bytes of a frame into b, which has room for them. It
// sets no deadline: the buffer is at most frameKeepBytes, which the
// stream holds anyway, and a caller's deadline stays as it is.
func (f *frameReader) fill(b []byte, n int) ([]byte, error) {
	b = b[:n]
	if _, err := io.ReadFull(f.r, b); err != nil {
		return nil, fmt.Errorf("inside a message of %d bytes: %w", n, err)
	}
	return b, nil
}

// grow reads a frame of n bytes, more than the buffer holds, into a
// buffer that doubles as the bytes arrive, within the body deadline.
func (f *frameReader) grow(n int) ([]byte, error) {
	if err := f.setDeadline(); err != nil {
		return nil, err
	}
	b := f.buf[:0]
	for len(b) < n {
		if len(b) == cap(b) {
			next := min(n, max(2*cap(b), frameFreeBytes))
			if err := f.take(next); err != nil {
				return nil, err
			}
			nb := make([]byte, len(b), next)
			copy(nb, b)
			b, f.buf = nb, nb
		}
		k, err := io.ReadFull(f.r, b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err != nil {
			return nil, fmt.Errorf("inside a message of %d bytes, after %d: %w", n, len(b), err)
		}
	}
	return b, f.clearDeadline()
}

// take accounts for a buffer of size bytes replacing the current one.
func (f *frameReader) take(size int) error {
	want := 0
	if size > frameFreeBytes {
		want = size
	}
	if f.budget != nil && want > f.held && !f.budget.take(want-f.held) {
		return fmt.Errorf("%w (%d bytes)", errFrameBudget, f.budget.max)
	}
	if f.budget != nil && want < f.held {
		f.budget.give(f.held - want)
	}
	f.held = want
	return nil
}

// drop gives the buffer (and its share of the budget) back.
func (f *frameReader) drop() {
	if f.budget != nil && f.held > 0 {
		f.budget.give(f.held)
	}
	f.buf, f.held = nil, 0
}

// release ends the reader: its buffer's share of the budget is given
// back. It is called once, when the stream ends.
func (f *frameReader) release() {
	f.drop()
}

func (f *frameReader) setDeadline() error {
	if f.deadline == nil {
		return nil
	}
	d := f.bodyTimeout
	if d == 0 {
		d = frameBodyTimeout
	}
	return f.deadline(time.Now().Add(d))
}

func (f *frameReader) clearDeadline() error {
	if f.deadline == nil {
		return nil
	}
	return f.deadline(time.Time{})
}

// frameBudget is the bytes of frame buffers all the log streams of a
// Transport may hold past frameFreeBytes each. It is safe for concurrent
// use.
type frameBudget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes, and reports false (reserving nothing) when that
// would exceed max.
func (b *frameBudget) take(n int) bool {
	if b.used.Add(int64(n)) > b.max {
		b.used.Add(-int64(n))
		return false
	}
	return true
}

// give returns n bytes taken before.
func (b *frameBudget) give(n int) {
	b.used.Add(-int64(n))
}
