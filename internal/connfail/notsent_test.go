package connfail

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// stuckHealth is a health service whose Check waits until its caller
// gives up, telling entered when a call reached it.
type stuckHealth struct {
	healthpb.UnimplementedHealthServer
	entered chan struct{}
}

func (h *stuckHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.entered <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestNotSentRealFailures makes each failure for real: those before a
// connection was ready say the request was not sent; a connection lost
// during the call, or a deadline while waiting for the answer, do not.
func TestNotSentRealFailures(t *testing.T) {
	lis := listen(t)
	dead := lis.Addr().String()
	lis.Close()
	hung := listen(t).Addr().String()
	plainHTTP, _ := httpServer(t, false)
	live := grpcServer(t)
	plain := insecure.NewCredentials()
	for _, tc := range []struct {
		name string
		addr string
		sent bool
	}{
		{"nothing listens", dead, false},
		{"HTTP/1 port", plainHTTP, false},
		{"no answer to the connection", hung, false},
		{"a server's answer", live, true},
	} {
		if err := call(t, tc.addr, plain); NotSent(err) == tc.sent {
			t.Errorf("%s: NotSent(%v) = %v", tc.name, err, !tc.sent)
		}
	}

	t.Run("deadline while waiting for a connection", func(t *testing.T) {
		cc, err := grpc.NewClient(hung, grpc.WithTransportCredentials(plain),
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: time.Minute}))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err = healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		if !NotSent(err) {
			t.Errorf("NotSent(%v) = false", err)
		}
	})

	lost := listen(t)
	h := &stuckHealth{entered: make(chan struct{}, 2)}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, h)
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(lost) }()
	defer func() { s.Stop(); <-done }()
	cc, err := grpc.NewClient(lost.Addr().String(), grpc.WithTransportCredentials(plain))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	t.Run("deadline while waiting for the answer", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		<-h.entered
		if err == nil || NotSent(err) {
			t.Errorf("NotSent(%v) = true", err)
		}
	})
	t.Run("connection lost during the call", func(t *testing.T) {
		errc := make(chan error, 1)
		go func() {
			_, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{})
			errc <- err
		}()
		<-h.entered
		s.Stop() // closes the connection under the call
		if err := <-errc; err == nil || NotSent(err) {
			t.Errorf("NotSent(%v) = true", err)
		}
	})
}
