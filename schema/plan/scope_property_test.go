package plan

import (
	"errors"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/internal/schematest"
	"pgregory.net/rapid"
)

// TestDiffKeepsAndScopes checks plans that keep things (no Prune) or
// cover only some keyspaces, between a random schema and another one,
// drawn independently or derived from it: the plan applies, planning
// again from its result plans nothing, keyspaces outside Options.Keyspaces
// are untouched, and an *ImpossibleError with AllowRecreate only reports
// changes no recreation can make (a kept object using a recreated type).
func TestDiffKeepsAndScopes(t *testing.T) {
	refused, plans := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		a := schematest.Schema(t, schematest.SmallPool, 1, nil)
		var b schema.Schema
		if rapid.Bool().Draw(t, "derived") {
			b, _ = derive(t, a, map[string]int{})
		} else {
			b = schematest.Schema(t, schematest.SmallPool, 1000, nil)
		}
		opt := Options{AllowRecreate: true, Prune: rapid.Bool().Draw(t, "prune")}
		if rapid.Bool().Draw(t, "scoped") {
			opt.Keyspaces = rapid.SliceOfNDistinct(rapid.SampledFrom(schematest.SmallPool.Keyspaces), 1, 3, rapid.ID[string]).Draw(t, "keyspaces")
		}
		p, err := Diff(a, b, opt)
		var ie *ImpossibleError
		switch {
		case errors.As(err, &ie):
			for _, c := range ie.Changes {
				if c.Recreatable || opt.Prune {
					t.Fatalf("AllowRecreate refused a recreatable change, or Prune left a kept object: %v", c)
				}
			}
			refused++
			return
		case err != nil:
			t.Fatal(err)
		}
		plans++
		got := applyPlan(t, a, p)
		checkConverged(t, got, b, opt)
		if len(opt.Keyspaces) == 0 {
			return
		}
		for _, k := range a.Keyspaces() {
			if !contains(opt.Keyspaces, k.Name) && describe(got, k.Name) != describe(a, k.Name) {
				t.Fatalf("keyspace %s is outside Options.Keyspaces %v, yet the plan changed it:\n%s", k.Name, opt.Keyspaces, planText(p))
			}
		}
	})
	t.Logf("%d plans applied and converged, %d refused as no recreation can make them", plans, refused)
}
