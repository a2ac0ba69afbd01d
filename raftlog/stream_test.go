package raftlog

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// readsEOF reports whether the server closes c within limit (reading
// discards anything it sends).
func readsEOF(t *testing.T, c net.Conn, limit time.Duration) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// TestStreamListenerRouting checks the peer port's split between the log
// stream and gRPC: a connection that says nothing does not hold up the
// others, one that is neither goes to gRPC (which closes it), a message
// over the frame limit ends its stream, and the cluster keeps committing
// through all of it (its snapshots-free traffic is on the stream, its
// gRPC server still answers).
func TestStreamListenerRouting(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := startGRPCCluster(t, all...)
	c.waitLeader(all...)
	addr := c.node(1).addr
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	silent := dial() // sends nothing: routed after prefaceTimeout at the earliest

	garbage := dial()
	if _, err := garbage.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if !readsEOF(t, garbage, 10*time.Second) {
		t.Error("a connection that is neither a log stream nor gRPC was not closed")
	}

	huge := dial()
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], defaultMaxMessageBytes+1)
	if _, err := huge.Write(append([]byte(streamPreface), hdr[:n]...)); err != nil {
		t.Fatal(err)
	}
	if !readsEOF(t, huge, 10*time.Second) {
		t.Error("a stream announcing a message over the limit was not closed")
	}

	ctx := testContext(t)
	for i := range 5 {
		if _, err := c.node(1).node.Propose(ctx, fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatalf("Propose with a silent connection open: %v", err)
		}
	}
	c.waitApplied(5, all...)
	c.checkSame(all...)
	if readsEOF(t, silent, 50*time.Millisecond) {
		t.Error("the silent connection was closed before its preface timeout")
	}
}

// TestStreamClosedByStop checks that Stop closes the log streams peers
// opened to the transport.
func TestStreamClosedByStop(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTransport(TransportConfig{ID: 1, Logger: testLogger()})
	ml := tr.Listen(lis)
	defer ml.Close()
	conn, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(streamPreface)); err != nil {
		t.Fatal(err)
	}
	// Wait until the transport tracks the stream, then stop it.
	waitOne(t, "the stream served", &tr.mu, func() int { return len(tr.streams) })
	tr.Stop()
	if !readsEOF(t, conn, 10*time.Second) {
		t.Error("Stop left an accepted log stream open")
	}
	// Closing the listener closes a connection still awaited for its
	// preface (well before prefaceTimeout), and Accept fails after.
	silent, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	m := ml.(*muxListener)
	waitOne(t, "the silent connection accepted", &m.mu, func() int { return len(m.routing) })
	ml.Close()
	if !readsEOF(t, silent, prefaceTimeout/2) {
		t.Error("closing the listener left a connection awaiting its preface open")
	}
	if _, err := ml.Accept(); err == nil {
		t.Error("Accept on a closed listener returned a connection")
	}
}

// waitOne polls count, under mu, until it is 1 (bounded).
func waitOne(t *testing.T, what string, mu *sync.Mutex, count func() int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := count()
		mu.Unlock()
		if n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
