package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStreamLimits: an identity past max_watch_streams_per_identity is
// refused with ResourceExhausted, the member past max_watch_streams with
// Unavailable, both with TOO_MANY_STREAMS (counted as too_many_streams);
// an ended stream makes room, and methods that are not long streams are
// not counted.
func TestStreamLimits(t *testing.T) {
	l := newStreamLimits(3, 2)
	const watch = "/metalog.v1.MetadataService/Watch"
	for _, id := range []string{"token:a", "token:a", "token:b"} {
		if err := l.acquire(watch, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	err := l.acquire(watch, "token:a")
	if status.Code(err) != codes.ResourceExhausted || errorInfoReason(err) != reasonTooManyStreams ||
		!strings.Contains(err.Error(), "Watch: token:a has 2 streams") || !strings.Contains(err.Error(), "max_watch_streams_per_identity") {
		t.Errorf("third stream of token:a: %v", err)
	}
	if refusalReason(err) != refusedTooManyStreams {
		t.Errorf("counted as %q", refusalReason(err))
	}
	err = l.acquire("/metalog.v1.MetadataService/SaveSnapshot", "token:c")
	if status.Code(err) != codes.Unavailable || errorInfoReason(err) != reasonTooManyStreams || !strings.Contains(err.Error(), "max_watch_streams;") {
		t.Errorf("fourth stream of the member: %v", err)
	}
	if refusalReason(err) != refusedTooManyStreams {
		t.Errorf("counted as %q", refusalReason(err))
	}
	l.release("token:a")
	if err := l.acquire(watch, "token:c"); err != nil {
		t.Errorf("after a release: %v", err)
	}
	l.release("token:a")
	l.release("token:b")
	l.release("token:c")
	if l.open != 0 || len(l.byIdentity) != 0 {
		t.Errorf("after every release: %d open, %v", l.open, l.byIdentity)
	}

	// The interceptor: reflection is not counted, a watch is while it runs.
	l = newStreamLimits(1, 1)
	ran := 0
	handler := func(any, grpc.ServerStream) error { ran++; return nil }
	ss := &identifiedStream{ctx: context.Background()}
	for range 2 {
		if err := l.stream(nil, ss, &grpc.StreamServerInfo{FullMethod: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"}, handler); err != nil {
			t.Fatal(err)
		}
	}
	inner := func(any, grpc.ServerStream) error {
		return l.stream(nil, ss, &grpc.StreamServerInfo{FullMethod: watch}, handler)
	}
	if err := l.stream(nil, ss, &grpc.StreamServerInfo{FullMethod: watch}, inner); status.Code(err) != codes.ResourceExhausted || ran != 2 {
		t.Errorf("a second anonymous watch while one runs: %v (handlers run %d), want ResourceExhausted", err, ran)
	}
	if err := l.stream(nil, ss, &grpc.StreamServerInfo{FullMethod: watch}, handler); err != nil || ran != 3 {
		t.Errorf("a watch once the other ended: %v", err)
	}
}

// TestPipeListener: a dial is accepted; after Close, Accept ends with
// net.ErrClosed and a dial fails.
func TestPipeListener(t *testing.T) {
	l := newPipeListener()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	client, err := l.dial(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	server := <-got
	go client.Write([]byte("x"))
	b := make([]byte, 1)
	if _, err := server.Read(b); err != nil || b[0] != 'x' {
		t.Errorf("read %q %v", b, err)
	}
	client.Close()
	server.Close()
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
	if _, err := l.dial(context.Background(), ""); !errors.Is(err, errGatewayClosed) {
		t.Errorf("dial after Close: %v", err)
	}
}

// TestGuardHTTP: with auth on, a body from nobody is answered 401 without
// being read; a body that does not arrive within request_read_timeout is
// answered 408; one that arrives in time is read, and a handler still
// running past the deadline (a watch) is not cancelled.
func TestGuardHTTP(t *testing.T) {
	cfg := testOptions()
	cfg.RequestReadTimeout = 200 * time.Millisecond
	auth := newAuthenticator(AuthOptions{Enabled: true, Tokens: newTestTokens(t, "ci "+HashToken("ci-token")+" ddl\n")})
	svc, _ := newTestService(&fakeMember{})
	lim := &limits{maxInFlight: 4, refused: svc.metrics.refuse}
	reached := make(chan string, 4)
	srv := &http.Server{Handler: lim.httpLimits(1<<20, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		// A stream answered after the body (a watch) outlives the
		// deadline: the request is not cancelled past it.
		select {
		case <-r.Context().Done():
			reached <- "cancelled after the body was read"
		case <-time.After(4 * cfg.RequestReadTimeout):
			reached <- string(b)
		}
		w.Write([]byte("done"))
	})), ConnContext: httpConnContext}
	guardHTTP(srv, &cfg, auth, svc.metrics)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Close()
	send := func(head, body string) (string, net.Conn) {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, head+body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b), c
	}
	post := "POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n"
	if got, c := send(post+"\r\n", "{"); !strings.HasPrefix(got, "401") || !strings.Contains(got, "authentication required") {
		t.Errorf("nobody: %s", got)
	} else {
		c.Close()
	}
	if got, c := send(post+"Authorization: Bearer ci-token\r\n\r\n", "{"); !strings.HasPrefix(got, "408") || !strings.Contains(got, "request_read_timeout") {
		t.Errorf("a body cut short: %s", got)
	} else {
		c.Close()
	}
	if got, c := send(post+"Authorization: Bearer ci-token\r\n\r\n", "0123456789"); got != "200 OK done" {
		t.Errorf("a whole body: %s", got)
	} else {
		c.Close()
	}
	if b := <-reached; b != "0123456789" {
		t.Errorf("the handler read %q", b)
	}
}
