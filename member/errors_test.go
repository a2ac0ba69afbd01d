package member

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

func TestCode(t *testing.T) {
	_, synErr := cql.Parse("CREATE TABLE")
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{synErr, codes.InvalidArgument},
		{&metadata.StatementError{Position: 2, Total: 3, Err: &schema.Error{Code: schema.ErrAlreadyExists}}, codes.AlreadyExists},
		{&schema.Error{Code: schema.ErrNotFound}, codes.NotFound},
		{&schema.Error{Code: schema.ErrInvalid}, codes.InvalidArgument},
		{fmt.Errorf("x: %w", raftlog.ErrNoLeader), codes.Unavailable},
		{fmt.Errorf("%w: %w", ErrNotProposed, context.DeadlineExceeded), codes.Unavailable},
		{&OutcomeUnknownError{RequestID: "r1", Err: fmt.Errorf("%w: %w", raftlog.ErrNoLeader, context.DeadlineExceeded)}, codes.DeadlineExceeded},
		{fmt.Errorf("add member n4: %w: %w", raftlog.ErrOutcomeUnknown, context.DeadlineExceeded), codes.DeadlineExceeded},
		{&limitError{limit: ErrTooManyStatements, msg: "too many"}, codes.ResourceExhausted},
		{status.Error(codes.FailedPrecondition, "a peer's answer"), codes.FailedPrecondition},
		{context.Canceled, codes.Canceled},
		{errors.New("disk on fire"), codes.Internal},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("Code(%v) = %v, want %v", tc.err, got, tc.want)
		}
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
	if _, err := m.Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"}); err != nil {
		t.Fatal(err)
	}
	before := m.sm.Current().Epoch
	for _, tc := range []struct {
		text string
		want codes.Code
	}{
		{"CREATE TABLE ks.a (id int PRIMARY KEY); CREATE TABLE ks.b (id int PRIMARY KEY); CREATE TABLE ks.c (id int PRIMARY KEY);", codes.OK},
		{strings.Repeat("CREATE TABLE ks.t (id int PRIMARY KEY);", 4), codes.ResourceExhausted},
		// Semicolons inside a string literal are not statements.
		{"CREATE TABLE ks.d (id int PRIMARY KEY) WITH comment = ';;;;;';", codes.OK},
		// A syntax error is reported as such, not as a limit.
		{";;;;;;", codes.InvalidArgument},
	} {
		_, err := m.Execute(ctx, Request{Statements: tc.text})
		if Code(err) != tc.want {
			t.Errorf("%q: %v, want %v", tc.text, err, tc.want)
		}
		if tc.want == codes.ResourceExhausted {
			if !errors.Is(err, ErrTooManyStatements) || !strings.Contains(err.Error(), "4 statements in one request, more than the limit of 3 (max_statements_per_request)") {
				t.Errorf("message: %v", err)
			}
		}
	}
	if got := m.sm.Current().Epoch; got != before+4 {
		t.Errorf("epoch %d after the requests, want %d (the refused request must change nothing)", got, before+4)
	}
}
