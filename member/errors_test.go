package member

import (
	"errors"
	"strings"
	"testing"
)

// TestWordedErrors: the errors the member words itself say what was
// asked, of what and why, and match their kind (errors.Is) and their
// cause; the kinds are distinct.
func TestWordedErrors(t *testing.T) {
	cause := errors.New("cause")
	kinds := []error{ErrInvalidArgument, ErrMemberNotFound, ErrMemberExists, ErrPrecondition, ErrUnavailable, ErrPeerUnreachable}
	for _, tc := range []struct {
		err  error
		kind error
		msg  string
	}{
		{&ArgumentError{Field: "limit", Msg: "limit -1: want 1 to 1000", Err: cause}, ErrInvalidArgument, "limit -1: want 1 to 1000"},
		{argumentError("to_epoch", "to_epoch %d is before from_epoch %d", 3, 5), ErrInvalidArgument, "to_epoch 3 is before from_epoch 5"},
		{&MemberNotFoundError{Op: "remove member", Want: "n9"}, ErrMemberNotFound, "remove member n9: no member has that name or id"},
		{&MemberExistsError{Name: "n2", PeerAddr: "h:2", Member: "n2", ID: 0xab, MemberPeerAddr: "h:1"}, ErrMemberExists,
			"add member n2: already a member (id " + FormatID(0xab) + ", peer h:1)"},
		{&MemberExistsError{Name: "n4", PeerAddr: "h:1", Member: "n1", ID: 0xab, MemberPeerAddr: "h:1"}, ErrMemberExists,
			"add member n4: peer address h:1 is already used by member n1"},
		{&PreconditionError{Msg: "remove member n1: refused", Err: cause}, ErrPrecondition, "remove member n1: refused"},
		{&UnavailableError{Msg: "watch: this member is shutting down", Err: cause}, ErrUnavailable, "watch: this member is shutting down"},
		{&PeerUnreachableError{Op: "repair member n2", Addr: "h:2", Err: cause}, ErrPeerUnreachable, "repair member n2: cannot reach it at h:2: cause"},
		{&WaitError{MinEpoch: 9, Epoch: 4, End: "when it shut down", Err: ErrUnavailable}, ErrUnavailable, "min_epoch 9: this member was still at epoch 4 when it shut down"},
		{&OpError{Op: "linearizable read", Err: &PreconditionError{Msg: "no"}}, ErrPrecondition, "linearizable read: no"},
	} {
		if tc.err.Error() != tc.msg {
			t.Errorf("%T: message %q, want %q", tc.err, tc.err, tc.msg)
		}
		for _, k := range kinds {
			if got, want := errors.Is(tc.err, k), k == tc.kind; got != want {
				t.Errorf("%T %q: errors.Is(%v) = %v, want %v", tc.err, tc.err, k, got, want)
			}
		}
	}
	for _, err := range []error{&ArgumentError{Err: cause}, &PreconditionError{Err: cause}, &UnavailableError{Err: cause}, &OpError{Op: "x", Err: cause}} {
		if !errors.Is(err, cause) {
			t.Errorf("%T does not match its cause", err)
		}
	}
	if errors.Is(&MemberNotFoundError{}, cause) || errors.Is(&MemberExistsError{}, cause) {
		t.Error("an error without cause matches one")
	}
}

func TestIDIsStableAndNonZero(t *testing.T) {
	if ID("n1") != ID("n1") || ID("n1") == ID("n2") || ID("") == 0 {
		t.Fatal("ID must be stable, distinct and non-zero")
	}
}

// TestStatementLimit: a request with more statements than the limit is
// refused before anything is checked or proposed, with the limit named;
// semicolons inside literals are not statements, and a syntax error is
// reported as one.
func TestStatementLimit(t *testing.T) {
	m := startMember(t, func(c *Config) { c.MaxStatementsPerRequest = 3 })
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	before := m.core.sm.Current().Epoch
	const (
		ok = iota
		limit
		invalidText
	)
	for _, tc := range []struct {
		text string
		want int
	}{
		{"CREATE TABLE ks.a (id int PRIMARY KEY); CREATE TABLE ks.b (id int PRIMARY KEY); CREATE TABLE ks.c (id int PRIMARY KEY);", ok},
		{strings.Repeat("CREATE TABLE ks.t (id int PRIMARY KEY);", 4), limit},
		// Semicolons inside a string literal are not statements.
		{"CREATE TABLE ks.d (id int PRIMARY KEY) WITH comment = ';;;;;';", ok},
		// Text without statements is refused as such, not as a limit.
		{";;;;;;", invalidText},
	} {
		_, err := m.Writes().Execute(ctx, Request{Statements: tc.text})
		if (err == nil) != (tc.want == ok) || errors.Is(err, ErrTooManyStatements) != (tc.want == limit) || invalid(err) != (tc.want == invalidText) {
			t.Errorf("%q: %v (%v), want %v", tc.text, err, kinds(err), []string{"success", "the statement limit", "an invalid request"}[tc.want])
		}
		if tc.want == limit {
			if !errors.Is(err, ErrTooManyStatements) || !strings.Contains(err.Error(), "4 statements in one request, more than the limit of 3 (max_statements_per_request)") {
				t.Errorf("message: %v", err)
			}
		}
	}
	if got := m.core.sm.Current().Epoch; got != before+4 {
		t.Errorf("epoch %d after the requests, want %d (the refused request must change nothing)", got, before+4)
	}
}
