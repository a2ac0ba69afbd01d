package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestPerConnectionLimit(t *testing.T) {
	l := &limits{maxInFlight: 2, secret: "gw"}
	ctx := context.WithValue(context.Background(), connKey{}, new(atomic.Int64))
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	handler := func(context.Context, any) (any, error) { entered <- struct{}{}; <-release; return nil, nil }
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := l.inFlightUnary(ctx, nil, &grpc.UnaryServerInfo{}, handler)
			done <- err
		}()
	}
	<-entered
	<-entered
	_, err := l.inFlightUnary(ctx, nil, &grpc.UnaryServerInfo{}, handler)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "max_concurrent_requests_per_connection") {
		t.Fatalf("third request: %v", err)
	}
	// The gateway's connection carries every HTTP request: exempt (HTTP
	// connections are limited on the HTTP side).
	gwCtx := metadata.NewIncomingContext(ctx, metadata.Pairs(mdGatewaySecret, "gw"))
	if _, err := l.inFlightUnary(gwCtx, nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, nil }); err != nil {
		t.Fatalf("gateway request: %v", err)
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.inFlightUnary(ctx, nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, nil }); err != nil {
		t.Fatalf("after the others ended: %v", err)
	}
}

func TestHTTPLimits(t *testing.T) {
	l := &limits{maxInFlight: 1}
	var got string
	h := l.httpLimits(8, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		if r.Header.Get("Grpc-Metadata-X-Metalog-Gateway-Secret") != "" {
			t.Error("forged gateway header reached the gateway")
		}
	}))
	for _, tc := range []struct {
		body    string
		chunked bool
		want    int
	}{
		{"12345678", false, http.StatusOK},
		{"123456789", false, http.StatusRequestEntityTooLarge},
		{"123456789", true, http.StatusRequestEntityTooLarge},
		{"1234", true, http.StatusOK},
	} {
		req := httptest.NewRequest("POST", "/v1/execute", strings.NewReader(tc.body))
		req.Header.Set("Grpc-Metadata-X-Metalog-Gateway-Secret", "forged")
		if tc.chunked {
			req.ContentLength = -1
		}
		req = req.WithContext(httpConnContext(req.Context(), nil))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tc.want {
			t.Errorf("%q chunked=%v: %d %s, want %d", tc.body, tc.chunked, w.Code, w.Body, tc.want)
		}
		if tc.want == http.StatusOK && got != tc.body {
			t.Errorf("handler read %q, want %q", got, tc.body)
		}
		if tc.want != http.StatusOK && !strings.Contains(w.Body.String(), `"code":8`) {
			t.Errorf("body %s: want the gateway's error form with code 8 (ResourceExhausted)", w.Body)
		}
	}

	// A second request in flight on the same connection.
	ctx := httpConnContext(context.Background(), nil)
	ctx.Value(httpConnKey{}).(*atomic.Int64).Add(1)
	req := httptest.NewRequest("GET", "/v1/schema", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("second concurrent request: %d %s", w.Code, w.Body)
	}
}

// TestGatewaySecretSentAllocs: telling a gateway request from another
// reads the one metadata key, on every request, without copying the
// request's whole metadata (which costs an allocation per key).
func TestGatewaySecretSentAllocs(t *testing.T) {
	md := metadata.Pairs(mdGatewaySecret, "s3cret", "authorization", "Bearer x", "user-agent", "grpc-go", "x-other", "1")
	ctx := metadata.NewIncomingContext(context.Background(), md)
	if !gatewaySecretSent(ctx, "s3cret") || gatewaySecretSent(ctx, "other") || gatewaySecretSent(context.Background(), "s3cret") {
		t.Fatal("gatewaySecretSent: want true for the secret sent only")
	}
	// The one allocation is the copy of the key's values.
	if allocs := testing.AllocsPerRun(100, func() { gatewaySecretSent(ctx, "s3cret") }); allocs > 1 {
		t.Errorf("gatewaySecretSent allocates %v times, want at most 1", allocs)
	}
}

// TestInFlightUnaryAllocs: counting a request on its connection costs no
// allocation (the limit gave back a closure per request before), and the
// count is back to zero when the request ends.
func TestInFlightUnaryAllocs(t *testing.T) {
	l := &limits{maxInFlight: 2, secret: "gw"}
	n := new(atomic.Int64)
	md := metadata.Pairs("authorization", "Bearer x", "user-agent", "grpc-go")
	ctx := context.WithValue(metadata.NewIncomingContext(context.Background(), md), connKey{}, n)
	info := &grpc.UnaryServerInfo{FullMethod: "/metalog.v1.MetadataService/Execute"}
	inside := int64(0)
	handler := func(context.Context, any) (any, error) { inside = n.Load(); return nil, nil }
	allocs := testing.AllocsPerRun(100, func() { _, _ = l.inFlightUnary(ctx, nil, info, handler) })
	if inside != 1 || n.Load() != 0 {
		t.Fatalf("in flight: %d inside the handler, %d after; want 1 and 0", inside, n.Load())
	}
	if allocs != 0 {
		t.Errorf("inFlightUnary allocates %v times, want 0", allocs)
	}
}
