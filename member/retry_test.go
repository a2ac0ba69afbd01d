package member

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// TestSetGuardrailsRetries: a guardrail change retried under its request
// id is answered with its first epoch even after another change was made
// in between (the retry asks for the same settings); the same id asking
// for other settings is refused, and so is an id past the bound.
func TestSetGuardrailsRetries(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	first, _, err := m.Writes().SetGuardrails(ctx, "", "g1", map[string]string{"tables_warn_threshold": "500"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Writes().SetGuardrails(ctx, "", "g2", map[string]string{"tables_fail_threshold": "900"}); err != nil {
		t.Fatal(err)
	}
	again, _, err := m.Writes().SetGuardrails(ctx, "", "g1", map[string]string{" TABLES_WARN_THRESHOLD ": "500"})
	if err != nil || again != first {
		t.Fatalf("retry of g1: epoch %d, %v; want the first answer, epoch %d", again, err, first)
	}
	before := m.core.sm.Current().Epoch
	if _, _, err := m.Writes().SetGuardrails(ctx, "", "g1", map[string]string{"tables_warn_threshold": "600"}); !invalid(err) ||
		!errors.Is(err, metadata.ErrRequestIDReused) {
		t.Fatalf("g1 reused for another change: %v, want InvalidArgument (ErrRequestIDReused)", err)
	}
	if _, _, err := m.Writes().SetGuardrails(ctx, "", strings.Repeat("x", metadata.MaxRequestIDBytes+1), map[string]string{"tables_warn_threshold": "700"}); !invalid(err) {
		t.Fatalf("a request id past the bound: %v, want InvalidArgument", err)
	}
	if got := m.core.sm.Current().Epoch; got != before {
		t.Errorf("epoch %d after the refused changes, want %d", got, before)
	}
}

// TestCommitTimeFailureKeepsWhatApplied: a non-atomic request whose later
// statement fails when it commits (a concurrent change got there first; here
// it is proposed past the pre-check) answers with the results of the
// statements that did apply, and the error says how many.
func TestCommitTimeFailureKeepsWhatApplied(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, err := m.Writes().Execute(ctx, Request{Statements: "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE ks.taken (id int PRIMARY KEY)"}); err != nil {
		t.Fatal(err)
	}
	out, err := m.writes.propose(ctx, metadata.Command{RequestID: "c1", Text: "CREATE TABLE ks.fresh (id int PRIMARY KEY); CREATE TABLE ks.taken (id int PRIMARY KEY)"})
	var se *metadata.StatementError
	if !errors.Is(err, schema.ErrAlreadyExists) || !errors.As(err, &se) || se.Applied != 1 || !strings.Contains(err.Error(), "(the 1 statement(s) before it were applied)") {
		t.Fatalf("commit-time failure: %v", err)
	}
	if len(out.Results) != 1 || out.Results[0].Result.Table != "fresh" || !out.Results[0].Result.Applied {
		t.Fatalf("outcome %+v: want the one statement that applied", out)
	}
}
