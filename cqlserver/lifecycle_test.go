package cqlserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// blockingWriter's Execute says it started on started, then waits for
// release (or its context) and fails.
type blockingWriter struct {
	started, release chan struct{}
}

func newBlockingWriter() *blockingWriter {
	return &blockingWriter{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (w *blockingWriter) Execute(ctx context.Context, _ member.Request) (metadata.Outcome, error) {
	w.started <- struct{}{}
	select {
	case <-w.release:
		return metadata.Outcome{}, errors.New("released")
	case <-ctx.Done():
		return metadata.Outcome{}, ctx.Err()
	}
}

// waitStarted waits, with a deadline, for an Execute to start.
func (w *blockingWriter) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-w.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the writer")
	}
}

// serveWith serves a Server of cfg (over an empty schema) and returns it
// with a started client.
func serveWith(t *testing.T, cfg cqlserver.Config) (*cqlserver.Server, *client) {
	t.Helper()
	cfg.Reader = &fakeReader{}
	srv := cqlserver.New(cfg)
	addr := serve(t, srv)
	nc, err := net.DialTimeout("tcp", addr.String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &client{t: t, nc: nc, v: wire.Version4}
	c.started()
	return srv, c
}

// waitClosed reads c until the server closes it, with a deadline, and
// fails on any frame.
func waitClosed(t *testing.T, c *client) {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := wire.ReadFrame(c.nc, 1<<20)
	if err == nil {
		t.Fatalf("got %v on stream %d, want the connection closed", f.Opcode, f.Stream)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the connection was not closed")
		}
	}
}

// TestIdleTimeout checks that a connection without a request is closed
// after the idle timeout, and that one with a request pending or
// registered for events is not, though idle longer.
func TestIdleTimeout(t *testing.T) {
	w := newBlockingWriter()
	_, registered := serveWith(t, cqlserver.Config{Writer: w, IdleTimeout: 20 * time.Millisecond})
	registered.send(2, &wire.Register{Events: []string{wire.EventStatusChange}})
	if f := registered.recv(); f.Opcode != wire.OpReady {
		t.Fatalf("REGISTER answered with %v", f.Opcode)
	}
	busy := dial(t, registered)
	busy.send(2, &wire.Query{Query: "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
	w.waitStarted(t)

	// Idle since after the other two were last active.
	waitClosed(t, dial(t, registered))

	registered.send(3, &wire.Options{})
	if f := registered.recv(); f.Opcode != wire.OpSupported {
		t.Fatalf("the registered connection answered OPTIONS with %v", f.Opcode)
	}
	close(w.release)
	if f := busy.recv(); f.Stream != 2 {
		t.Fatalf("the pending request was answered on stream %d", f.Stream)
	}
	// Answered, it is idle in its turn.
	waitClosed(t, busy)
}

// TestShutdownDrains checks that Shutdown stops accepting, answers the
// request in flight, then closes its connection and returns.
func TestShutdownDrains(t *testing.T) {
	w := newBlockingWriter()
	srv, c := serveWith(t, cqlserver.Config{Writer: w})
	addr := c.nc.RemoteAddr().String()
	c.send(2, &wire.Query{Query: "DROP KEYSPACE k"})
	w.waitStarted(t)

	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			break // no longer accepting
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}

	close(w.release)
	f := c.recv()
	if r := decode(t, f); f.Opcode != wire.OpError || f.Stream != 2 || r.message == "" {
		t.Fatalf("the request in flight was answered with %v on stream %d", f.Opcode, f.Stream)
	}
	waitClosed(t, c)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
}

// TestShutdownBounded checks that a drain whose context ends closes the
// connections under their requests, which are cancelled, and returns the
// context's error.
func TestShutdownBounded(t *testing.T) {
	w := newBlockingWriter()
	srv, c := serveWith(t, cqlserver.Config{Writer: w})
	c.send(2, &wire.Query{Query: "DROP KEYSPACE k"})
	w.waitStarted(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown returned %v, want the context's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return when its context ended")
	}
	// The answer of the cancelled request may or may not have gone out.
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, err := wire.ReadFrame(c.nc, 1<<20); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the connection was not closed")
			}
			break
		}
	}
}
