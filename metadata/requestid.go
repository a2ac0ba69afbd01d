package metadata

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/schema"
)

// Fingerprint identifies what a request asks for, so that a retry under a
// request id can be told from another request reusing it. It is the first
// 128 bits of a SHA-256 over the command's kind, flags (atomic, only if
// unset), keyspace, text and guardrail settings: the same on every node,
// in every build. The zero value means unknown: the records of requests
// remembered before fingerprints existed carry none, and a command
// reusing their id is answered with their first result, as it was then.
type Fingerprint [16]byte

// IsZero reports whether f is unknown.
func (f Fingerprint) IsZero() bool { return f == Fingerprint{} }

// matches reports whether a command of fingerprint g may be answered with
// the result of the request remembered with f: they are equal, or f is
// unknown.
func (f Fingerprint) matches(g Fingerprint) bool { return f.IsZero() || f == g }

// fingerprintStack is the size of the buffer Fingerprint hashes from
// without allocating; a larger command allocates one.
const fingerprintStack = 512

// Fingerprint returns the fingerprint of c. The request id is not part of
// it, nor MaxMutationSize, which is the proposing member's setting and may
// differ when a retry goes through another member. A guardrail change
// that carries in Text the settings it asked for (SetGuardrailsText) is
// fingerprinted by those, not by the whole settings computed from them:
// a retry made on top of another change since is still the same request.
// It never returns the zero Fingerprint.
func (c Command) Fingerprint() Fingerprint {
	var stack [fingerprintStack]byte
	b := append(stack[:0], byte(c.Kind), c.flags())
	b = appendString(b, c.Keyspace)
	b = appendString(b, c.Text)
	payload := c.Guardrails
	if (c.Kind == KindSetGuardrails || c.Kind == KindSetKeyspaceGuardrails) && c.Text != "" {
		payload = nil
	}
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	sum := sha256.Sum256(b)
	var f Fingerprint
	copy(f[:], sum[:])
	if f.IsZero() {
		f[len(f)-1] = 1 // zero means unknown
	}
	return f
}

// SetGuardrailsText is the Text of a guardrail change asking for set: one
// "name=value" line per setting, names lowercased and sorted, so that the
// same request gives the same text (and Fingerprint) however it is
// written.
func SetGuardrailsText(set map[string]string) string {
	lines := make([]string, 0, len(set))
	for name, value := range set {
		lines = append(lines, strings.ToLower(strings.TrimSpace(name))+"="+strings.TrimSpace(value))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// MaxRequestIDBytes bounds the request id of a new request, which a
// member refuses before proposing it (Precheck). Ids are remembered in
// schema.db and in every snapshot (up to MaxRememberedRequests of them), so
// a long one costs every member space; 256 bytes leave room for a UUID
// with any prefix a client wants.
const MaxRequestIDBytes = 256

// maxStoredRequestIDBytes is the longest request id schema.db can store
// (bbolt's largest key). The state machine refuses a command with a longer
// one (Answer): such a command could never have been stored, so no log
// that applied before holds one, and refusing it keeps every node's answer
// the same. Commands proposed before MaxRequestIDBytes existed may hold ids
// up to this bound, and still apply and answer retries.
const maxStoredRequestIDBytes = bolt.MaxKeySize

// Errors of request ids. Both also match schema.ErrInvalid, so they are
// answered like any other invalid request (InvalidArgument).
var (
	// ErrRequestIDReused is matched by the error of a command whose
	// request id is remembered for another request: other statements,
	// keyspace, atomic flag or guardrail settings.
	ErrRequestIDReused = errors.New("metadata: request id reused by another request")
	// ErrRequestIDTooLong is matched by the error of a new request whose
	// id is longer than MaxRequestIDBytes (Precheck), and of a command
	// whose id is too long for schema.db to store (Answer).
	ErrRequestIDTooLong = errors.New("metadata: request id too long")
	// ErrRequestIDUnprintable is matched by the error of a new request
	// whose id holds a character a terminal obeys instead of showing (a
	// control or bidirectional formatting character, safetext.Unsafe) or
	// a byte that is not UTF-8 (Precheck): history and watch print the
	// id, and such an id could rewrite what they show.
	ErrRequestIDUnprintable = errors.New("metadata: request id holds a control or bidirectional character")
)

// requestIDError is a command refused for its request id before anything
// of it was applied. Its message names the id, cut by clip.Quote.
type requestIDError struct {
	msg  string
	kind error // ErrRequestIDReused, ErrRequestIDTooLong or ErrRequestIDUnprintable
}

func (e *requestIDError) Error() string { return e.msg }

// Is matches the error's kind and schema.ErrInvalid.
func (e *requestIDError) Is(target error) bool {
	return target == e.kind || target == schema.ErrInvalid
}

// Answer returns, with true, the answer to cmd that needs nothing applied:
// the first result when cmd retries a remembered request, an error
// matching ErrRequestIDReused when its id is remembered for another
// request (nothing applied, the remembered result kept for the real
// retry), one matching ErrRequestIDTooLong for an id too long to store.
// It returns false when cmd is to be applied: it has no request id, or one
// not remembered. The state machine asks it before applying a command (an
// answered command changes nothing, on every node), and a member before
// proposing one. It hashes cmd only when its id is remembered.
func (r Requests) Answer(cmd Command) (Result, bool) {
	if len(cmd.RequestID) > maxStoredRequestIDBytes {
		return Result{Err: requestIDTooLong(cmd.RequestID, maxStoredRequestIDBytes)}, true
	}
	rec, ok := r.Get(cmd.RequestID)
	if !ok {
		return Result{}, false
	}
	if !rec.Fingerprint.matches(cmd.Fingerprint()) {
		return Result{Err: &requestIDError{kind: ErrRequestIDReused, msg: "request id " + clip.Quote(cmd.RequestID) +
			" was already used by another request (other statements, keyspace, atomic flag or settings); nothing was applied: give a new request a new id"}}, true
	}
	return Result{Outcome: rec.Outcome, Err: rec.Err}, true
}

// CheckRequestID refuses the id of a new request longer than
// MaxRequestIDBytes (ErrRequestIDTooLong), or holding a control or
// bidirectional formatting character or a byte that is not UTF-8
// (ErrRequestIDUnprintable, naming the byte offset), before it is
// proposed. The state machine does not check the characters: commands
// logged before the rule apply as they did.
func CheckRequestID(id string) error {
	if len(id) > MaxRequestIDBytes {
		return requestIDTooLong(id, MaxRequestIDBytes)
	}
	if off := safetext.Index(id); off >= 0 {
		return &requestIDError{kind: ErrRequestIDUnprintable, msg: "request id " + clip.Quote(id) + " holds " + safetext.Describe(id, off) +
			" at byte offset " + strconv.Itoa(off) + ", which would act on a terminal that shows it (history, watch); nothing was applied: " +
			"give an id of printable characters (a UUID, say)"}
	}
	return nil
}

// requestIDTooLong is the error of a request id longer than max bytes.
func requestIDTooLong(id string, max int) error {
	return &requestIDError{kind: ErrRequestIDTooLong, msg: "request id " + clip.Quote(id) +
		" is longer than " + strconv.Itoa(max) + " bytes; nothing was applied"}
}
