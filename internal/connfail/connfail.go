package connfail

import (
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Kind is what a failed call says about the endpoint it went to.
type Kind int

const (
	// Answered: a gRPC server answered; the error is its answer.
	Answered Kind = iota
	// Refused: the connection was refused, nothing listens at the address.
	Refused
	// NotGRPC: an HTTP server answered instead of a gRPC one, most likely
	// a member's HTTP/JSON port given for its gRPC port.
	NotGRPC
	// Timeout: the connection, or the call, had no answer in time.
	Timeout
	// Failed: the connection failed for another reason (a TLS handshake,
	// whose reason then starts with TLSPrefix; a name that does not
	// resolve, a connection closed at once, ...).
	Failed
)

// The reasons Of gives for the kinds it recognises.
const (
	RefusedReason = "connection refused"
	NotGRPCReason = "this looks like the HTTP port, not gRPC"
	TimeoutReason = "timeout"
	// TLSPrefix starts the reason of a failed TLS handshake, followed by
	// TLSReason's few words: "TLS handshake: certificate signed by
	// unknown authority".
	TLSPrefix = "TLS handshake: "
)

// connPrefix starts the message of a call that failed for want of a
// connection (grpc-go's transport.ConnectionError, desc quoted).
const connPrefix = "connection error: desc = "

// Of tells what err, the error of a gRPC call (not nil), says about the
// endpoint, and why in a few words: one of the reasons above, the cause
// of another connection failure without gRPC's wrapping, or the message
// of a server's answer as it was sent.
func Of(err error) (Kind, string) {
	st := status.Convert(err)
	msg := st.Message()
	// An HTTP/2 server that is not gRPC (an HTTPS listener) answers with
	// its own content type, under any code.
	if strings.Contains(msg, "transport: received unexpected content-type") {
		return NotGRPC, NotGRPCReason
	}
	desc, isConn := connDesc(msg)
	switch {
	case !isConn && st.Code() == codes.DeadlineExceeded:
		return Timeout, TimeoutReason
	case !isConn:
		return Answered, msg
	case strings.Contains(desc, syscall.ECONNREFUSED.Error()):
		return Refused, RefusedReason
	case strings.Contains(desc, "looked like an HTTP/1"):
		// An HTTP/1 server answers the HTTP/2 preface with "HTTP/1.1 400",
		// which the HTTP/2 framer reads as a frame too large.
		return NotGRPC, NotGRPCReason
	case strings.Contains(desc, "i/o timeout") || strings.Contains(desc, "deadline exceeded"),
		// gRPC closes a connection whose HTTP/2 handshake is not done by
		// the connect deadline under the read of the server's preface.
		strings.Contains(desc, "server preface") && strings.Contains(desc, "use of closed network connection"):
		return Timeout, TimeoutReason
	}
	if why, ok := TLSReason(desc); ok {
		return Failed, TLSPrefix + why
	}
	desc = strings.TrimPrefix(desc, "transport: ")
	desc = strings.TrimPrefix(desc, "Error while dialing: ")
	return Failed, desc
}

// connDesc returns the description of a connection error's message, and
// whether msg is one.
func connDesc(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, connPrefix)
	if !ok {
		return "", false
	}
	if desc, err := strconv.Unquote(rest); err == nil {
		return desc, true
	}
	return rest, true
}

// TLSReason returns why a TLS handshake failed, in a few words, from the
// text of its error as crypto/tls words it, bare (a Go error of a
// handshake, either side) or inside gRPC's connection error; and false
// when text is not a TLS handshake's failure. What the other side
// answered is kept as it came ("remote error: tls: bad certificate": it
// refused this side's certificate); a certificate this side refused is
// the x509 reason without its wrapping ("certificate signed by unknown
// authority"); any other TLS error is crypto/tls's text without "tls: "
// ("client didn't provide a certificate", "first record does not look
// like a TLS handshake").
func TLSReason(text string) (string, bool) {
	if i := strings.Index(text, remoteTLS); i >= 0 {
		return text[i:], true
	}
	if i := strings.Index(text, "x509: "); i >= 0 {
		why := text[i+len("x509: "):]
		// The candidate chains tried say nothing an operator can act on.
		if j := strings.Index(why, " (possibly because of"); j > 0 {
			why = why[:j]
		}
		return why, true
	}
	if i := strings.Index(text, "tls: "); i >= 0 {
		return text[i+len("tls: "):], true
	}
	return "", false
}

// remoteTLS starts crypto/tls's text of an alert the other side sent.
const remoteTLS = "remote error: tls: "

// NotSent reports whether err, the error of a gRPC call (not nil), says
// that the call failed before its request left for a server: no
// connection was ready, because connecting failed (a connection error) or
// the call's context ended while it waited for one. Any other failure
// (the connection reset or closed during the call, the deadline while
// waiting for the answer) may have come after the server received the
// request.
func NotSent(err error) bool {
	msg := status.Convert(err).Message()
	if _, isConn := connDesc(msg); isConn {
		return true
	}
	// grpc-go's words for a call whose context ended while it waited for
	// a connection to become ready.
	return strings.Contains(msg, "while waiting for connections to become ready") ||
		strings.HasPrefix(msg, "latest balancer error: ")
}
