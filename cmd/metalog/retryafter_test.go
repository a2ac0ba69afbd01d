package main

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/internal/retryinfo"
)

// TestDescribeErrRetryAfter: a refusal with a RetryInfo prints its delay,
// once: the server's message says it already, or the CLI adds it.
func TestDescribeErrRetryAfter(t *testing.T) {
	withRetry := func(msg string) error {
		st, err := status.New(codes.ResourceExhausted, msg).WithDetails(retryinfo.New(1500 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{withRetry("execute: token:ci is over its rate of schema changes (...); nothing was applied: retry after 1.5s"),
			"ResourceExhausted: execute: token:ci is over its rate of schema changes (...); nothing was applied: retry after 1.5s"},
		{withRetry("over the rate"), "ResourceExhausted: over the rate (retry after 1.5s)"},
		{status.Error(codes.ResourceExhausted, "too many statements"), "ResourceExhausted: too many statements"},
	} {
		if got := describeErr(tc.err).Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
