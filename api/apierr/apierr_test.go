package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/plan"
)

// TestTable: every class has its row: name, gRPC code, ErrorInfo reason,
// HTTP override and refusal label.
func TestTable(t *testing.T) {
	type want struct {
		code    codes.Code
		reason  string
		http    int
		refusal string
	}
	wants := map[Class]want{
		OK:                {codes.OK, "", 0, ""},
		Internal:          {codes.Internal, "", 0, ""},
		Invalid:           {codes.InvalidArgument, "", 0, "invalid"},
		Syntax:            {codes.InvalidArgument, "", 0, "invalid"},
		NotFound:          {codes.NotFound, "", 0, ""},
		AlreadyExists:     {codes.AlreadyExists, "", 0, ""},
		Precondition:      {codes.FailedPrecondition, "", 0, ""},
		Guardrail:         {codes.FailedPrecondition, "GUARDRAIL", 0, "guardrail"},
		EpochConflict:     {codes.FailedPrecondition, "IF_EPOCH_CONFLICT", 0, ""},
		PlanRefused:       {codes.FailedPrecondition, "PLAN_REFUSED", 0, ""},
		HistoryChanged:    {codes.FailedPrecondition, "HISTORY_CHANGED", 0, ""},
		HistoryPruned:     {codes.OutOfRange, "HISTORY_PRUNED", 0, ""},
		EpochAhead:        {codes.OutOfRange, "EPOCH_AHEAD", 0, ""},
		RateLimited:       {codes.ResourceExhausted, "RATE_LIMITED", 0, "rate_limited"},
		TooManyStatements: {codes.ResourceExhausted, "TOO_MANY_STATEMENTS", http.StatusRequestEntityTooLarge, "too_many_statements"},
		NoSpace:           {codes.ResourceExhausted, "NOSPACE", http.StatusInsufficientStorage, "nospace"},
		OutOfScope:        {codes.PermissionDenied, "SCOPE", 0, "scope"},
		PermissionDenied:  {codes.PermissionDenied, "", 0, ""},
		Unavailable:       {codes.Unavailable, "NOT_PROPOSED", 0, ""},
		OutcomeUnknown:    {codes.DeadlineExceeded, "OUTCOME_UNKNOWN", http.StatusGatewayTimeout, ""},
		DeadlineExceeded:  {codes.DeadlineExceeded, "", 0, ""},
		Canceled:          {codes.Canceled, "", 0, ""},
	}
	names := map[string]bool{}
	for c := OK; c < numClasses; c++ {
		w, ok := wants[c]
		if !ok {
			t.Errorf("class %v has no expected row", c)
			continue
		}
		if c.Code() != w.code || c.Reason() != w.reason {
			t.Errorf("%v: code %v reason %q, want %v %q", c, c.Code(), c.Reason(), w.code, w.reason)
		}
		if w.reason != "" && HTTPStatus(w.reason) != w.http {
			t.Errorf("%v: HTTP %d, want %d", c, HTTPStatus(w.reason), w.http)
		}
		if got := Refusal(w.code, w.reason); got != w.refusal {
			t.Errorf("%v: refusal %q, want %q", c, got, w.refusal)
		}
		if c.String() == "" || names[c.String()] {
			t.Errorf("class %d: name %q empty or not unique", c, c)
		}
		names[c.String()] = true
	}
	if len(wants) != int(numClasses) {
		t.Errorf("%d expected rows for %d classes", len(wants), numClasses)
	}
	if Class(200).Code() != codes.Internal || Class(200).String() != "Class(200)" {
		t.Errorf("an unknown class: %v %v", Class(200).Code(), Class(200))
	}
	for _, tc := range []struct {
		code   codes.Code
		reason string
		want   string
	}{
		{codes.InvalidArgument, "PARTIALLY_APPLIED", ""},
		{codes.InvalidArgument, "", "invalid"},
		{codes.PermissionDenied, "", ""},
		{codes.ResourceExhausted, "TOO_MANY_REQUESTS", ""},
		{codes.Unavailable, "NOT_PROPOSED", ""},
		{codes.FailedPrecondition, "PLAN_REFUSED", ""},
		{codes.FailedPrecondition, "GUARDRAIL", "guardrail"},
	} {
		if got := Refusal(tc.code, tc.reason); got != tc.want {
			t.Errorf("Refusal(%v, %q) = %q, want %q", tc.code, tc.reason, got, tc.want)
		}
	}
	if HTTPStatus("") != 0 || HTTPStatus("GUARDRAIL") != 0 {
		t.Error("HTTPStatus overrides a reason the table does not")
	}
}

// TestClassify: the class of each kind of error, wrapped or not, and the
// precedences of the table where one error matches several rows.
func TestClassify(t *testing.T) {
	_, synErr := cql.Parse("CREATE TABLE")
	noLeader := fmt.Errorf("%w: %w", raftlog.ErrNoLeader, context.DeadlineExceeded)
	for _, tc := range []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, OK},
		{"anything else", errors.New("disk on fire"), Internal},
		{"syntax", synErr, Syntax},
		{"syntax in a statement", &metadata.StatementError{Position: 1, Total: 1, Err: synErr}, Syntax},
		{"exists", &metadata.StatementError{Position: 2, Total: 3, Err: &schema.Error{Code: schema.ErrAlreadyExists}}, AlreadyExists},
		{"not found", &schema.Error{Code: schema.ErrNotFound}, NotFound},
		{"invalid", &schema.Error{Code: schema.ErrInvalid}, Invalid},
		{"empty command", metadata.ErrEmptyCommand, Invalid},
		{"entry too large", fmt.Errorf("x: %w", member.ErrEntryTooLarge), Invalid},
		{"bad setting", fmt.Errorf("x: %w", guardrails.ErrInvalidSetting), Invalid},
		{"unknown setting", fmt.Errorf("x: %w", guardrails.ErrUnknownSetting), Invalid},
		{"guardrail", &guardrails.Failure{Guardrail: "tables_fail_threshold"}, Guardrail},
		{"if_epoch", &metadata.EpochMovedError{Want: 1, Have: 2}, EpochConflict},
		{"history changed", &member.HistoryChangedError{Op: "watch"}, HistoryChanged},
		{"pruned", fmt.Errorf("at_epoch 2: %w", &metadata.PrunedError{From: 2, Oldest: 5}), HistoryPruned},
		{"ahead", &member.EpochAheadError{At: 9, Epoch: 5}, EpochAhead},
		{"rate limited", &member.RateLimitError{Identity: "a"}, RateLimited},
		{"no space", fmt.Errorf("x: %w", member.ErrNoSpace), NoSpace},
		{"too many statements", fmt.Errorf("x: %w", member.ErrTooManyStatements), TooManyStatements},
		{"scope", &member.ScopeError{Keyspace: "k"}, OutOfScope},
		{"no leader", fmt.Errorf("x: %w", raftlog.ErrNoLeader), Unavailable},
		{"not proposed", fmt.Errorf("%w: %w", member.ErrNotProposed, context.DeadlineExceeded), Unavailable},
		{"history unnamed", fmt.Errorf("x: %w", member.ErrHistoryUnnamed), Unavailable},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), DeadlineExceeded},
		{"canceled", context.Canceled, Canceled},
		// Precedences: the wrapper before what it wraps.
		{"outcome unknown before no leader", &member.OutcomeUnknownError{RequestID: "r1", Err: noLeader}, OutcomeUnknown},
		{"outcome unknown of a conf change", fmt.Errorf("add member n4: %w: %w", raftlog.ErrOutcomeUnknown, context.DeadlineExceeded), OutcomeUnknown},
		{"plan refused before its guardrail", &member.PlanRefusedError{Err: &guardrails.Failure{Guardrail: "g"}}, PlanRefused},
		{"plan refused before its schema error", &member.PlanRefusedError{Err: &schema.Error{Code: schema.ErrAlreadyExists}}, PlanRefused},
		{"scope before invalid", &metadata.StatementError{Err: fmt.Errorf("%w: %w", &member.ScopeError{Keyspace: "k"}, schema.ErrInvalid)}, OutOfScope},
		{"if_epoch before guardrail", fmt.Errorf("%w; %w", &metadata.EpochMovedError{}, &guardrails.Failure{}), EpochConflict},
		{"no leader before deadline", noLeader, Unavailable},
		// The member's own words: their kind, whatever they wrap.
		{"argument", &member.ArgumentError{Field: "set", Msg: "x", Err: &guardrails.Failure{}}, Invalid},
		{"member not found", &member.MemberNotFoundError{Op: "remove member", Want: "n9"}, NotFound},
		{"member exists", &member.MemberExistsError{Name: "n1"}, AlreadyExists},
		{"precondition", &member.PreconditionError{Msg: "x", Err: raftlog.ErrConfChangeRefused}, Precondition},
		{"unavailable", &member.UnavailableError{Msg: "x", Err: &metadata.IncompleteError{}}, Unavailable},
		{"peer unreachable", &member.PeerUnreachableError{Op: "repair member n2", Err: errors.New("refused")}, Unavailable},
		{"wait: caller's deadline", &member.WaitError{Err: context.DeadlineExceeded}, DeadlineExceeded},
		{"wait: canceled", &member.WaitError{Err: context.Canceled}, Canceled},
		{"wait: request_timeout", &member.WaitError{Err: member.ErrUnavailable}, Unavailable},
		{"step: its cause's class", &member.OpError{Op: "linearizable read", Err: noLeader}, Unavailable},
		{"step of a step", &member.OpError{Op: "at_epoch 3", Err: &member.OpError{Op: "linearizable read", Err: context.Canceled}}, Canceled},
		{"step before outcome unknown", &member.OutcomeUnknownError{Err: &member.OpError{Op: "x", Err: context.Canceled}}, Canceled},
		{"worded, wrapped", fmt.Errorf("x: %w", &member.PreconditionError{Msg: "y"}), Precondition},
		// Answers relayed as given: the class of their code.
		{"relayed refusal", &member.PeerError{Member: "n2", Err: status.Error(codes.FailedPrecondition, "this member is n1")}, Precondition},
		{"relayed denial", &member.PeerError{Member: "n2", Err: status.Error(codes.PermissionDenied, "not a member")}, PermissionDenied},
		{"relayed unknown code", status.Error(codes.Unimplemented, "no such method"), Internal},
		{"peer not a member", fmt.Errorf("x: %w", raftlog.ErrNotMember), PermissionDenied},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestCode: the code of a class, and a relayed answer's own code.
func TestCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{&member.OutcomeUnknownError{RequestID: "r1", Err: raftlog.ErrNoLeader}, codes.DeadlineExceeded},
		{&member.MemberExistsError{Name: "n1"}, codes.AlreadyExists},
		{status.Error(codes.Unimplemented, "no such method"), codes.Unimplemented},
		{&member.PeerError{Err: status.Error(codes.Aborted, "x")}, codes.Aborted},
		{&member.PeerUnreachableError{Op: "x", Err: status.Error(codes.Unavailable, "down")}, codes.Unavailable},
		{errors.New("disk on fire"), codes.Internal},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("Code(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestStatus: the answer's code, message and ErrorInfo: the member's
// own words carry none, whatever they wrap; a relayed answer is kept
// whole; the others carry their reason.
func TestStatus(t *testing.T) {
	if Status(nil) != nil {
		t.Fatal("Status(nil) is not nil")
	}
	relayed, err := status.New(codes.FailedPrecondition, "other cluster").WithDetails(&errdetails.ErrorInfo{Reason: "R", Domain: "d"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		reason string
		md     map[string]string
	}{
		{"outcome unknown", &member.OutcomeUnknownError{RequestID: "r1", AppliedIndex: 4, Err: raftlog.ErrNoLeader}, codes.DeadlineExceeded, "OUTCOME_UNKNOWN",
			map[string]string{"outcome": "unknown", "request_id": "r1", "applied_index": "4"}},
		{"outcome unknown of a change", &member.OutcomeUnknownError{Change: "add member n4", Err: raftlog.ErrOutcomeUnknown}, codes.DeadlineExceeded, "OUTCOME_UNKNOWN",
			map[string]string{"outcome": "unknown", "change": "add member n4"}},
		{"outcome unknown without its type", fmt.Errorf("x: %w", raftlog.ErrOutcomeUnknown), codes.DeadlineExceeded, "", nil},
		{"rate limited", &member.RateLimitError{Identity: "token:a", RetryAfter: time.Second}, codes.ResourceExhausted, "RATE_LIMITED",
			map[string]string{"setting": "ddl_rate_per_identity", "identity": "token:a"}},
		{"no space", fmt.Errorf("x: %w", member.ErrNoSpace), codes.ResourceExhausted, "NOSPACE", map[string]string{"setting": "min_free_space_bytes"}},
		{"scope without keyspace", fmt.Errorf("x: %w", member.ErrOutOfScope), codes.PermissionDenied, "SCOPE", map[string]string{}},
		{"partially applied", &metadata.StatementError{Position: 2, Total: 2, Applied: 1, Err: &schema.Error{Code: schema.ErrAlreadyExists}},
			codes.AlreadyExists, "PARTIALLY_APPLIED", map[string]string{"applied": "1"}},
		{"plan refused", &member.PlanRefusedError{Err: &plan.ImpossibleError{Changes: []plan.Impossible{{Object: "ks.t", Reason: "r"}}}},
			codes.FailedPrecondition, "PLAN_REFUSED", map[string]string{"object": "ks.t", "reason": "r", "changes": "1"}},
		{"no leader", fmt.Errorf("x: %w", raftlog.ErrNoLeader), codes.Unavailable, "NOT_PROPOSED", nil},
		{"syntax", &metadata.StatementError{Err: &cql.SyntaxError{}}, codes.InvalidArgument, "", nil},
		// The member's own words.
		{"step over a no-leader", &member.OpError{Op: "linearizable read", Err: raftlog.ErrNoLeader}, codes.Unavailable, "", nil},
		{"step over an outcome unknown", &member.OpError{Op: "x", Err: &member.OutcomeUnknownError{RequestID: "r", Err: raftlog.ErrNoLeader}}, codes.DeadlineExceeded, "", nil},
		{"history not copied", &member.UnavailableError{Msg: "x", Err: &metadata.IncompleteError{}}, codes.Unavailable, "", nil},
		{"argument over a guardrail failure", &member.ArgumentError{Msg: "x", Err: &guardrails.Failure{Guardrail: "g"}}, codes.InvalidArgument, "", nil},
		{"wait", &member.WaitError{MinEpoch: 3, Epoch: 2, End: "when it shut down", Err: member.ErrUnavailable}, codes.Unavailable, "", nil},
		{"peer unreachable over a peer's answer", &member.PeerUnreachableError{Op: "repair member n2", Addr: "h:2", Err: relayed.Err()}, codes.Unavailable, "", nil},
		// Relayed as given.
		{"relayed", &member.PeerError{Member: "n2", Err: relayed.Err()}, codes.FailedPrecondition, "R", nil},
	} {
		st := status.Convert(Status(tc.err))
		if st.Code() != tc.code || st.Message() != tc.err.Error() {
			t.Errorf("%s: %v %q, want %v %q", tc.name, st.Code(), st.Message(), tc.code, tc.err.Error())
		}
		var info *errdetails.ErrorInfo
		for _, d := range st.Details() {
			if i, ok := d.(*errdetails.ErrorInfo); ok {
				info = i
			}
		}
		switch {
		case tc.reason == "" && info != nil:
			t.Errorf("%s: ErrorInfo %v, want none", tc.name, info)
		case tc.reason != "" && (info == nil || info.GetReason() != tc.reason):
			t.Errorf("%s: ErrorInfo %v, want reason %s", tc.name, info, tc.reason)
		case tc.md != nil && fmt.Sprint(info.GetMetadata()) != fmt.Sprint(tc.md):
			t.Errorf("%s: metadata %v, want %v", tc.name, info.GetMetadata(), tc.md)
		}
		if tc.reason != "" && tc.reason != "R" && ReasonOf(Status(tc.err)) != tc.reason {
			t.Errorf("%s: ReasonOf = %q", tc.name, ReasonOf(Status(tc.err)))
		}
	}
	if ReasonOf(errors.New("plain")) != "" || ReasonOf(status.Error(codes.Internal, "x")) != "" {
		t.Error("ReasonOf found a reason in an error without one")
	}
}
