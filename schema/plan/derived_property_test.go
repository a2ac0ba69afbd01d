package plan

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"pgregory.net/rapid"
)

// TestDiffToDerivedSchemas checks plans between a random schema and one
// derived from it by a few random edits (derive), so that most objects
// change in place. With Complete and AllowRecreate, applying the plan
// gives the derived schema (normalized, see normalize) and planning again
// gives nothing. Without AllowRecreate, an *ImpossibleError names exactly
// the objects the tests' own account finds impossible in place, or else
// the plan is the same. When every edit was safe (additions, property
// changes), the plan drops nothing, and it is the same without Complete.
func TestDiffToDerivedSchemas(t *testing.T) {
	var eq equivalence
	counts := map[string]int{}
	var classes [3]int
	statements := 0
	rapid.Check(t, func(t *rapid.T) {
		a := schematest.Schema(t, schematest.SmallPool, 1, nil)
		b, class := derive(t, a, counts)
		classes[class]++
		full := Options{Complete: true, AllowRecreate: true}
		p, err := Diff(a, b, full)
		if err != nil {
			t.Fatalf("%v\nfrom:\n%s", err, planText(p))
		}
		statements += len(p.Statements)
		got := applyPlan(t, a, p)
		checkEquivalent(t, got, b, a, &eq, p)
		checkConverged(t, got, b, full)

		want := inPlaceImpossible(a, b)
		if class != impossible && len(want) > 0 {
			t.Fatalf("edits of class %d made %v impossible in place", class, sortedKeys(want))
		}
		p2, err := Diff(a, b, Options{Complete: true})
		checkImpossible(t, err, want)
		if err != nil {
			return
		}
		if planText(p2) != planText(p) {
			t.Fatalf("AllowRecreate changed a plan that needs no recreation:\n%s\nversus\n%s", planText(p2), planText(p))
		}
		if class != safe {
			return
		}
		for _, st := range p.Statements {
			if st.Destructive || strings.HasPrefix(st.CQL, "DROP") {
				t.Fatalf("safe edits planned %q:\n%s", st.CQL, planText(p))
			}
		}
		if p3, err := Diff(a, b, Options{}); err != nil || planText(p3) != planText(p) {
			t.Fatalf("safe edits planned differently without Complete (%v):\n%s\nversus\n%s", err, planText(p3), planText(p))
		}
	})
	t.Logf("%d checks: %d strictly equal, then normalized %d ids, %d relation orders, %d defaults; %d statements; by worst edit: %d safe, %d dropping, %d impossible; edits applied: %v",
		eq.checks, eq.strict, eq.ids, eq.orders, eq.defaults, statements, classes[safe], classes[dropping], classes[impossible], counts)
}
