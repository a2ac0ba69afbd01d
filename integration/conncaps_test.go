package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// waitClosed reads conn until the server closes it (EOF or a reset), and
// fails the test if it is still open after limit.
func waitClosed(t *testing.T, conn net.Conn, limit time.Duration, what string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s: still open after %v", what, limit)
	}
}

// rawHTTP writes req on conn and reads the answer's status and body.
func rawHTTP(conn net.Conn, br *bufio.Reader, req string) (int, string, error) {
	if _, err := io.WriteString(conn, req); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestFloodIdleAndSlowConnectionsClosed: with idle_timeout 300ms and
// request_read_timeout 1s on a member with TLS and tokens, an idle HTTP
// keep-alive connection, an idle HTTP/2 connection, an idle gRPC
// connection (GOAWAY) and a gRPC connection that never handshakes are
// closed; a request body from a caller without a token is answered 401
// before a byte of it is read; one that trickles in is answered 408; and
// watch streams over HTTP and gRPC outlive both timeouts.
func TestFloodIdleAndSlowConnectionsClosed(t *testing.T) {
	s, ca := securedServer(t, "--idle-timeout", "300ms", "--request-read-timeout", "1s", "--watch-progress-interval", "100ms")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const limit = 20 * time.Second
	dialHTTPS := func(proto string) (*tls.Conn, *bufio.Reader) {
		cfg := ca.tlsConfig("")
		cfg.NextProtos = []string{proto}
		c, err := tls.Dial("tcp", s.httpAddr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(limit)) // no read or write waits longer
		return c, bufio.NewReader(c)
	}

	keepAlive, br := dialHTTPS("http/1.1")
	if code, body, err := rawHTTP(keepAlive, br, "GET /healthz HTTP/1.1\r\nHost: metalog\r\n\r\n"); err != nil || code != http.StatusOK {
		t.Fatalf("GET /healthz: %d %s %v", code, body, err)
	}
	waitClosed(t, keepAlive, limit, "an idle HTTP keep-alive connection")

	h2, _ := dialHTTPS("h2")
	// The client preface and an empty SETTINGS frame, then nothing.
	if _, err := io.WriteString(h2, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, h2, limit, "an idle HTTP/2 connection")

	nobody, br := dialHTTPS("http/1.1")
	if code, body, err := rawHTTP(nobody, br, "POST /v1/execute HTTP/1.1\r\nHost: metalog\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"); err != nil ||
		code != http.StatusUnauthorized || !strings.Contains(body, "authentication required") {
		t.Errorf("a body without a token: %d %s %v, want 401 before the body", code, body, err)
	}

	slow, br := dialHTTPS("http/1.1")
	if _, err := io.WriteString(slow, "POST /v1/execute HTTP/1.1\r\nHost: metalog\r\nAuthorization: Bearer ci-token\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	trickled := make(chan struct{})
	go func() { // a byte every 100ms, until the server closes the connection
		defer close(trickled)
		for range 300 {
			time.Sleep(100 * time.Millisecond)
			if _, err := slow.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	slow.SetReadDeadline(time.Now().Add(limit))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a body trickling in: %v %v, want 408", resp, err)
	} else if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "request_read_timeout") {
		t.Errorf("408 body %s, want request_read_timeout named", b)
	}
	slow.Close()
	<-trickled

	tlsCreds := grpc.WithTransportCredentials(credentials.NewTLS(ca.tlsConfig("")))
	idle, err := grpc.NewClient(s.grpcAddr, tlsCreds, grpc.WithPerRPCCredentials(bearerToken("reader-token")))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := pb.NewMetadataServiceClient(idle).ListMembers(ctx, &pb.ListMembersRequest{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, limit, "the server to close an idle gRPC connection", func() error {
		if st := idle.GetState(); st == connectivity.Ready {
			return fmt.Errorf("still %v", st)
		}
		return nil
	})
	mute, err := net.Dial("tcp", s.grpcAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	waitClosed(t, mute, limit, "a gRPC connection that never handshakes")

	checkWatchesOutliveTimeouts(t, ctx, s, ca)
}

// checkWatchesOutliveTimeouts reads 20 progress messages (100ms apart)
// from a watch over HTTP and one over gRPC: both stay open past
// idle_timeout and request_read_timeout.
func checkWatchesOutliveTimeouts(t *testing.T, ctx context.Context, s *server, ca *pki) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: ca.tlsConfig("")}}
	defer hc.CloseIdleConnections()
	a := httpSend(ctx, hc, "GET", "https://"+s.httpAddr+"/v1/watch", "reader-token", "")
	if a.err != nil || a.resp == nil {
		t.Fatalf("HTTP watch: %d %s %v", a.status, a.body, a.err)
	}
	defer a.resp.Body.Close()
	sc := bufio.NewScanner(a.resp.Body)
	for i := range 20 {
		if !sc.Scan() {
			t.Fatalf("HTTP watch ended after %d messages: %v", i, sc.Err())
		}
	}
	conn, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(ca.tlsConfig(""))), grpc.WithPerRPCCredentials(bearerToken("reader-token")))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := pb.NewMetadataServiceClient(conn).Watch(ctx, &pb.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("gRPC watch ended after %d messages: %v", i, err)
		}
	}
}

// dialFrom connects to addr from the loopback address src (127.0.0.2,
// ...): the caps count by source address.
func dialFrom(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// answersHealthz reports whether conn (a new HTTP connection) answers GET
// /healthz: false when the server closed it unanswered.
func answersHealthz(conn net.Conn) bool {
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	code, _, err := rawHTTP(conn, bufio.NewReader(conn), "GET /healthz HTTP/1.1\r\nHost: metalog\r\n\r\n")
	return err == nil && code == http.StatusOK
}

// TestFloodConnectionCaps: with max_connections_per_source 4, a fifth
// connection from 127.0.0.2 to the HTTP or the gRPC listener is closed
// unanswered while the first four are served and 127.0.0.3 still
// connects; a connection closed makes room again. With max_connections 8,
// once eight are open to the gRPC listener a client from 127.0.0.1 is
// refused too, and served again once one closes. /metrics counts the
// refusals by cap.
func TestFloodConnectionCaps(t *testing.T) {
	s := newServer(t)
	s.start("--max-connections-per-source", "4", "--max-connections", "8", "--request-read-timeout", "1m")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	hold := func(src, addr string) net.Conn {
		c, err := dialFrom(src, addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		return c
	}
	// HTTP. (The test's own keep-alive connection from start may still
	// be open: the checks leave room for it under max_connections.)
	for range 4 {
		hold("127.0.0.2", s.httpAddr)
	}
	if answersHealthz(hold("127.0.0.2", s.httpAddr)) {
		t.Errorf("a fifth HTTP connection from 127.0.0.2 was answered, want it closed")
	}
	if !answersHealthz(held[0]) {
		t.Errorf("the first connection from 127.0.0.2 was not answered")
	}
	if !answersHealthz(hold("127.0.0.3", s.httpAddr)) {
		t.Errorf("a connection from 127.0.0.3 was not answered")
	}
	held[1].Close()
	waitFor(t, 20*time.Second, "room for a connection from 127.0.0.2 once one closed", func() error {
		if !answersHealthz(hold("127.0.0.2", s.httpAddr)) {
			return errors.New("closed unanswered")
		}
		return nil
	})
	for _, c := range held {
		c.Close()
	}
	held = nil

	// gRPC: four connections from 127.0.0.2 and four from 127.0.0.3 fill
	// it; then clients from 127.0.0.2 and 127.0.0.1 are refused.
	for range 4 {
		hold("127.0.0.2", s.grpcAddr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	refused := func(src string) error {
		c, err := grpc.NewClient(s.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dialFrom(src, addr) }))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		short, stop := context.WithTimeout(ctx, 2*time.Second)
		defer stop()
		_, err = pb.NewMetadataServiceClient(c).ListMembers(short, &pb.ListMembersRequest{})
		return err
	}
	if refused("127.0.0.2") == nil {
		t.Errorf("a fifth gRPC connection from 127.0.0.2 was served")
	}
	for range 4 {
		hold("127.0.0.3", s.grpcAddr)
	}
	if refused("127.0.0.1") == nil {
		t.Errorf("a ninth gRPC connection was served, want it closed (max_connections 8)")
	}
	held[0].Close()
	waitFor(t, 20*time.Second, "room for a gRPC client from 127.0.0.1 once one closed", func() error { return refused("127.0.0.1") })

	var body string
	waitFor(t, 20*time.Second, "/metrics", func() error {
		resp, err := http.Get("http://" + s.httpAddr + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err
	})
	for _, series := range []string{
		`metalog_connections_refused_total{listener="http",reason="max_connections_per_source"}`,
		`metalog_connections_refused_total{listener="grpc",reason="max_connections_per_source"}`,
		`metalog_connections_refused_total{listener="grpc",reason="max_connections"}`,
	} {
		if v, ok := metricValue(body, series); !ok || v < 1 {
			t.Errorf("%s = %v (%v), want at least 1", series, v, ok)
		}
	}
}
