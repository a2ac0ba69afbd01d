package metadata

import (
	"errors"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/cql"
)

// TestIfEpochAppliesOnlyAtThatEpoch: a command with IfEpoch applies at that
// epoch and is refused, with nothing applied and both epochs named, at any
// other; a pre-check and a dry run refuse it the same way.
func TestIfEpochAppliesOnlyAtThatEpoch(t *testing.T) {
	m0 := &ClusterMetadata{Guardrails: guardrails.Defaults()}
	m1, _, _, err := m0.Apply(Command{Text: ksDDL, HasIfEpoch: true, IfEpoch: 0}, 1)
	if err != nil || m1.Epoch != 1 {
		t.Fatalf("if_epoch 0 at epoch 0: epoch %d, %v; want it applied", m1.Epoch, err)
	}
	stale := Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY); CREATE TABLE shop.b (id int PRIMARY KEY)", HasIfEpoch: true, IfEpoch: 0}
	next, eff, out, err := m1.Apply(stale, 2)
	var moved *EpochMovedError
	if !errors.As(err, &moved) || !errors.Is(err, ErrEpochMoved) || moved.Want != 0 || moved.Have != 1 {
		t.Fatalf("if_epoch 0 at epoch 1: %v, want EpochMovedError{0, 1}", err)
	}
	if next != m1 || len(eff.Changes) != 0 || len(out.Results) != 0 {
		t.Fatalf("a refused if_epoch changed something: epoch %d, %d changes, %d results", next.Epoch, len(eff.Changes), len(out.Results))
	}
	if want := "if_epoch 0: the schema is at epoch 1, so it changed since (plan again); nothing of this request was applied"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	stmts, err := cql.Parse(stale.Text)
	if err != nil {
		t.Fatal(err)
	}
	if err := m1.Precheck(stale, stmts); !errors.Is(err, ErrEpochMoved) {
		t.Errorf("pre-check: %v, want ErrEpochMoved", err)
	}
	if _, _, err := m1.DryRun(stale, stmts); !errors.Is(err, ErrEpochMoved) {
		t.Errorf("dry run: %v, want ErrEpochMoved", err)
	}
	stale.IfEpoch = 1
	if m2, _, out, err := m1.Apply(stale, 2); err != nil || m2.Epoch != 3 || len(out.Results) != 2 {
		t.Fatalf("if_epoch 1 at epoch 1: epoch %d, %d results, %v; want both applied", m2.Epoch, len(out.Results), err)
	}
}
