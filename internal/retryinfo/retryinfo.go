// Package retryinfo reads and writes the google.rpc.RetryInfo detail of a
// gRPC status: how long the server asks a client to wait before sending a
// refused request again. The server (api) and the public client share it,
// so that both read the detail the same way.
package retryinfo

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// New returns the RetryInfo detail of a delay, for status.WithDetails.
func New(d time.Duration) *errdetails.RetryInfo {
	return &errdetails.RetryInfo{RetryDelay: durationpb.New(d)}
}

// Of returns the delay of err's RetryInfo detail; ok is false when err is
// nil, not a gRPC status error, or has no such detail.
func Of(err error) (d time.Duration, ok bool) {
	if err == nil {
		return 0, false
	}
	st, isStatus := status.FromError(err)
	if !isStatus {
		return 0, false
	}
	for _, detail := range st.Details() {
		if ri, isRetry := detail.(*errdetails.RetryInfo); isRetry && ri.GetRetryDelay() != nil {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}
