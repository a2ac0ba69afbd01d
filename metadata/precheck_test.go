package metadata

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/cql"
)

// TestPrecheckCountsNothingApplied: the same non-atomic command failing at
// its second statement says one statement applied at commit, where it is
// true, and none when a member refuses it before proposing.
func TestPrecheckCountsNothingApplied(t *testing.T) {
	m, _, _, err := (&ClusterMetadata{Guardrails: guardrails.Defaults()}).Execute(Command{Text: ksDDL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cmd := Command{Text: "CREATE TABLE shop.ok1 (id int PRIMARY KEY); CREATE TABLE shop.bad (id int PRIMARY KEY, id text)"}
	stmts, err := cql.Parse(cmd.Text)
	if err != nil {
		t.Fatal(err)
	}
	_, _, out, err := m.ExecuteParsed(cmd, stmts, 2)
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
