// Package connfail reads what the error of a failed gRPC call says about
// the endpoint it went to: nothing listens there, an HTTP server answered
// where gRPC was expected, no answer in time, a TLS handshake that failed
// (TLSReason, which also reads crypto/tls's own errors), or a gRPC
// server's own answer; and words it in a few words for the user, without
// gRPC's transport wrapping. The client uses it to give up early on an endpoint
// that cannot answer, and cluster status to show why a member is
// unreachable; one reading for both.
//
//	kind, why := connfail.Of(err)
//	// kind == connfail.Refused, why == "connection refused"
//
// gRPC reports a failed connection only as text in an Unavailable status,
// so this reading depends on the words of grpc-go and golang.org/x/net;
// its tests make the failures for real and fail when those words change.
// It owns that reading only: what to do about an endpoint is the caller's.
package connfail
