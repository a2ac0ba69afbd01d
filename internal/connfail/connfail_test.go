package connfail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/internal/testkit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// listen returns a loopback listener closed when the test ends.
func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return lis
}

// grpcServer serves the health service, which answers NotFound for a
// service it does not know.
func grpcServer(t *testing.T) string {
	t.Helper()
	lis := listen(t)
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return lis.Addr().String()
}

// httpServer serves what a grpc-gateway mux answers for a path it does
// not know, over HTTP/1 or, with TLS, HTTP/2.
func httpServer(t *testing.T, useTLS bool) (addr string, pool *x509.CertPool) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"code":5,"message":"Not Found"}`))
	})
	s := httptest.NewUnstartedServer(h)
	if useTLS {
		s.EnableHTTP2 = true
		s.StartTLS()
		pool = x509.NewCertPool()
		pool.AddCert(s.Certificate())
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s.Listener.Addr().String(), pool
}

// call makes one health check on addr and returns its error.
func call(t *testing.T, addr string, creds credentials.TransportCredentials) error {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: 200 * time.Millisecond,
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: "nothing"})
	if err == nil {
		t.Fatalf("%s: the call succeeded", addr)
	}
	return err
}

// TestOfRealFailures makes each failure for real, so that a change in the
// words of grpc-go or x/net fails here.
func TestOfRealFailures(t *testing.T) {
	lis := listen(t)
	dead := lis.Addr().String()
	lis.Close()
	hung := listen(t).Addr().String() // accepts in the kernel, never speaks
	plainHTTP, _ := httpServer(t, false)
	tlsHTTP, pool := httpServer(t, true)
	live := grpcServer(t)
	plain := insecure.NewCredentials()
	for _, tc := range []struct {
		name  string
		addr  string
		creds credentials.TransportCredentials
		kind  Kind
		why   string // the reason, or a part of it for Failed
	}{
		{"nothing listens", dead, plain, Refused, RefusedReason},
		{"HTTP/1 port", plainHTTP, plain, NotGRPC, NotGRPCReason},
		{"HTTPS port (HTTP/2)", tlsHTTP, credentials.NewTLS(&tls.Config{RootCAs: pool}), NotGRPC, NotGRPCReason},
		{"no answer to the connection", hung, plain, Timeout, TimeoutReason},
		{"TLS to a plaintext server", live, credentials.NewTLS(&tls.Config{RootCAs: pool}), Failed, TLSPrefix + "first record does not look like a TLS handshake"},
		{"a server's answer", live, plain, Answered, "unknown service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := call(t, tc.addr, tc.creds)
			kind, why := Of(err)
			if kind != tc.kind || !strings.HasPrefix(why, tc.why) || (tc.kind != Failed && why != tc.why) {
				t.Errorf("Of(%v) = %d, %q; want %d, %q", err, kind, why, tc.kind, tc.why)
			}
		})
	}
}

func TestOfMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind Kind
		why  string
	}{
		{status.Error(codes.Unavailable, "raftlog: no leader"), Answered, "raftlog: no leader"},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), Timeout, TimeoutReason},
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp: lookup nowhere.invalid: no such host"`), Failed, "dial tcp: lookup nowhere.invalid: no such host"},
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 192.0.2.1:7070: i/o timeout"`), Timeout, TimeoutReason},
		{status.Error(codes.Unavailable, "connection error: desc = not quoted"), Failed, "not quoted"},
		{status.Error(codes.Unavailable, `connection error: desc = "error reading server preface: remote error: tls: certificate required"`), Failed, TLSPrefix + "remote error: tls: certificate required"},
		{status.Error(codes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`), Failed, TLSPrefix + "certificate signed by unknown authority"},
		{errors.New("not a status"), Answered, "not a status"},
	} {
		if kind, why := Of(tc.err); kind != tc.kind || why != tc.why {
			t.Errorf("Of(%v) = %d, %q; want %d, %q", tc.err, kind, why, tc.kind, tc.why)
		}
	}
}

// tlsServer serves the health service over TLS with cfg.
func tlsServer(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis := listen(t)
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	healthpb.RegisterHealthServer(s, health.NewServer())
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(lis) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return lis.Addr().String()
}

// TestOfTLSHandshakeFailures makes the TLS failures between members for
// real (mutual TLS as the peer port does it): each is Failed, with
// TLSPrefix and the reason in a few words. (A server that refuses the
// client's certificate is not among them: the client sees the server's
// alert or, as often, a broken pipe; TestOfMessages has the alert.)
func TestOfTLSHandshakeFailures(t *testing.T) {
	ca, foreign := testkit.NewCA(t, "test CA"), testkit.NewCA(t, "foreign CA")
	now := time.Now()
	mutual := tlsServer(t, ca.ServerTLS(ca.Issue(t, "member")))
	expired := tlsServer(t, &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, "member", testkit.Valid(now.Add(-3*time.Hour), now.Add(-2*time.Hour))).TLS}})
	own := ca.Issue(t, "member").TLS
	for _, tc := range []struct {
		name string
		addr string
		cfg  *tls.Config
		why  string
	}{
		{"server certificate of another CA", mutual, &tls.Config{RootCAs: foreign.Pool(), Certificates: []tls.Certificate{own}}, "certificate signed by unknown authority"},
		{"expired server certificate", expired, &tls.Config{RootCAs: ca.Pool()}, "certificate has expired or is not yet valid: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := call(t, tc.addr, credentials.NewTLS(tc.cfg))
			if kind, why := Of(err); kind != Failed || !strings.HasPrefix(why, TLSPrefix+tc.why) {
				t.Errorf("Of(%v) = %d, %q; want %d, %q", err, kind, why, Failed, TLSPrefix+tc.why)
			}
		})
	}
}

// TestTLSReason reads crypto/tls's own texts, as the raft log streams get
// them from a handshake on either side.
func TestTLSReason(t *testing.T) {
	for _, tc := range []struct {
		text, why string
		ok        bool
	}{
		{`tls: failed to verify certificate: x509: certificate signed by unknown authority (possibly because of "x509: ECDSA verification failure" while trying to verify candidate authority certificate "ca")`,
			"certificate signed by unknown authority", true},
		{"remote error: tls: bad certificate", "remote error: tls: bad certificate", true},
		{"tls: client didn't provide a certificate", "client didn't provide a certificate", true},
		{"tls: first record does not look like a TLS handshake", "first record does not look like a TLS handshake", true},
		{"tls: failed to verify certificate: x509: certificate is valid for 10.0.0.1, not 127.0.0.1", "certificate is valid for 10.0.0.1, not 127.0.0.1", true},
		{"EOF", "", false},
		{"read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer", "", false},
	} {
		if why, ok := TLSReason(tc.text); why != tc.why || ok != tc.ok {
			t.Errorf("TLSReason(%q) = %q, %v; want %q, %v", tc.text, why, ok, tc.why, tc.ok)
		}
	}
}
