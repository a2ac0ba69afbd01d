package raftlog

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/metalog/metalog/internal/connfail"
)

// The log traffic (appends, heartbeats, votes and their responses) runs on
// a plain TCP connection per peer and direction, beside gRPC on the same
// peer port. The sending goroutine writes each batch to the connection
// itself and flushes it: no writer goroutine to hand the bytes to, and no
// wait before a small flush, which with gRPC put a goroutine hop and a
// scheduler yield in front of every append.
//
// A connection opens with streamPreface, then (with peer TLS) a TLS
// handshake, then carries frames: a uvarint length and a proto-marshalled
// raftpb.Message, the first of them a hello naming the dialer's cluster
// (streamid.go). It only carries data from the dialer to the listener; the
// listener closes it after the dialer's end of stream, once every message
// has been stepped.
const streamPreface = "MLRAFT1\n"

// streamRemoved is the first byte a listener writes back, before closing
// the stream, when it receives from a member it knows was removed; 8 bytes
// (big-endian) of the index of the removal and 1 byte, 1 if the listener
// leads, follow. The dialer then stops as removed
// (LocalNode.ReportRemoved). A listener of an earlier release writes the
// first byte only, and only when it leads. The only other answers
// are streamMismatch and streamForced (streamid.go).
const streamRemoved = 'R'

const (
	// prefaceTimeout bounds how long an accepted connection may take to
	// send its first bytes before it is handed to gRPC as it is.
	prefaceTimeout = 10 * time.Second
	// streamWriteTimeout bounds one flush to a peer that stopped reading.
	streamWriteTimeout = 10 * time.Second
	// streamDialTimeout bounds dialing and the TLS handshake.
	streamDialTimeout = 5 * time.Second
)

// Listen returns the listener the caller's gRPC server (Register) must
// serve: connections on l that open with the log stream's preface are
// served by the transport, all others are returned by its Accept. Closing
// it closes l.
func (t *Transport) Listen(l net.Listener) net.Listener {
	m := &muxListener{Listener: l, t: t, conns: make(chan net.Conn), done: make(chan struct{}), failed: make(chan struct{}),
		routing: make(map[net.Conn]struct{})}
	go m.run()
	return m
}

// muxListener splits a peer listener between the log stream and gRPC.
type muxListener struct {
	net.Listener
	t         *Transport
	conns     chan net.Conn // for gRPC
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	failed    chan struct{} // closed when run stops; err says why
	err       error

	mu      sync.Mutex            // guards routing
	routing map[net.Conn]struct{} // connections whose preface is awaited; Close closes them
}

func (m *muxListener) run() {
	defer close(m.failed)
	for {
		c, err := m.Listener.Accept()
		if err != nil {
			m.err = err
			return
		}
		go m.route(c)
	}
}

// route reads the first bytes of c: the stream's preface goes to the
// transport, anything else (or nothing within prefaceTimeout) to gRPC with
// those bytes put back.
func (m *muxListener) route(c net.Conn) {
	m.mu.Lock()
	select {
	case <-m.done:
		m.mu.Unlock()
		c.Close()
		return
	default:
	}
	m.routing[c] = struct{}{}
	m.mu.Unlock()
	buf := make([]byte, len(streamPreface))
	_ = c.SetReadDeadline(time.Now().Add(prefaceTimeout))
	n, _ := io.ReadFull(c, buf)
	_ = c.SetReadDeadline(time.Time{})
	m.mu.Lock()
	delete(m.routing, c)
	m.mu.Unlock()
	if n == len(buf) && string(buf) == streamPreface {
		m.t.serveStream(c)
		return
	}
	select {
	case m.conns <- &prefixConn{Conn: c, prefix: bytes.NewReader(buf[:n])}:
	case <-m.done:
		c.Close()
	}
}

// Accept returns the next connection for gRPC.
func (m *muxListener) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	case <-m.failed:
		return nil, m.err
	}
}

// Close closes the underlying listener.
func (m *muxListener) Close() error {
	err := net.ErrClosed
	m.closeOnce.Do(func() {
		m.mu.Lock()
		close(m.done)
		for c := range m.routing {
			c.Close()
		}
		m.mu.Unlock()
		err = m.Listener.Close()
	})
	return err
}

// prefixConn is a connection whose first bytes were already read.
type prefixConn struct {
	net.Conn
	prefix *bytes.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if c.prefix.Len() > 0 {
		return c.prefix.Read(p)
	}
	return c.Conn.Read(p)
}

// serveStream steps every message that arrives on c until it ends, then
// closes it. It runs on the connection's own goroutine.
func (t *Transport) serveStream(c net.Conn) {
	defer c.Close()
	if !t.trackStream(c, true) {
		return
	}
	defer t.trackStream(c, false)
	if !t.bounds.admitStream(c) {
		return
	}
	defer t.bounds.leaveStream()
	remote := c.RemoteAddr().String()
	// Who the stream comes from (peerauth.go): with peer TLS the member
	// its certificate identifies, before a byte of the stream is read.
	from := streamPeer{certified: t.cfg.Gate == nil}
	if t.cfg.ServerTLS != nil {
		tc := tls.Server(c, t.cfg.ServerTLS)
		_ = c.SetDeadline(time.Now().Add(streamDialTimeout))
		if err := tc.Handshake(); err != nil {
			t.cfg.HandshakeLog.accepted(remote, err)
			return
		}
		_ = c.SetDeadline(time.Time{})
		id, err := t.cfg.Gate.certMember(tc.ConnectionState(), remote)
		if err != nil {
			return
		}
		from = streamPeer{id: id, certified: true}
		c = tc
	}
	fr := t.bounds.frameReader(c)
	defer fr.release()
	for first := true; ; first = false {
		b, err := fr.next()
		if err != nil {
			t.bounds.streamEnded(c, err)
			return
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(b, m); err != nil {
			t.log.Debug("peer stream: undecodable message; connection closed", "remote", remote, "err", err)
			return
		}
		cluster, hello := helloCluster(m)
		hello = hello && first
		switch {
		case first && from.id != 0 && !t.cfg.Gate.sentBy(&from, m, remote):
			return // a certificate's stream sent as another member
		case hello && (t.local() == nil || t.refuseStream(c, fr, m.GetFrom(), cluster, from.certified)):
			// Without a node yet, the hello cannot be checked: the dialer
			// opens the stream again later.
			return
		case first && !t.cfg.Gate.bindStream(t.local(), &from, m, remote), !t.cfg.Gate.sentBy(&from, m, remote):
			return
		case hello:
			continue
		}
		removed, err := t.receive(t.ctx, m)
		if err != nil {
			t.log.Debug("peer stream: message refused; connection closed", "remote", c.RemoteAddr().String(), "err", err)
			return
		}
		if removed.at != 0 {
			tellRemoved(t.log, c, m.GetFrom(), removed)
			return
		}
	}
}

// tellRemoved answers the stream c of member from, removed at r.at, that
// it was removed (streamRemoved); the caller closes c.
func tellRemoved(log *slog.Logger, c net.Conn, from uint64, r removedAnswer) {
	log.Warn("a member removed from the cluster is still sending; told it so", "member", memberID(from), "removed_at", r.at,
		"remote", c.RemoteAddr().String())
	b := binary.BigEndian.AppendUint64([]byte{streamRemoved}, r.at)
	if r.leader {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	_ = c.SetWriteDeadline(time.Now().Add(streamDialTimeout))
	_, _ = c.Write(b)
}

// trackStream adds (or removes) an accepted stream connection to those
// Stop closes and waits for (t.wg); it reports false when the transport is
// already stopped.
func (t *Transport) trackStream(c net.Conn, add bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !add {
		delete(t.streams, c)
		t.wg.Done()
		return true
	}
	if t.stopped {
		return false
	}
	t.streams[c] = struct{}{}
	t.wg.Add(1)
	return true
}

// streamConn is the sending end of a log stream to one peer, owned by the
// peer's goroutine.
type streamConn struct {
	c    net.Conn
	w    *bufio.Writer
	stop func() bool // ends the close-on-cancel watch
	hdr  [binary.MaxVarintLen64]byte
}

// dialStream opens a log stream to member to at addr; canceling ctx closes
// it.
func (t *Transport) dialStream(ctx context.Context, to uint64, addr string) (*streamConn, error) {
	dctx, cancel := context.WithTimeout(ctx, streamDialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte(streamPreface)); err != nil {
		c.Close()
		return nil, err
	}
	if t.cfg.TLS != nil {
		cfg := t.cfg.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			c.Close()
			t.cfg.HandshakeLog.Dialed(addr, to, err)
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		// The peer there must be the member this stream is for.
		if _, err := t.cfg.Gate.dialedMember(tc.ConnectionState(), to, addr); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	sc := &streamConn{c: c, w: bufio.NewWriterSize(c, 64<<10)}
	var cluster uint64
	if n := t.local(); n != nil {
		cluster = n.ClusterID()
	}
	// The hello leaves with the first batch, in its write.
	sc.writeFrame(hello(t.cfg.ID, to, cluster))
	sc.stop = context.AfterFunc(ctx, func() { c.Close() })
	t.wg.Add(1)
	go t.watchStream(c, to, addr)
	return sc, nil
}

// watchStream reads the only things a listener of member from, at addr,
// ever sends back on a log stream: that this member was removed from the
// cluster, that the listener belongs to another cluster, or that the
// listener's log was forced from this member's cluster into a new one. It
// ends when the stream is closed.
func (t *Transport) watchStream(c net.Conn, from uint64, addr string) {
	defer t.wg.Done()
	var b [1 + forcingSize]byte
	if n, err := c.Read(b[:1]); n != 1 {
		// With TLS 1.3 a listener refuses this member's certificate after
		// the handshake looked complete here: its alert is read here.
		if err != nil {
			if _, isTLS := connfail.TLSReason(err.Error()); isTLS {
				t.cfg.HandshakeLog.Dialed(addr, from, err)
			}
		}
		return
	}
	switch b[0] {
	case streamForced:
		if _, err := io.ReadFull(c, b[1:]); err == nil {
			f, _ := decodeForcing(b[1:])
			toldForced(t.local(), t.log, from, f)
		}
	case streamRemoved:
		// A listener of an earlier release writes nothing more: it leads,
		// and the index is unknown.
		at, leader := uint64(0), true
		if _, err := io.ReadFull(c, b[1:10]); err == nil {
			at, leader = binary.BigEndian.Uint64(b[1:9]), b[9] == 1
		}
		if n := t.local(); n != nil {
			n.ReportRemoved(from, at, leader)
		}
	case streamMismatch:
		if _, err := io.ReadFull(c, b[1:9]); err == nil {
			t.refusedStream(from, addr, binary.BigEndian.Uint64(b[1:9]))
		}
	}
}

// writeFrame buffers one frame.
func (s *streamConn) writeFrame(b []byte) {
	n := binary.PutUvarint(s.hdr[:], uint64(len(b)))
	s.w.Write(s.hdr[:n])
	s.w.Write(b)
}

// send writes msgs and flushes them.
func (s *streamConn) send(msgs [][]byte) error {
	for _, b := range msgs {
		s.writeFrame(b)
	}
	_ = s.c.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	return s.w.Flush()
}

// close ends the stream. With drain it first ends the sending direction
// and waits, at most until ctx ends, for the peer to close: it closes only
// after it has stepped everything sent.
func (s *streamConn) close(ctx context.Context, drain bool) {
	defer s.c.Close()
	defer s.stop()
	if !drain {
		return
	}
	type closeWriter interface{ CloseWrite() error }
	if cw, ok := s.c.(closeWriter); ok {
		if err := cw.CloseWrite(); err != nil {
			return
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = s.c.SetReadDeadline(dl)
	}
	_, _ = io.Copy(io.Discard, s.c)
}

// marshalMessage marshals m for the stream; raft's messages always marshal.
func marshalMessage(m *raftpb.Message, to uint64) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("raftlog: marshal %v to %d: %v", m.GetType(), to, err))
	}
	return b
}
