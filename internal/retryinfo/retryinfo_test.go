package retryinfo

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestOf(t *testing.T) {
	st, err := status.New(codes.ResourceExhausted, "over the rate").WithDetails(
		&errdetails.ErrorInfo{Reason: "RATE_LIMITED", Domain: "metalog"}, New(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration
		ok   bool
	}{
		{"with", st.Err(), 1500 * time.Millisecond, true},
		{"wrapped", fmt.Errorf("exec: %w", st.Err()), 1500 * time.Millisecond, true},
		{"without", status.Error(codes.ResourceExhausted, "too many"), 0, false},
		{"not a status", errors.New("plain"), 0, false},
		{"nil", nil, 0, false},
	} {
		if d, ok := Of(tc.err); d != tc.want || ok != tc.ok {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, d, ok, tc.want, tc.ok)
		}
	}
}
