package peerrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/raftlog"
)

// ErrPrecondition is matched (errors.Is) by the errors of a call refused
// because the member (or the cluster) is not in the state the call needs:
// a repair asked of another member than the one named, a member whose
// log could not be applied. The peer service answers it with
// FailedPrecondition, and a peer's FailedPrecondition answer read by Call
// matches it. Package member gives it its own name (member.ErrPrecondition).
var ErrPrecondition = errors.New("member: precondition failed")

// ErrUnreachable is matched (errors.Is) by the error of a call that did
// not reach the peer, or that the peer could not serve (Unavailable).
var ErrUnreachable = errors.New("member: peer unreachable")

// Error is a peer's answer to a call that failed, read from its gRPC
// status. Its message is the peer's; errors.Is matches its kind:
// ErrUnreachable (Unavailable), ErrPrecondition (FailedPrecondition),
// raftlog.ErrNotMember (PermissionDenied: the peer does not take this
// member for one of its cluster), context.DeadlineExceeded or
// context.Canceled; any other answer matches none of them. It keeps the
// status whole (GRPCStatus), so that a member relaying a peer's answer to
// its own client relays its code, message and details unchanged.
type Error struct {
	st   *status.Status
	kind error
}

// Error is the peer's message.
func (e *Error) Error() string { return e.st.Message() }

// Is matches the kind of the answer.
func (e *Error) Is(target error) bool { return e.kind != nil && target == e.kind }

// GRPCStatus is the status the peer answered with.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// kinds are the kinds of the answers read from a peer, by code.
var kinds = map[codes.Code]error{
	codes.Unavailable:        ErrUnreachable,
	codes.FailedPrecondition: ErrPrecondition,
	codes.PermissionDenied:   raftlog.ErrNotMember,
	codes.DeadlineExceeded:   context.DeadlineExceeded,
	codes.Canceled:           context.Canceled,
}

// fromStatus reads the error of a call into an *Error.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	return &Error{st: st, kind: kinds[st.Code()]}
}

// unreachable is the *Error of a call that could not be made to addr.
func unreachable(addr string, err error) error {
	return &Error{st: status.Newf(codes.Unavailable, "peer address %s: %v", addr, err), kind: ErrUnreachable}
}

// Unimplemented reports whether err is the answer of a gRPC server
// without the service called (Unimplemented), and its message: a member
// asked at a port that serves other services.
func Unimplemented(err error) (string, bool) {
	st := status.Convert(err)
	return st.Message(), st.Code() == codes.Unimplemented
}

// CallerError refuses a peer call of a member of another cluster:
// Foreign is the caller's cluster when this member was forced from it
// (Forcing set) or when it is just another cluster. The peer service
// answers it with raftlog's statuses (raftlog.ForcedStatus,
// raftlog.MismatchStatus), which the caller reads with raftlog.ForcingOf
// and raftlog.MismatchOf.
type CallerError struct {
	// Local is this member's cluster id.
	Local uint64
	// Forcing is set when this member was forced from the caller's
	// cluster: the caller must stop.
	Forcing *raftlog.Forcing
	// Msg says both clusters and what to do.
	Msg string
}

// Error is the message the caller reads.
func (e *CallerError) Error() string { return e.Msg }

// Unwrap is raftlog.ErrClusterMismatch.
func (e *CallerError) Unwrap() error { return raftlog.ErrClusterMismatch }

// status is the answer to a refused caller.
func (e *CallerError) status() error {
	if e.Forcing != nil {
		return raftlog.ForcedStatus(*e.Forcing, e.Msg)
	}
	return raftlog.MismatchStatus(e.Local, e.Msg)
}
