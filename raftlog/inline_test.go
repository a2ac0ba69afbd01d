package raftlog

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// streamSink is a peer's log-stream listener reduced to its reading end:
// it reads the preface and the frames of every stream opened to it, and
// records the messages by stream, in order (the hello frame left out).
// Set stall before a stream opens and the sink reads nothing of the first
// stream, as a peer that stopped reading.
type streamSink struct {
	lis   net.Listener
	mu    sync.Mutex // guards streams and stall
	stall bool
	// streams are the messages received, one slice per accepted stream.
	streams [][]*raftpb.Message
	wg      sync.WaitGroup
}

func newStreamSink(t *testing.T) *streamSink {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &streamSink{lis: lis}
	s.wg.Go(s.accept)
	t.Cleanup(func() { lis.Close(); s.wg.Wait() })
	return s
}

func (s *streamSink) accept() {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for {
		c, err := s.lis.Accept()
		if err != nil {
			return
		}
		conns = append(conns, c)
		s.mu.Lock()
		i, stall := len(s.streams), s.stall && len(s.streams) == 0
		s.streams = append(s.streams, nil)
		s.mu.Unlock()
		if !stall {
			s.wg.Go(func() { s.read(c, i) })
		}
	}
}

// read records the messages of stream i until it ends or a frame is cut.
func (s *streamSink) read(c net.Conn, i int) {
	r := bufio.NewReader(c)
	if _, err := io.ReadFull(r, make([]byte, len(streamPreface))); err != nil {
		return
	}
	for first := true; ; first = false {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(b, m); err != nil || first {
			continue // the hello
		}
		s.mu.Lock()
		s.streams[i] = append(s.streams[i], m)
		s.mu.Unlock()
	}
}

// indexes returns the Index of every message of stream i.
func (s *streamSink) indexes(i int) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.streams) {
		return nil
	}
	var out []uint64
	for _, m := range s.streams[i] {
		out = append(out, m.GetIndex())
	}
	return out
}

// appendOf is an append from 1 to 2 at index, with an entry of size bytes.
func appendOf(index uint64, size int) *raftpb.Message {
	return &raftpb.Message{Type: raftpb.MsgApp.Enum(), From: new(uint64(1)), To: new(uint64(2)), Index: new(index),
		Entries: []*raftpb.Entry{{Index: new(index + 1), Data: make([]byte, size)}}}
}

// TestSendInline: once a peer's stream is open and its goroutine idle,
// Send writes a small message itself (nothing queued); a message too
// large for that goes through the goroutine, and what follows it waits
// its turn: the peer gets every message in the order sent.
func TestSendInline(t *testing.T) {
	sink := newStreamSink(t)
	tr := NewTransport(TransportConfig{ID: 1})
	defer tr.Stop()
	if err := tr.AddPeer(2, sink.lis.Addr().String()); err != nil {
		t.Fatal(err)
	}
	p := tr.peers[2]
	if !tr.Send([]*raftpb.Message{appendOf(1, 10)}) {
		t.Fatal("the first message, with no stream open yet, was not queued")
	}
	waitFor(t, "the first message", func() bool { return len(sink.indexes(0)) == 1 && p.pending.Load() == 0 })
	if tr.Send([]*raftpb.Message{appendOf(2, 10)}) {
		t.Fatal("a small message to an idle peer with its stream open was queued, not written inline")
	}
	if n := tr.sent.Load(); n != 2 {
		t.Fatalf("after the inline write: %d messages counted sent, want 2", n)
	}
	if !tr.Send([]*raftpb.Message{appendOf(3, inlineMaxBytes+1)}) {
		t.Fatal("a message larger than inlineMaxBytes was not queued")
	}
	for i := uint64(4); i < 40; i++ {
		tr.Send([]*raftpb.Message{appendOf(i, 10)})
	}
	waitFor(t, "39 messages", func() bool { return len(sink.indexes(0)) == 39 })
	for i, idx := range sink.indexes(0) {
		if idx != uint64(i+1) {
			t.Fatalf("message %d has index %d: out of order %v", i, idx, sink.indexes(0))
		}
	}
	if st := tr.Stats(); st.SendFailures != 0 || st.Dropped != 0 || st.Reconnects != 0 {
		t.Errorf("Stats() = %+v, want no failure", st)
	}
}

// TestSendInlineToAStalledPeer: a peer that stops reading lets its
// socket fill; the inline write that cannot finish gives up after
// inlineWriteTimeout, closes the stream and queues the message, and the
// peer's goroutine delivers it on a new stream. The node's goroutine is
// never held longer than that.
func TestSendInlineToAStalledPeer(t *testing.T) {
	sink := newStreamSink(t)
	sink.mu.Lock()
	sink.stall = true
	sink.mu.Unlock()
	tr := NewTransport(TransportConfig{ID: 1})
	defer tr.Stop()
	if err := tr.AddPeer(2, sink.lis.Addr().String()); err != nil {
		t.Fatal(err)
	}
	p := tr.peers[2]
	tr.Send([]*raftpb.Message{appendOf(0, 10)})
	waitFor(t, "the stream to open", func() bool {
		p.wmu.Lock()
		defer p.wmu.Unlock()
		return p.out != nil && p.pending.Load() == 0
	})
	// Fill the socket with inline writes until one cannot finish; loopback
	// buffers hold a few MiB at most.
	var last uint64
	for i := uint64(1); tr.Stats().SendFailures == 0; i++ {
		if i > 100000 {
			t.Fatal("100,000 inline writes of 32 KiB to a peer that reads nothing all finished")
		}
		tr.Send([]*raftpb.Message{appendOf(i, 32<<10)})
		last = i
	}
	waitFor(t, "the failed message on a new stream", func() bool {
		got := sink.indexes(1)
		return len(got) > 0 && got[0] == last
	})
	if st := tr.Stats(); st.SendFailures != 1 || st.Reconnects != 1 {
		t.Errorf("Stats() = %+v, want one failure and one reconnect", st)
	}
}
