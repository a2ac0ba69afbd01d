package metadata

import (
	"fmt"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/cql"
)

// TestPreparedApplyAllocs: applying a command with the result its
// pre-check prepared allocates nothing, and preparing it costs less
// than the cheap pre-check and the execution on apply it replaces.
func TestPreparedApplyAllocs(t *testing.T) {
	m := shopWithTables(t, guardrails.Defaults(), 20)
	cmd := Command{Text: "CREATE TABLE shop.new (id int PRIMARY KEY, v text)", RequestID: "r-1"}
	stmts, err := cql.Parse(cmd.Text)
	if err != nil {
		t.Fatal(err)
	}
	data := cmd.Marshal(nil)
	const runs = 100
	preps := make([]*Prepared, runs+1) // AllocsPerRun runs once more
	for i := range preps {
		if preps[i], err = m.Prepare(cmd, stmts, data); err != nil {
			t.Fatal(err)
		}
	}
	e := new(Expected)
	e.Add(preps[0])
	e.Remove(preps[0]) // the map exists
	next := 0
	taken := testing.AllocsPerRun(runs, func() {
		e.Add(preps[next])
		next++
		if _, _, _, err := e.execute(m, cmd, m.Index+1, data); err != nil {
			t.Fatal(err)
		}
	})
	if used, executed := e.Counts(); used != runs+1 || executed != 0 {
		t.Fatalf("%d prepared results used, %d executed; want %d and 0", used, executed, runs+1)
	}
	executed := testing.AllocsPerRun(runs, func() { _, _, _, _ = m.Apply(cmd, m.Index+1) })
	prepare := testing.AllocsPerRun(runs, func() { _, _ = m.Prepare(cmd, stmts, data) })
	precheck := testing.AllocsPerRun(runs, func() { _ = m.Precheck(cmd, stmts) })
	t.Logf("prepare %.0f + apply taking it %.0f allocations, against pre-check %.0f + apply executing %.0f", prepare, taken, precheck, executed)
	if raceEnabled {
		return
	}
	if taken != 0 {
		t.Errorf("an apply taking the prepared result makes %.0f allocations, want 0", taken)
	}
	if prepare+taken >= precheck+executed {
		t.Errorf("prepare and apply make %.0f allocations, no fewer than the pre-check and an execution (%.0f)", prepare+taken, precheck+executed)
	}
}

// shopWithTables is the metadata with keyspace shop and n tables in it,
// shop.t_0 to shop.t_(n-1), under guardrails g.
func shopWithTables(t *testing.T, g guardrails.Settings, n int) *ClusterMetadata {
	t.Helper()
	m, _, _, err := (&ClusterMetadata{Guardrails: g}).Apply(Command{Text: ksDDL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if m, _, _, err = m.Apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY)", i)}, m.Index+1); err != nil {
			t.Fatal(err)
		}
	}
	return m
}
