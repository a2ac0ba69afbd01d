package client_test

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/metalog/metalog/client"
)

// TestRetryAfter: the delay of a refusal's RetryInfo, as a member sends it
// with its rate limit per identity; nothing for other errors.
func TestRetryAfter(t *testing.T) {
	st, err := status.New(codes.ResourceExhausted, "over the rate").WithDetails(
		&errdetails.ErrorInfo{Reason: "RATE_LIMITED", Domain: "metalog"},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(100 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := client.RetryAfter(st.Err()); !ok || d != 100*time.Second {
		t.Errorf("RetryAfter = %v, %v; want 100s", d, ok)
	}
	if d, ok := client.RetryAfter(status.Error(codes.ResourceExhausted, "too many statements")); ok {
		t.Errorf("RetryAfter of an error without RetryInfo = %v", d)
	}
	if _, ok := client.RetryAfter(nil); ok {
		t.Error("RetryAfter(nil) is ok")
	}
}
