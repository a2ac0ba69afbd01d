package member

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema/plan"
)

// TestPlanChecksWhatApplyingWouldDo: a plan carries the guardrail warnings
// applying it would raise and the digest it leads to (the one the schema
// has once the plan is applied at its epoch); a plan the guardrails would
// refuse is refused; a change Cassandra cannot make in place is
// FailedPrecondition unless AllowRecreate; a desired schema that does not
// load is InvalidArgument.
func TestPlanChecksWhatApplyingWouldDo(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	if _, _, err := m.Writes().SetGuardrails(ctx, "test", "", map[string]string{"tables_warn_threshold": "1", "tables_fail_threshold": "3"}); err != nil {
		t.Fatal(err)
	}
	desired := "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" +
		"CREATE TABLE shop.a (id int PRIMARY KEY, v text); CREATE TABLE shop.b (k int, c int, PRIMARY KEY (k, c))"
	p, err := m.Writes().Plan(ctx, PlanRequest{Desired: desired})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Statements) != 3 || p.Destructive || !strings.Contains(strings.Join(p.Warnings, "\n"), "tables_warn_threshold") {
		t.Fatalf("plan %+v: want 3 statements, not destructive, the tables_warn_threshold warning", p)
	}
	out, err := m.Writes().Execute(ctx, Request{Statements: JoinStatements(p.Statements), Atomic: true, HasIfEpoch: true, IfEpoch: p.Epoch})
	if err != nil {
		t.Fatalf("applying the plan: %v", err)
	}
	if got := m.core.sm.Current().Schema.Digest(); got != p.Digest || out.Epoch != p.Epoch+1 {
		t.Fatalf("applied: epoch %d digest %x; the plan said epoch %d+1 digest %x", out.Epoch, got[:4], p.Epoch, p.Digest[:4])
	}
	if again, err := m.Writes().Plan(ctx, PlanRequest{Desired: desired}); err != nil || len(again.Statements) != 0 || again.Digest != p.Digest {
		t.Fatalf("plan once applied: %+v, %v; want nothing to do", again, err)
	}

	more := desired + "; CREATE TABLE shop.c (id int PRIMARY KEY); CREATE TABLE shop.d (id int PRIMARY KEY)"
	if _, err := m.Writes().Plan(ctx, PlanRequest{Desired: more}); err == nil || !strings.Contains(err.Error(), "tables_fail_threshold") {
		t.Errorf("a plan past tables_fail_threshold: %v, want it refused naming the guardrail", err)
	}
	reordered := strings.Replace(desired, "PRIMARY KEY (k, c))", "PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)", 1)
	if _, err := m.Writes().Plan(ctx, PlanRequest{Desired: reordered}); !errors.Is(err, ErrPlanRefused) || errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "--allow-recreate") {
		t.Errorf("a clustering order change: %v (%v), want a refused plan naming --allow-recreate", err, kinds(err))
	}
	p, err = m.Writes().Plan(ctx, PlanRequest{Desired: reordered, AllowRecreate: true})
	if err != nil || !p.Destructive || !strings.HasPrefix(p.Statements[0], "DROP TABLE shop.b") {
		t.Errorf("the same with AllowRecreate: %+v, %v; want DROP TABLE shop.b first, destructive", p, err)
	}
	if _, err := m.Writes().Plan(ctx, PlanRequest{Desired: "CREATE TABLE nowhere.t (id int PRIMARY KEY)"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a desired schema that does not load: %v (%v), want an *ArgumentError", err, kinds(err))
	}
}

// TestPlanFilesAndColumns: a plan reads several files as one desired
// schema and names the file of an error, refuses a request that gives the
// desired schema twice, keeps a column the desired table lacks (a note, no
// statement) unless DropColumns, and carries the digest of the schema it
// starts from.
func TestPlanFilesAndColumns(t *testing.T) {
	m := startMember(t, nil)
	ctx := testContext(t)
	ks := "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"
	if _, err := m.Writes().Execute(ctx, Request{Statements: ks + "; CREATE TABLE shop.t (id int PRIMARY KEY, v text, old text)"}); err != nil {
		t.Fatal(err)
	}
	files := []plan.Source{{Name: "a.cql", Text: ks}, {Name: "b.cql", Text: "CREATE TABLE shop.t (id int PRIMARY KEY, v text, w int)"}}
	p, err := m.Writes().Plan(ctx, PlanRequest{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if base := m.core.sm.Current().Schema.Digest(); p.BaseDigest != base || p.Epoch != 2 ||
		strings.Join(p.Statements, ";") != "ALTER TABLE shop.t ADD w int" || len(p.Warnings) > 0 ||
		!slices.Contains(p.Notes, "table shop.t keeps column old, which the desired table lacks (--drop-columns drops it)") {
		t.Fatalf("plan of two files: %+v (base digest %x)", p, base[:4])
	}
	p, err = m.Writes().Plan(ctx, PlanRequest{Files: files, DropColumns: true})
	if err != nil || strings.Join(p.Statements, ";") != "ALTER TABLE shop.t DROP old;ALTER TABLE shop.t ADD w int" || !p.Destructive {
		t.Fatalf("with DropColumns: %+v, %v", p, err)
	}
	_, err = m.Writes().Plan(ctx, PlanRequest{Files: append(files, plan.Source{Name: "c.cql", Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"})})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "c.cql: statement 1 (line 1:1): CREATE TABLE shop.t: table already exists: it is defined twice, first at b.cql: statement 1 (line 1:1)") {
		t.Errorf("a table defined in two files: %v", err)
	}
	if _, err := m.Writes().Plan(ctx, PlanRequest{Files: files, Desired: ks}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("the desired schema given twice: %v", err)
	}
}
