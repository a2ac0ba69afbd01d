// Package connfail reads what the error of a failed gRPC call says about the
// endpoint it went to, and words it in a few words for the user.
//
// It tells nothing listening, an HTTP server where gRPC was expected, no
// answer in time and a failed TLS handshake from a gRPC server's own answer
// (Of, TLSReason), and whether a call failed before its request left
// (NotSent). One reading serves the client, which gives up early on an
// endpoint that cannot answer, and the members, which say why a peer is
// unreachable; what to do about an endpoint is the caller's.
//
//	kind, why := connfail.Of(err)
//	// kind == connfail.Refused, why == "connection refused"
//
// gRPC reports a failed connection only as the text of an Unavailable
// status, so this reading depends on the words of grpc-go, golang.org/x/net
// and crypto/tls; its tests make the failures for real and fail when those
// words change.
package connfail
