package apierr

import (
	"net/http"
	"strconv"

	"google.golang.org/grpc/codes"
)

// Class is the domain class of an error: what kind of failure it is,
// whatever the protocol that answers it. The zero Class is OK (no error).
type Class uint8

// The classes. Several share a gRPC code; they differ in the ErrorInfo
// reason, the HTTP status or the refusal label the table gives them, and
// a listener of another protocol may tell them apart too.
const (
	// OK is no error.
	OK Class = iota
	// Internal is a failure of the member itself, or an error of no
	// other class.
	Internal
	// Invalid is a request that is wrong as given: a bad statement, a bad
	// argument or setting, a change too large to propose. The same
	// request is refused again.
	Invalid
	// Syntax is CQL that does not parse (*cql.SyntaxError).
	Syntax
	// NotFound is a schema object or a member that does not exist.
	NotFound
	// AlreadyExists is a schema object or a member that exists already.
	AlreadyExists
	// Precondition is a request the member or the cluster is not in the
	// state for (no quorum for a membership change, another member than
	// the one named).
	Precondition
	// Guardrail is a change refused by a guardrail's fail threshold;
	// nothing of it applied.
	Guardrail
	// EpochConflict is an Execute whose if_epoch was not the schema's
	// epoch when it applied; nothing applied.
	EpochConflict
	// PlanRefused is a plan that cannot be made, or that the cluster
	// would refuse.
	PlanRefused
	// HistoryChanged is a read naming another history id than the
	// cluster's.
	HistoryChanged
	// HistoryPruned is a read reaching past the oldest epoch kept.
	HistoryPruned
	// EpochAhead is a read of an epoch the cluster has not made.
	EpochAhead
	// RateLimited is a change refused by the rate limit of its identity.
	RateLimited
	// TooManyStatements is a request with more statements than
	// max_statements_per_request.
	TooManyStatements
	// NoSpace is a change refused by the NOSPACE alarm.
	NoSpace
	// OutOfScope is a request of a scoped role outside its keyspaces.
	OutOfScope
	// PermissionDenied is a call the member refused to its caller (a peer
	// that does not take this member for one of its cluster).
	PermissionDenied
	// Unavailable is a request the member could not serve now: for a
	// write, nothing of it was proposed (no leader, a stopped node), so
	// it may be sent anywhere again.
	Unavailable
	// OutcomeUnknown is a write that may still apply: it was proposed,
	// and the request ended before it applied.
	OutcomeUnknown
	// DeadlineExceeded is a request whose deadline passed.
	DeadlineExceeded
	// Canceled is a request its caller canceled.
	Canceled

	numClasses
)

// The ErrorInfo reasons (domain Domain) of the answers a program branches
// on, one per meaning, so that a code shared by several meanings is told
// apart by its reason; the numbers the message names are in the
// metadata too. The client package has a sentinel for each
// (client/errors.go) and the README's "Requests and errors" lists them
// with their codes and HTTP statuses.
const (
	// Domain is the domain of metalog's ErrorInfo details.
	Domain = "metalog"
	// ReasonGuardrail: FailedPrecondition, a guardrail failure that
	// applied nothing. Metadata "guardrail" (the setting), and for a
	// plan "statement" and "position".
	ReasonGuardrail = "GUARDRAIL"
	// ReasonIfEpochConflict: FailedPrecondition, an Execute whose
	// if_epoch was not the schema's epoch when it applied. Metadata
	// "if_epoch" and "epoch" (the schema's).
	ReasonIfEpochConflict = "IF_EPOCH_CONFLICT"
	// ReasonPlanRefused: FailedPrecondition, a plan that cannot be made
	// (changes that cannot be made in place: metadata "object" and
	// "reason" of the first, "changes" how many) or that would be refused
	// at a statement (metadata "statement", clipped, and "position",
	// 1-based). A plan refused by a guardrail is GUARDRAIL.
	ReasonPlanRefused = "PLAN_REFUSED"
	// ReasonHistoryPruned: OutOfRange, a history, watch or at_epoch read
	// reaching past the oldest epoch kept. Metadata "oldest_epoch",
	// "from_epoch" and "history_retention_epochs".
	ReasonHistoryPruned = "HISTORY_PRUNED"
	// ReasonHistoryChanged: FailedPrecondition, a watch or history read
	// naming another history id than the cluster's. Metadata
	// "history_id" (the cluster's), "requested_history_id" and
	// "cluster_id".
	ReasonHistoryChanged = "HISTORY_CHANGED"
	// ReasonEpochAhead: OutOfRange, an at_epoch read of an epoch the
	// cluster has not made. Metadata "at_epoch", "epoch" (the
	// cluster's) and "history_id".
	ReasonEpochAhead = "EPOCH_AHEAD"
	// ReasonWatchLagging: Unavailable, a change feed cut because it fell
	// more than the member's bound behind (member.WatchLaggingError):
	// resume it from the epoch named, as client.Watch does. Metadata
	// "resume_epoch", "epoch" (the member's) and "max_lag_epochs".
	ReasonWatchLagging = "WATCH_LAGGING"
	// ReasonRateLimited: ResourceExhausted (HTTP 429 with Retry-After),
	// the rate limit per identity. Metadata "setting" and "identity";
	// a RetryInfo detail carries the delay.
	ReasonRateLimited = "RATE_LIMITED"
	// ReasonTooManyStatements: ResourceExhausted (HTTP 413: the same
	// request would be refused again), the statement limit. Metadata
	// "setting".
	ReasonTooManyStatements = "TOO_MANY_STATEMENTS"
	// ReasonNoSpace: ResourceExhausted (HTTP 507 Insufficient Storage: it
	// waits for an operator to free space on a member, not for load to go
	// down), the NOSPACE alarm. Metadata "setting".
	ReasonNoSpace = "NOSPACE"
	// ReasonScope: PermissionDenied, a scoped role used outside its
	// keyspaces. Metadata "keyspace" and "grants" (or what the API
	// refused).
	ReasonScope = "SCOPE"
	// ReasonNotProposed: Unavailable, nothing of the request was
	// proposed, so a client may send it anywhere again, and knows it is
	// not waiting in some leader's log.
	ReasonNotProposed = "NOT_PROPOSED"
	// ReasonOutcomeUnknown: DeadlineExceeded (HTTP 504, with "outcome":
	// "unknown" and "request_id" at the top of the body), a write whose
	// change may still apply. Metadata "outcome": "unknown",
	// "request_id" (the server's own "server-..." id when the request
	// came without one) and "applied_index" (the request cannot apply at
	// or before that log index), or "change" for a membership change.
	ReasonOutcomeUnknown = "OUTCOME_UNKNOWN"
	// ReasonPartiallyApplied: an Execute that failed after some of its
	// statements applied, with the code of the failure. Metadata
	// "applied": how many. It is no refusal.
	ReasonPartiallyApplied = "PARTIALLY_APPLIED"
)

// The labels of metalog_requests_refused_total the table decides: why a
// request was refused before it changed anything (Refusal).
const (
	RefusedRateLimited       = "rate_limited"        // ddl_rate_per_identity
	RefusedTooManyStatements = "too_many_statements" // max_statements_per_request
	RefusedNoSpace           = "nospace"             // the NOSPACE alarm
	RefusedScope             = "scope"               // a scoped role used outside its keyspaces
	RefusedGuardrail         = "guardrail"           // a guardrail's fail threshold, nothing applied
	RefusedInvalid           = "invalid"             // InvalidArgument
)

// row is what the table says of one class.
type row struct {
	name string
	// code is the gRPC code of the class.
	code codes.Code
	// reason is the ErrorInfo reason of an answer of the class, "" for
	// none; Status may give another (a plan refused by a guardrail is
	// GUARDRAIL, a request that applied in part PARTIALLY_APPLIED), or
	// none, for the errors the member words itself.
	reason string
	// http is the HTTP status of an answer with that reason, when it is
	// not grpc-gateway's for the code; 0 otherwise.
	http int
	// refusal is the refusal label of an answer of code with that reason
	// (any reason, when reason is ""); "" when it is no refusal.
	refusal string
}

// table is the one table from a class to its answer.
var table = [numClasses]row{
	OK:                {name: "OK", code: codes.OK},
	Internal:          {name: "Internal", code: codes.Internal},
	Invalid:           {name: "Invalid", code: codes.InvalidArgument, refusal: RefusedInvalid},
	Syntax:            {name: "Syntax", code: codes.InvalidArgument, refusal: RefusedInvalid},
	NotFound:          {name: "NotFound", code: codes.NotFound},
	AlreadyExists:     {name: "AlreadyExists", code: codes.AlreadyExists},
	Precondition:      {name: "Precondition", code: codes.FailedPrecondition},
	Guardrail:         {name: "Guardrail", code: codes.FailedPrecondition, reason: ReasonGuardrail, refusal: RefusedGuardrail},
	EpochConflict:     {name: "EpochConflict", code: codes.FailedPrecondition, reason: ReasonIfEpochConflict},
	PlanRefused:       {name: "PlanRefused", code: codes.FailedPrecondition, reason: ReasonPlanRefused},
	HistoryChanged:    {name: "HistoryChanged", code: codes.FailedPrecondition, reason: ReasonHistoryChanged},
	HistoryPruned:     {name: "HistoryPruned", code: codes.OutOfRange, reason: ReasonHistoryPruned},
	EpochAhead:        {name: "EpochAhead", code: codes.OutOfRange, reason: ReasonEpochAhead},
	RateLimited:       {name: "RateLimited", code: codes.ResourceExhausted, reason: ReasonRateLimited, refusal: RefusedRateLimited},
	TooManyStatements: {name: "TooManyStatements", code: codes.ResourceExhausted, reason: ReasonTooManyStatements, http: http.StatusRequestEntityTooLarge, refusal: RefusedTooManyStatements},
	NoSpace:           {name: "NoSpace", code: codes.ResourceExhausted, reason: ReasonNoSpace, http: http.StatusInsufficientStorage, refusal: RefusedNoSpace},
	OutOfScope:        {name: "OutOfScope", code: codes.PermissionDenied, reason: ReasonScope, refusal: RefusedScope},
	PermissionDenied:  {name: "PermissionDenied", code: codes.PermissionDenied},
	Unavailable:       {name: "Unavailable", code: codes.Unavailable, reason: ReasonNotProposed},
	OutcomeUnknown:    {name: "OutcomeUnknown", code: codes.DeadlineExceeded, reason: ReasonOutcomeUnknown, http: http.StatusGatewayTimeout},
	DeadlineExceeded:  {name: "DeadlineExceeded", code: codes.DeadlineExceeded},
	Canceled:          {name: "Canceled", code: codes.Canceled},
}

// String is the class's name.
func (c Class) String() string {
	if c >= numClasses {
		return "Class(" + strconv.Itoa(int(c)) + ")"
	}
	return table[c].name
}

// Code is the gRPC code of the class.
func (c Class) Code() codes.Code {
	if c >= numClasses {
		return codes.Internal
	}
	return table[c].code
}

// Reason is the ErrorInfo reason an answer of the class carries, "" for
// none (Status may give another: see row.reason).
func (c Class) Reason() string {
	if c >= numClasses {
		return ""
	}
	return table[c].reason
}

// HTTPStatus is the HTTP status of an answer whose ErrorInfo reason is
// reason, when the table overrides grpc-gateway's status for its code;
// 0 otherwise.
func HTTPStatus(reason string) int {
	if reason == "" {
		return 0
	}
	for _, r := range table {
		if r.reason == reason && r.http != 0 {
			return r.http
		}
	}
	return 0
}

// Refusal is the label of metalog_requests_refused_total of an answer
// with code and ErrorInfo reason, when the table decides it: "" for an
// answer the table does not count as a refusal (the listener may still
// count its own refusals, such as its limits and its authentication). An
// answer that applied in part is no refusal.
func Refusal(code codes.Code, reason string) string {
	if reason == ReasonPartiallyApplied {
		return ""
	}
	for _, r := range table {
		if r.refusal != "" && r.code == code && (r.reason == reason || r.reason == "") {
			return r.refusal
		}
	}
	return ""
}

// relayed are the classes of the answers the member relays as they were
// given (a peer's), by code; any other code is Internal.
var relayed = map[codes.Code]Class{
	codes.OK:                 OK,
	codes.InvalidArgument:    Invalid,
	codes.NotFound:           NotFound,
	codes.AlreadyExists:      AlreadyExists,
	codes.FailedPrecondition: Precondition,
	codes.PermissionDenied:   PermissionDenied,
	codes.Unavailable:        Unavailable,
	codes.DeadlineExceeded:   DeadlineExceeded,
	codes.Canceled:           Canceled,
}

// classOfCode is the class of an answer with code that the member relays.
func classOfCode(code codes.Code) Class {
	if c, ok := relayed[code]; ok {
		return c
	}
	return Internal
}
