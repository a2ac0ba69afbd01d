package cqlserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// pending is one response, handed to the writer once its frame is known.
type pending struct {
	frame wire.Frame
	// segments, when set, switches the writer to v5 segments after this
	// frame (READY of a v5 STARTUP), compressed or not.
	segments, compress bool
	// last closes the connection after this frame.
	last bool
	// silent writes no frame: the connection ended without an answer.
	silent bool
	// events starts the writer on the connection's EVENT frames after
	// this frame (READY of a REGISTER).
	events bool
}

// ready returns a pending response whose frame is known.
func ready(f wire.Frame) *pending { return &pending{frame: f} }

// conn is one client connection. The reader goroutine owns the session
// state (version, started, compress, keyspace); the writer goroutine owns
// the output framing; queue carries the responses to the writer as they
// are known: the reader's own in request order, each DDL's from its
// goroutine when it is done (ddls counts those goroutines), so that an
// answer a driver waits for is not held behind another client's DDL on
// the same connection (the stream ids match them up). slots bounds the
// requests pending: the reader takes one before it handles a request, the
// writer gives it back once the response is written (or dropped). events
// carries the EVENT frames of the connection's feed (events.go) to the
// writer; ctx ends when the writer does, or the server closes.
type conn struct {
	srv    *Server
	nc     net.Conn
	br     *bufio.Reader
	queue  chan *pending
	slots  chan struct{}
	events chan wire.Frame
	ctx    context.Context
	cancel context.CancelFunc
	ddls   sync.WaitGroup // the DDL goroutines of the connection

	// Owned by the reader goroutine.
	version  wire.Version // 0 until the first frame
	started  bool         // STARTUP answered
	compress bool         // lz4 negotiated
	segments *wire.SegmentReader
	keyspace string // USE
	watching bool   // the feed is started
	session  session

	node nodeRegistration // the node events registered for (topology.go)
	life lifeState        // the idle timeout and the drain (lifecycle.go)
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	return &conn{srv: s, nc: nc, br: bufio.NewReader(nc), queue: make(chan *pending, s.cfg.MaxInFlight),
		slots: make(chan struct{}, s.cfg.MaxInFlight), events: make(chan wire.Frame, eventBacklog),
		ctx: ctx, cancel: cancel}
}

// readLoop reads requests until the connection fails or a fatal error is
// answered, queueing one response per request (a DDL's from its own
// goroutine); the queue is closed once every DDL has queued its answer.
func (c *conn) readLoop() {
	defer c.srv.wg.Done()
	defer func() { c.ddls.Wait(); close(c.queue) }()
	for {
		f, err := c.readFrame()
		c.life.touch()
		c.slots <- struct{}{} // the writer frees one per response
		if err != nil {
			p := c.fatal(err)
			if p == nil {
				p = &pending{last: true, silent: true}
			}
			c.queue <- p
			return
		}
		p := c.handle(f)
		if p == nil {
			continue // a DDL, answered from its goroutine
		}
		c.queue <- p
		if p.last {
			return
		}
	}
}

// readFrame reads the next request frame in the connection's framing,
// decompressed.
func (c *conn) readFrame() (wire.Frame, error) {
	max := c.srv.cfg.MaxFrameBytes
	if c.segments != nil {
		return c.segments.ReadFrame()
	}
	f, err := wire.ReadFrame(c.br, max)
	if err != nil {
		return f, err
	}
	if c.started && c.compress && f.Version == wire.Version4 {
		return f.Decompress(max)
	}
	return f, nil
}

// fatal returns the last response to a read error, nil when there is
// nothing to answer (the connection ended or failed).
func (c *conn) fatal(err error) *pending {
	if c.life.draining.Load() {
		return nil
	}
	var tooLarge *wire.FrameTooLargeError
	var version *wire.UnsupportedVersionError
	var f wire.Frame
	switch {
	case errors.As(err, &version):
		f = wire.ResponseFrame(version.ReplyVersion(), version.Stream,
			&wire.Error{Code: wire.CodeProtocol, Message: version.ProtocolMessage()}, nil)
	case errors.As(err, &tooLarge):
		f = wire.ResponseFrame(c.replyVersion(tooLarge.Header.Version), tooLarge.Header.Stream,
			&wire.Error{Code: wire.CodeProtocol, Message: err.Error()}, nil)
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		return nil
	default:
		c.srv.cfg.Logger.Warn("cql connection: bad frame", "remote", c.nc.RemoteAddr().String(), "err", err)
		f = wire.ResponseFrame(c.replyVersion(0), 0, &wire.Error{Code: wire.CodeProtocol, Message: err.Error()}, nil)
	}
	p := ready(f)
	p.last = true
	return p
}

// replyVersion is the version to answer in: the connection's, or v if
// none yet and v is spoken, or v4.
func (c *conn) replyVersion(v wire.Version) wire.Version {
	switch {
	case c.version != 0:
		return c.version
	case v.Supported():
		return v
	}
	return wire.Version4
}

// writeLoop writes the responses in the order they are queued until the
// reader closes the queue; it then closes the connection and ends its
// context. Once a pending response with events set is written it also
// writes the EVENT frames the feed queues, between the responses. Frames
// are buffered and sent when nothing more is queued, so that answers
// ready together leave in one write. After a write error it keeps
// draining, so that the reader and the requests running never block on
// it.
func (c *conn) writeLoop() {
	defer c.srv.wg.Done()
	defer c.srv.forget(c)
	defer c.cancel()
	defer c.nc.Close()
	defer c.life.stop()
	w := frameWriter{nc: c.nc, buf: bufio.NewWriterSize(c.nc, writeBuffer)}
	var events chan wire.Frame // nil until the feed is on
	for {
		select {
		case p, ok := <-c.queue:
			if !ok {
				w.flush()
				return
			}
			c.life.touch()
			<-c.slots
			if w.broken || p.silent {
				continue
			}
			w.write(p.frame)
			switch {
			case p.last:
				w.flush()
				w.broken = true
				c.nc.Close()
			case p.segments:
				w.segw = wire.NewSegmentWriter(w.buf, p.compress)
			case p.compress:
				w.compress = true
			}
			if p.events {
				events = c.events
			}
		case f := <-events:
			w.write(f)
		}
		if len(c.queue) == 0 && len(events) == 0 {
			w.flush()
		}
	}
}

// writeBuffer is the size of a connection's output buffer.
const writeBuffer = 32 << 10

// frameWriter is the writer goroutine's output framing: frames, lz4
// compressed v4 frames, or v5 segments, buffered in buf until flushed.
type frameWriter struct {
	nc       net.Conn
	buf      *bufio.Writer
	segw     *wire.SegmentWriter
	compress bool
	broken   bool // a write failed: the connection is closed
}

// write buffers f in the framing; a failure closes the connection and
// sets broken.
func (w *frameWriter) write(f wire.Frame) {
	if w.broken {
		return
	}
	var err error
	if w.segw != nil {
		err = w.segw.WriteFrames(f)
	} else {
		if w.compress && f.Version == wire.Version4 {
			f = f.Compress()
		}
		err = wire.WriteFrame(w.buf, f)
	}
	w.fail(err)
}

// flush sends what is buffered.
func (w *frameWriter) flush() {
	if !w.broken {
		w.fail(w.buf.Flush())
	}
}

func (w *frameWriter) fail(err error) {
	if err != nil {
		w.broken = true
		w.nc.Close()
	}
}
