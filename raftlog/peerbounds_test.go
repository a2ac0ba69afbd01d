package raftlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// liveHeap is the heap in use after a collection: what is still held.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// uvarint is the length prefix of a frame of n bytes.
func uvarint(n uint64) []byte {
	return binary.AppendUvarint(nil, n)
}

// TestAnnouncedFramesRefusedBeforeAllocation: eight log streams from one
// host each announce a 60 MiB message and send none of it. The member
// closes every stream at once (60 MiB is past what it accepts), its heap
// does not grow by the announced sizes, and it says so in one WARN line
// for the host (the other seven at DEBUG).
func TestAnnouncedFramesRefusedBeforeAllocation(t *testing.T) {
	out := &lines{}
	tr := NewTransport(TransportConfig{ID: 1, Logger: out.logger()})
	defer tr.Stop()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ml := tr.Listen(lis)
	defer ml.Close()
	const streams, announced = 8, 60 << 20
	before := liveHeap()
	conns := make([]net.Conn, streams)
	for i := range conns {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(append([]byte(streamPreface), uvarint(announced)...)); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	deadline := time.Now().Add(10 * time.Second)
	for i, c := range conns {
		_ = c.SetReadDeadline(deadline)
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Errorf("stream %d announcing %d bytes was not closed: %v", i, announced, err)
		}
	}
	if grew := liveHeap() - before; grew > 16<<20 {
		t.Errorf("the heap grew by %d bytes for %d streams announcing %d bytes each", grew, streams, announced)
	}
	if n := out.count("level=WARN", "larger than this member accepts", "remote=127.0.0.1:"); n != 1 {
		t.Errorf("%d WARN lines for the refused streams of one host, want 1:\n%s", n, out.buf.String())
	}
	if n := out.count("level=DEBUG", "larger than this member accepts"); n != streams-1 {
		t.Errorf("%d DEBUG lines for the repeats, want %d", n, streams-1)
	}
}

// stallingReader gives data, then blocks the next Read (closing stalled)
// until release is closed, and then ends.
type stallingReader struct {
	data    []byte
	stalled chan struct{}
	release chan struct{}
	once    sync.Once
}

func newStallingReader(data []byte) *stallingReader {
	return &stallingReader{data: data, stalled: make(chan struct{}), release: make(chan struct{})}
}

func (r *stallingReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	r.once.Do(func() { close(r.stalled) })
	<-r.release
	return 0, io.EOF
}

// TestAnnouncedFrameCostsNothingUntilItArrives: frames announced under
// the limit (30 MiB each, on eight streams), whose bytes do not come, are
// not allocated: the readers wait for the bytes with a small buffer.
func TestAnnouncedFrameCostsNothingUntilItArrives(t *testing.T) {
	const streams, announced = 8, 30 << 20
	before := liveHeap()
	var wg sync.WaitGroup
	readers := make([]*stallingReader, streams)
	errs := make(chan error, streams)
	for i := range readers {
		sr := newStallingReader(uvarint(announced))
		readers[i] = sr
		// The zero value: the default limit, no budget.
		fr := &frameReader{r: bufio.NewReader(sr)}
		wg.Go(func() {
			_, err := fr.next()
			errs <- err
		})
	}
	for _, sr := range readers {
		select {
		case <-sr.stalled:
		case err := <-errs:
			t.Fatalf("a reader returned before the frame's bytes came: %v", err)
		case <-time.After(waitTimeout):
			t.Fatal("timed out waiting for the readers to wait for the bytes")
		}
	}
	grew := liveHeap() - before
	for _, sr := range readers {
		close(sr.release)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			t.Errorf("a stream cut inside a frame: %v, want an unexpected EOF", err)
		}
	}
	if grew > 16<<20 {
		t.Fatalf("the heap grew by %d bytes while %d streams announced %d bytes each and sent none", grew, streams, announced)
	}
}

// TestFrameReaderReadsWhatArrives: frames of every size class (none,
// small, kept, large, at the limit) come out whole, whatever pieces their
// bytes arrive in; one past the limit is refused without a buffer for
// it; the budget is all given back.
func TestFrameReaderReadsWhatArrives(t *testing.T) {
	const limit = 5 << 20
	budget := &frameBudget{max: 2 * limit}
	var stream bytes.Buffer
	var want [][]byte
	for i, n := range []int{0, 1, 300, frameFreeBytes, frameFreeBytes + 1, 1 << 20, frameKeepBytes + 7, 100, limit} {
		b := bytes.Repeat([]byte{byte(i + 1)}, n)
		want = append(want, b)
		stream.Write(uvarint(uint64(n)))
		stream.Write(b)
	}
	stream.Write(uvarint(limit + 1))
	stream.WriteString("refused")
	fr := &frameReader{r: bufio.NewReader(halfReader{&stream}), limit: limit, budget: budget}
	for i, w := range want {
		got, err := fr.next()
		if err != nil || !bytes.Equal(got, w) {
			t.Fatalf("frame %d (%d bytes): got %d bytes, %v", i, len(w), len(got), err)
		}
		if fr.held > 0 && cap(fr.buf) <= frameFreeBytes {
			t.Errorf("frame %d: %d bytes taken from the budget for a buffer of %d", i, fr.held, cap(fr.buf))
		}
		if used := budget.used.Load(); used != int64(fr.held) {
			t.Errorf("frame %d: budget used %d, the reader holds %d", i, used, fr.held)
		}
	}
	if _, err := fr.next(); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("a frame past the limit: %v, want errFrameTooLarge", err)
	}
	if cap(fr.buf) != 0 || fr.held != 0 {
		t.Errorf("a buffer of %d bytes (%d from the budget) for the refused frame", cap(fr.buf), fr.held)
	}
	fr.release()
	if used := budget.used.Load(); used != 0 {
		t.Errorf("budget used %d after release, want 0", used)
	}
}

// halfReader reads at most half of what is asked (and at least one
// byte), so that frames arrive in pieces.
type halfReader struct{ r io.Reader }

func (h halfReader) Read(p []byte) (int, error) {
	return h.r.Read(p[:max(1, len(p)/2)])
}

// TestFrameBudgetSharedByStreams: the streams of a transport together
// hold at most their budget in frame buffers: a stream whose frame would
// pass it is ended (errFrameBudget), and the budget comes back when the
// holder's stream ends.
func TestFrameBudgetSharedByStreams(t *testing.T) {
	const frame = 3 << 20
	budget := &frameBudget{max: 4 << 20}
	frameOf := func() io.Reader {
		return bytes.NewReader(append(uvarint(frame), make([]byte, frame)...))
	}
	a := &frameReader{r: bufio.NewReader(frameOf()), limit: 8 << 20, budget: budget}
	if _, err := a.next(); err != nil {
		t.Fatal(err)
	}
	b := &frameReader{r: bufio.NewReader(frameOf()), limit: 8 << 20, budget: budget}
	if _, err := b.next(); !errors.Is(err, errFrameBudget) {
		t.Fatalf("a second %d-byte frame with %d of %d bytes held: %v, want errFrameBudget", frame, budget.used.Load(), budget.max, err)
	}
	b.release()
	a.release()
	if used := budget.used.Load(); used != 0 {
		t.Fatalf("budget used %d after both streams ended, want 0", used)
	}
	c := &frameReader{r: bufio.NewReader(frameOf()), limit: 8 << 20, budget: budget}
	if _, err := c.next(); err != nil {
		t.Fatalf("a frame once the budget came back: %v", err)
	}
	c.release()
}

// TestFrameBodyDeadline: a peer that announces a large frame, sends part
// of it and stops is cut off by the body deadline, giving its buffer
// back.
func TestFrameBodyDeadline(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	go func() {
		_, _ = client.Write(append(uvarint(1<<20), make([]byte, 100<<10)...))
	}()
	budget := &frameBudget{max: 4 << 20}
	fr := &frameReader{r: bufio.NewReader(server), limit: 2 << 20, budget: budget, deadline: server.SetReadDeadline, bodyTimeout: 50 * time.Millisecond}
	if _, err := fr.next(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a frame whose bytes stopped coming: %v, want the deadline exceeded", err)
	}
	fr.release()
	if used := budget.used.Load(); used != 0 {
		t.Fatalf("budget used %d after the stream ended, want 0", used)
	}
}

// TestInboundStreamsBounded: past the bound on log streams open at once,
// a new one is closed at once (and said in a WARN line); once one ends,
// a new one is served again.
func TestInboundStreamsBounded(t *testing.T) {
	out := &lines{}
	tr := NewTransport(TransportConfig{ID: 1, Logger: out.logger()})
	defer tr.Stop()
	tr.bounds.maxStreams = 2
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ml := tr.Listen(lis)
	defer ml.Close()
	open := func() net.Conn {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte(streamPreface)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := open()
	open()
	waitFor(t, "two streams served", func() bool { return tr.bounds.streams.Load() == 2 })
	if !readsEOF(t, open(), 10*time.Second) {
		t.Fatal("a third stream past the bound of 2 was not closed")
	}
	if n := out.count("level=WARN", "too many log streams open"); n != 1 {
		t.Errorf("%d WARN lines for the refused stream, want 1", n)
	}
	first.Close()
	waitFor(t, "the first stream ended", func() bool { return tr.bounds.streams.Load() == 1 })
	c := open()
	waitFor(t, "a new stream served", func() bool { return tr.bounds.streams.Load() == 2 })
	if readsEOF(t, c, 50*time.Millisecond) {
		t.Error("a stream within the bound was closed")
	}
}
