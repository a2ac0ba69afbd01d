package metadata

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/cql"
)

// TestPrecheckCountsNothingApplied: the same non-atomic command failing at
// its second statement says one statement applied at commit, where it is
// true, and none when a member refuses it before proposing.
func TestPrecheckCountsNothingApplied(t *testing.T) {
	m, _, _, err := (&ClusterMetadata{Guardrails: guardrails.Defaults()}).Apply(Command{Text: ksDDL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cmd := Command{Text: "CREATE TABLE shop.ok1 (id int PRIMARY KEY); CREATE TABLE shop.bad (id int PRIMARY KEY, id text)"}
	stmts, err := cql.Parse(cmd.Text)
	if err != nil {
		t.Fatal(err)
	}
	_, _, out, err := m.ApplyParsed(cmd, stmts, 2)
	var serr *StatementError
	if !errors.As(err, &serr) || serr.Applied != 1 || len(out.Results) != 1 || !strings.Contains(err.Error(), "(the 1 statement(s) before it were applied)") {
		t.Fatalf("at commit: %v, %d results", err, len(out.Results))
	}
	err = m.Precheck(cmd, stmts)
	if !errors.As(err, &serr) || serr.Applied != 0 || serr.Position != 2 || strings.Contains(err.Error(), "applied") {
		t.Fatalf("pre-check: %v", err)
	}
	if err.Error() != "statement 2 of 2: CREATE TABLE shop.bad: duplicate column name id" {
		t.Errorf("pre-check message %q", err)
	}
	if err := m.Precheck(Command{Text: "CREATE TABLE shop.ok1 (id int PRIMARY KEY)"}, stmts[:1]); err != nil {
		t.Errorf("pre-check of a good command: %v", err)
	}
}

// TestPrecheckAllocs bounds the allocations of the pre-check every DDL
// request pays on the member before it is proposed, over a view past the
// tables warning threshold (so the guardrail warns, as it does on most
// DDL of a large schema), and checks that it answers as DryRun does
// while allocating less: it builds neither the outcome, nor the
// warnings' messages, nor the next metadata, which only a dry run returns.
func TestPrecheckAllocs(t *testing.T) {
	g := guardrails.Defaults()
	g.TablesWarnThreshold = 10
	m := shopWithTables(t, g, 20)
	for _, text := range []string{"CREATE TABLE shop.new (id int PRIMARY KEY, v text)", "CREATE TABLE shop.t_1 (id int PRIMARY KEY)"} {
		cmd := Command{Text: text, RequestID: "r-1"}
		stmts, err := cql.Parse(cmd.Text)
		if err != nil {
			t.Fatal(err)
		}
		_, out, dryErr := m.DryRun(cmd, stmts)
		if err := m.Precheck(cmd, stmts); fmt.Sprint(err) != fmt.Sprint(dryErr) {
			t.Fatalf("%s: pre-check says %v, dry run %v", text, err, dryErr)
		}
		if dryErr == nil && len(out.Warnings) == 0 {
			t.Fatalf("%s: no guardrail warning past the threshold", text)
		}
		pre := testing.AllocsPerRun(100, func() { _ = m.Precheck(cmd, stmts) })
		dry := testing.AllocsPerRun(100, func() { _, _, _ = m.DryRun(cmd, stmts) })
		t.Logf("%s: %.0f allocations to pre-check, %.0f to dry-run", text, pre, dry)
		if raceEnabled {
			continue
		}
		if dryErr == nil && pre > dry-3 {
			t.Errorf("%s: pre-check makes %.0f allocations, dry run %.0f; want at least 3 fewer (no results, warnings or next metadata)", text, pre, dry)
		}
		if pre > maxPrecheckAllocs {
			t.Errorf("%s: pre-check makes %.0f allocations, want at most %d", text, pre, maxPrecheckAllocs)
		}
	}
}

// maxPrecheckAllocs bounds TestPrecheckAllocs' pre-check of one CREATE
// TABLE: 15 when it was set, 23 when the pre-check was a dry run (which
// builds the results, the guardrail warnings and the next metadata).
const maxPrecheckAllocs = 15
