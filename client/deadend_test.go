package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// The tests below give calls a Timeout of an hour under a test context of
// 20 s: a call that ends with its context unfinished ended because of what
// the endpoints answered, not because time ran out.

func TestRefusedEndpointsAreLeftOutAndNamed(t *testing.T) {
	a, b := deadAddr(t), deadAddr(t)
	c := newTestClient(t, Config{Endpoints: []string{a, b}, Timeout: time.Hour, ConnectTimeout: 50 * time.Millisecond})
	ctx := testCtx(t)
	_, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
	if ctx.Err() != nil {
		t.Fatalf("GetSchema against endpoints where nothing listens ran until the test's deadline: %v", err)
	}
	want := a + ": connection refused; " + b + ": connection refused"
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != want {
		t.Errorf("GetSchema: %v, want Unavailable %q", err, want)
	}
}

// httpPort serves what the member's HTTP/JSON listener answers a path it
// does not know: over HTTP/1, or over HTTP/2 with TLS (whose CAs it
// returns).
func httpPort(t *testing.T, useTLS bool) (string, *x509.CertPool) {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"code":5,"message":"Not Found"}`))
	}))
	t.Cleanup(s.Close)
	if !useTLS {
		s.Start()
		return s.Listener.Addr().String(), nil
	}
	s.EnableHTTP2 = true
	s.StartTLS()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return s.Listener.Addr().String(), pool
}

func TestHTTPPortIsNamedAsSuch(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		addr, pool := httpPort(t, useTLS)
		cfg := Config{Endpoints: []string{addr}, Timeout: time.Hour}
		if useTLS {
			cfg.TLS = &tls.Config{RootCAs: pool}
		}
		c := newTestClient(t, cfg)
		ctx := testCtx(t)
		_, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
		if ctx.Err() != nil {
			t.Fatalf("TLS %v: GetSchema against an HTTP port ran until the test's deadline: %v", useTLS, err)
		}
		want := addr + ": this looks like the HTTP port, not gRPC"
		if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != want {
			t.Errorf("TLS %v: GetSchema: %v, want Unavailable %q", useTLS, err, want)
		}
	}
}

func TestHTTPPortFirstAndALiveEndpointSecond(t *testing.T) {
	addr, _ := httpPort(t, false)
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{addr, up.addr}, Timeout: time.Hour})
	if r, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); err != nil || r.Epoch != 7 {
		t.Fatalf("GetSchema: %v, %v; want the live endpoint's answer", r, err)
	}
}

// TestConnectionWithoutAnswerMovesOn: an endpoint that accepts connections
// and never speaks (a host that drops packets looks the same) holds each
// attempt for ConnectTimeout only, then the call moves on.
func TestConnectionWithoutAnswerMovesOn(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0") // the kernel accepts; nobody speaks
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	up := startFake(t, &fake{})
	c := newTestClient(t, Config{Endpoints: []string{lis.Addr().String(), up.addr}, Timeout: time.Hour, ConnectTimeout: 100 * time.Millisecond})
	if r, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); err != nil || r.Epoch != 7 {
		t.Fatalf("GetSchema: %v, %v; want the live endpoint's answer", r, err)
	}
	// Alone, it is tried until the deadline, and named.
	alone := newTestClient(t, Config{Endpoints: []string{lis.Addr().String()}, Timeout: 300 * time.Millisecond, ConnectTimeout: 100 * time.Millisecond})
	_, err = alone.GetSchema(context.Background(), &pb.GetSchemaRequest{})
	if want := lis.Addr().String() + ": timeout"; status.Code(err) != codes.Unavailable || status.Convert(err).Message() != want {
		t.Errorf("GetSchema: %v, want Unavailable %q", err, want)
	}
}

// TestUnavailableServerIsRetriedPastConnectTimeout: a member that answers
// Unavailable (no leader yet) is alive, and stays in the rounds however
// short ConnectTimeout is.
func TestUnavailableServerIsRetriedPastConnectTimeout(t *testing.T) {
	f := &fake{}
	f.unavailable.Store(4) // answered after rounds at 0, 100, 300 and 700 ms
	startFake(t, f)
	c := newTestClient(t, Config{Endpoints: []string{f.addr}, Timeout: time.Hour, ConnectTimeout: 10 * time.Millisecond})
	if r, err := c.GetSchema(testCtx(t), &pb.GetSchemaRequest{}); err != nil || r.Epoch != 7 {
		t.Fatalf("GetSchema: %v, %v; want the answer after the Unavailable ones", r, err)
	}
	if got := f.calls.Load(); got != 5 {
		t.Errorf("%d calls, want 5", got)
	}
}

// TestRefusedEndpointThatComesBack: a member restarting refuses
// connections for a moment; a call waits for it within ConnectTimeout.
func TestRefusedEndpointThatComesBack(t *testing.T) {
	addr := deadAddr(t)
	c := newTestClient(t, Config{Endpoints: []string{addr}, Timeout: time.Hour, ConnectTimeout: time.Minute})
	ctx := testCtx(t)
	type result struct {
		r   *pb.GetSchemaResponse
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := c.GetSchema(ctx, &pb.GetSchemaRequest{})
		done <- result{r, err}
	}()
	// Once the call has been refused, start the server on that address.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if cn := c.eps[0].conn.Load(); cn != nil && cn.cc.GetState() == connectivity.TransientFailure {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never tried the endpoint")
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer testkit.Start(t, &fake{}, testkit.At(addr)).Stop()
	if got := <-done; got.err != nil || got.r.Epoch != 7 {
		t.Fatalf("GetSchema: %v, %v; want the answer of the endpoint back", got.r, got.err)
	}
}
