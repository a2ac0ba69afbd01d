package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"pgregory.net/rapid"
)

// TestDiffKeepsAndScopes checks plans that keep things (no Prune, no
// DropColumns) or cover only some keyspaces, between a random schema and
// another one, drawn independently or derived from it: the plan applies,
// planning again from its result plans nothing, keyspaces outside
// Options.Keyspaces are untouched, a table that stays keeps every column
// without DropColumns, and an *ImpossibleError with AllowRecreate only
// reports changes no recreation can make (a kept object or column using a
// recreated type).
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
		opt := Options{AllowRecreate: true, Prune: rapid.Bool().Draw(t, "prune"), DropColumns: rapid.Bool().Draw(t, "dropColumns")}
		if rapid.Bool().Draw(t, "scoped") {
			opt.Keyspaces = rapid.SliceOfNDistinct(rapid.SampledFrom(schematest.SmallPool.Keyspaces), 1, 3, rapid.ID[string]).Draw(t, "keyspaces")
		}
		p, err := Diff(a, b, opt)
		var ie *ImpossibleError
		switch {
		case errors.As(err, &ie):
			for _, c := range ie.Changes {
				if c.Recreatable || opt.Prune && opt.DropColumns {
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
		if !opt.DropColumns {
			checkColumnsKept(t, a, got, p)
		}
		if len(opt.Keyspaces) == 0 {
			return
		}
		for _, k := range a.Keyspaces() {
			if !contains(opt.Keyspaces, k.Name) && describeKS(got, k.Name) != describeKS(a, k.Name) {
				t.Fatalf("keyspace %s is outside Options.Keyspaces %v, yet the plan changed it:\n%s", k.Name, opt.Keyspaces, planText(p))
			}
		}
	})
	t.Logf("%d plans applied and converged, %d refused as no recreation can make them", plans, refused)
}

// checkColumnsKept fails unless every table of from that got has with
// its id (neither dropped nor recreated) keeps all its columns, and p has
// no ALTER TABLE ... DROP.
func checkColumnsKept(t tb, from, got schema.Schema, p Plan) {
	t.Helper()
	for _, st := range p.Statements {
		if strings.HasPrefix(st.CQL, "ALTER TABLE ") && strings.Contains(st.CQL, " DROP ") && !strings.Contains(st.CQL, " DROP MASKED") {
			t.Fatalf("a plan without DropColumns drops columns: %s\n%s", st.CQL, planText(p))
		}
	}
	for _, k := range from.Keyspaces() {
		for _, old := range k.Tables() {
			now, ok := got.Table(k.Name, old.Name)
			if !ok || now.ID != old.ID {
				continue
			}
			for _, c := range old.Columns {
				if _, ok := now.Column(c.Name); !ok {
					t.Fatalf("table %s lost column %s without DropColumns:\n%s", tableName(old), c.Name, planText(p))
				}
			}
		}
	}
}
