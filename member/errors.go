package member

import (
	"errors"
	"fmt"

	"github.com/metalog/metalog/member/internal/peerrpc"
	"github.com/metalog/metalog/raftlog"
)

// Errors of the layers below that a Member's callers test for with
// errors.Is, under the member's names (they are the same values).
var (
	// ErrRemoved is the fatal error (Member.Err) of a member that learnt it
	// was removed from the cluster; Start returns it for the data dir of a
	// removed member.
	ErrRemoved = raftlog.ErrRemoved
	// ErrNoLeader is wrapped by the errors of writes and linearizable reads
	// that found no leader before their deadline.
	ErrNoLeader = raftlog.ErrNoLeader
)

// ErrTooManyStatements is matched (errors.Is) by the error of an Execute
// with more statements than Config.MaxStatementsPerRequest. Nothing of such
// a request was checked or proposed: it is refused like a request past a
// transport limit.
var ErrTooManyStatements = errors.New("member: too many statements in one request")

// ErrEntryTooLarge is matched (errors.Is) by the error of a change whose
// log entry would be larger than Config.MaxMutationSize: the members
// refuse larger messages from their peers, so it is refused before it is
// proposed, and nothing of it applies. It is an invalid argument (HTTP
// 400): the same request is refused again; split it.
var ErrEntryTooLarge = errors.New("member: change larger than max_mutation_size")

// limitError is a request refused by a limit: its message is the one the
// client sees, and errors.Is matches the limit's sentinel.
type limitError struct {
	msg   string
	limit error
}

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == e.limit }

// The kinds of the errors a Member words itself (the types below). Each
// error of these types says in its message what was asked, of what, and
// why it failed; the listeners answer it with that message and the code
// of its kind only, whatever it wraps (api/apierr).
var (
	// ErrInvalidArgument is matched by an *ArgumentError: a request
	// field that is missing or wrong.
	ErrInvalidArgument = errors.New("member: invalid argument")
	// ErrMemberNotFound is matched by a *MemberNotFoundError: no member
	// has the name or id a request gives.
	ErrMemberNotFound = errors.New("member: no such member")
	// ErrMemberExists is matched by a *MemberExistsError: the member to
	// add has the name or peer address of a member.
	ErrMemberExists = errors.New("member: member exists")
	// ErrPrecondition is matched by a *PreconditionError, and by a
	// peer's refusal relayed in a *PeerError: the member or the cluster
	// is not in the state the request needs (no quorum for a membership
	// change, a repair that did not repair, another member than the one
	// named). It is the peer protocol's own (the same value), so that a
	// peer answers it in kind.
	ErrPrecondition = peerrpc.ErrPrecondition
	// ErrUnavailable is matched by an *UnavailableError, and by a
	// *WaitError whose wait ended on this member's request_timeout or its
	// shutting down: this member cannot serve the request now; another
	// member, or the same one later, may.
	ErrUnavailable = errors.New("member: unavailable")
	// ErrPeerUnreachable is matched by a *PeerUnreachableError: the
	// member a request needs could not be reached, or could not serve.
	ErrPeerUnreachable = peerrpc.ErrUnreachable
)

// ArgumentError refuses a request with a field that is missing or wrong.
type ArgumentError struct {
	// Field is the request field at fault ("to_epoch", "peer_addr",
	// "statements", a guardrail setting's name, ...).
	Field string
	// Msg is the whole message: the field, its value and what it should
	// be.
	Msg string
	// Err is the cause, if any.
	Err error
}

// argumentError is an *ArgumentError of field with a formatted message.
func argumentError(field, format string, args ...any) error {
	return &ArgumentError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Error is the message.
func (e *ArgumentError) Error() string { return e.Msg }

// Is matches ErrInvalidArgument.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// Unwrap returns the cause.
func (e *ArgumentError) Unwrap() error { return e.Err }

// MemberNotFoundError refuses a request for a member that no member's
// name or id matches.
type MemberNotFoundError struct {
	// Op is what was asked ("remove member", "repair member").
	Op string
	// Want is the name or hex id the request gave.
	Want string
}

// Error names the request and the member.
func (e *MemberNotFoundError) Error() string {
	return fmt.Sprintf("%s %s: no member has that name or id", e.Op, e.Want)
}

// Is matches ErrMemberNotFound.
func (e *MemberNotFoundError) Is(target error) bool { return target == ErrMemberNotFound }

// MemberExistsError refuses to add a member under the name, or at the
// peer address, of a member.
type MemberExistsError struct {
	// Name and PeerAddr are those of the member to add.
	Name, PeerAddr string
	// Member, ID and MemberPeerAddr are the member that has them.
	Member         string
	ID             uint64
	MemberPeerAddr string
}

// Error says which of the two is taken, and by whom.
func (e *MemberExistsError) Error() string {
	if e.Member == e.Name {
		return fmt.Sprintf("add member %s: already a member (id %s, peer %s)", e.Name, FormatID(e.ID), e.MemberPeerAddr)
	}
	return fmt.Sprintf("add member %s: peer address %s is already used by member %s", e.Name, e.PeerAddr, e.Member)
}

// Is matches ErrMemberExists.
func (e *MemberExistsError) Is(target error) bool { return target == ErrMemberExists }

// PreconditionError refuses a request the member or the cluster is not
// in the state for; Msg says which state, and what to do.
type PreconditionError struct {
	Msg string
	// Err is the cause, if any.
	Err error
}

// Error is the message.
func (e *PreconditionError) Error() string { return e.Msg }

// Is matches ErrPrecondition.
func (e *PreconditionError) Is(target error) bool { return target == ErrPrecondition }

// Unwrap returns the cause.
func (e *PreconditionError) Unwrap() error { return e.Err }

// UnavailableError is a request this member cannot serve now (it shuts
// down, it lacks history a peer has): another member, or the same one
// later, may.
type UnavailableError struct {
	Msg string
	// Err is the cause, if any.
	Err error
}

// Error is the message.
func (e *UnavailableError) Error() string { return e.Msg }

// Is matches ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// PeerUnreachableError is a request that needed another member, which
// could not be reached at its peer address, or could not serve.
type PeerUnreachableError struct {
	// Op is what was asked ("repair member n2").
	Op string
	// Addr is the member's peer address.
	Addr string
	// Err is why: the call's error.
	Err error
}

// Error names the request, the address and why.
func (e *PeerUnreachableError) Error() string {
	return fmt.Sprintf("%s: cannot reach it at %s: %v", e.Op, e.Addr, e.Err)
}

// Is matches ErrPeerUnreachable.
func (e *PeerUnreachableError) Is(target error) bool { return target == ErrPeerUnreachable }

// PeerError is another member's own answer to a request this member
// passed on to it (a repair), refusing it: its message is the peer's,
// and it matches (errors.Is) what the peer's answer says:
// ErrPrecondition, raftlog.ErrNotMember (the peer does not take this
// member for one of its cluster), context.DeadlineExceeded or
// context.Canceled. The listeners relay the peer's answer as it gave it.
type PeerError struct {
	// Member is the peer's name.
	Member string
	// Err is the peer's answer.
	Err error
}

// Error is the peer's message.
func (e *PeerError) Error() string { return e.Err.Error() }

// Unwrap returns the peer's answer.
func (e *PeerError) Unwrap() error { return e.Err }

// OpError is an error of a step of a request (a linearizable read, a
// rebuild) that the member words, Op naming the step: its kind is its
// cause's, but the refusal details of the cause (what a write proposed,
// which guardrail) are not the request's, and the listeners answer with
// the message and the cause's code only.
type OpError struct {
	// Op names the step ("linearizable read", "at_epoch 7").
	Op string
	// Err is the cause.
	Err error
}

// Error is Op, then the cause.
func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }
