package plan

import (
	"errors"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// TestDiffBetweenRandomSchemas draws two schemas independently from small
// name pools (so that they share keyspaces, types, tables and indexes)
// and checks, for a Complete plan: with AllowRecreate, applying the plan
// to the first gives the second (normalized as the planner's rules say,
// see normalize) and planning again from the result gives nothing; the
// plan of a schema to itself is empty; and without AllowRecreate, either
// the same holds or an *ImpossibleError names exactly the objects the
// tests' own account (inPlaceImpossible) finds impossible in place.
func TestDiffBetweenRandomSchemas(t *testing.T) {
	var eq equivalence
	var stats schematest.Stats
	impossible, statements, destructive := 0, 0, 0
	rapid.Check(t, func(t *rapid.T) {
		a := schematest.Schema(t, schematest.SmallPool, 1, &stats)
		b := schematest.Schema(t, schematest.SmallPool, 1000, &stats)
		for _, s := range []schema.Schema{a, b} {
			for _, opt := range []Options{{}, {Prune: true}, {DropColumns: true}, {Complete: true}, {Complete: true, AllowRecreate: true}} {
				p, err := Diff(s, s, opt)
				if err != nil || !p.Empty() || len(p.Warnings)+len(p.Notes) > 0 {
					t.Fatalf("plan of a schema to itself with %+v: %v\n%s", opt, err, planText(p))
				}
			}
		}
		p, err := Diff(a, b, Options{Complete: true, AllowRecreate: true})
		if err != nil {
			t.Fatalf("Complete, AllowRecreate: %v\nfrom:\n%s\nto:\n%s", err, describe.Schema(a), describe.Schema(b))
		}
		statements += len(p.Statements)
		if p.Destructive {
			destructive++
		}
		got := applyPlan(t, a, p)
		checkEquivalent(t, got, b, a, &eq, p)
		checkConverged(t, got, b, Options{Complete: true, AllowRecreate: true})

		want := inPlaceImpossible(a, b)
		p2, err := Diff(a, b, Options{Complete: true})
		checkImpossible(t, err, want)
		if err != nil {
			impossible++
			return
		}
		if planText(p2) != planText(p) {
			t.Fatalf("AllowRecreate changed a plan that needs no recreation:\n%s\nversus\n%s", planText(p2), planText(p))
		}
	})
	t.Logf("%d pairs checked: %d strictly equal, then normalized %d ids, %d relation orders, %d defaults; %d needed recreation; %d statements, %d destructive plans; drawn statements %d applied, %d refused: %v",
		eq.checks, eq.strict, eq.ids, eq.orders, eq.defaults, impossible, statements, destructive, stats.Applied, stats.Refused, stats.Kinds)
}

// checkConverged fails unless planning again from got to want is empty.
func checkConverged(t tb, got, want schema.Schema, opt Options) {
	t.Helper()
	p, err := Diff(got, want, opt)
	if err != nil || !p.Empty() {
		t.Fatalf("planning again from the plan's result is not empty: %v\n%s", err, planText(p))
	}
}

// checkImpossible fails unless err is an *ImpossibleError naming exactly
// the objects of want (recreatable), or nil when want is empty.
func checkImpossible(t tb, err error, want map[string]bool) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("no change is impossible in place, yet: %v", err)
		}
		return
	}
	var ie *ImpossibleError
	if !errors.As(err, &ie) {
		t.Fatalf("want an *ImpossibleError for %v, got %v", sortedKeys(want), err)
	}
	got := map[string]bool{}
	for _, c := range ie.Changes {
		if !c.Recreatable {
			t.Fatalf("a Complete plan cannot have unrecreatable changes: %v", c)
		}
		got[c.Object] = true
	}
	if len(got) != len(want) {
		t.Fatalf("impossible in place: got %v, want %v\n%v", sortedKeys(got), sortedKeys(want), err)
	}
	for o := range want {
		if !got[o] {
			t.Fatalf("impossible in place: got %v, want %v\n%v", sortedKeys(got), sortedKeys(want), err)
		}
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
