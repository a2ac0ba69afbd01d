package plan

import (
	"strings"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// applyEpoch is the epoch tests apply plans at, so that the ids of the
// tables a plan creates without an id are recognisable (applyID).
const applyEpoch = 1 << 40

// applyID reports whether id is one a table created by applyPlan without
// an id got.
func applyID(id schema.UUID) bool {
	return strings.HasPrefix(id.String(), schema.TableID(applyEpoch, 0).String()[:28])
}

// applyPlan applies p's statements to s as a server would: each parsed
// from its text as exactly one statement, admitted, then applied.
func applyPlan(t tb, s schema.Schema, p Plan) schema.Schema {
	t.Helper()
	for i, st := range p.Statements {
		if strings.HasSuffix(strings.TrimSpace(st.CQL), ";") {
			t.Fatalf("statement %d ends with ';': %s", i+1, st.CQL)
		}
		parsed, err := cql.Parse(st.CQL)
		if err != nil || len(parsed) != 1 {
			t.Fatalf("statement %d does not parse as one statement (%v):\n%s", i+1, err, st.CQL)
		}
		if err := schema.Admit(parsed[0].Statement); err != nil {
			t.Fatalf("statement %d is not admitted: %v\n%s", i+1, err, st.CQL)
		}
		s, _, _, err = schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: applyEpoch, Seq: uint32(i)})
		if err != nil {
			t.Fatalf("statement %d does not apply: %v\n%s\nplan:\n%s", i+1, err, st.CQL, planText(p))
		}
	}
	return s
}

// planText is the plan's statements, one per paragraph, then its
// warnings, as the golden files show it.
func planText(p Plan) string {
	var b strings.Builder
	for _, st := range p.Statements {
		if st.Destructive {
			b.WriteString("-- destructive\n")
		}
		b.WriteString(st.CQL)
		b.WriteString(";\n\n")
	}
	for _, w := range p.Warnings {
		b.WriteString("-- warning: ")
		b.WriteString(w)
		b.WriteString("\n")
	}
	for _, n := range p.Notes {
		b.WriteString("-- note: ")
		b.WriteString(n)
		b.WriteString("\n")
	}
	return b.String()
}

// mustLoad is Load for test input that must be valid.
func mustLoad(t tb, text string) schema.Schema {
	t.Helper()
	s, err := Load(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return s
}

// equivalence counts what normalize had to make alike, over a test.
type equivalence struct {
	checks, strict        int
	ids, orders, defaults int // orders: of a view's relations
}

// normalize returns got, a schema a plan from from made, with what the
// planner's documented rules leave different from want made as in want,
// after checking that those rules allowed it (the order of a table's
// columns is not among them: ALTER TABLE ADD appends to the stored order,
// but DESCRIBE lists the columns in Cassandra's order, whatever the
// stored one):
//
//   - a table's id: got keeps from's id for a table changed in place, and
//     has a new one (applyID) for a table created when want's id is
//     unassigned, is the id of the table it replaces, or is taken;
//   - the order of a view's relations, when the views are defined alike
//     (the planner keeps a view whose relations are only reordered);
//   - a property want leaves out that got has at its default (a reset).
//
// It fails when got's id breaks the rules.
func normalize(t tb, got, want, from schema.Schema, eq *equivalence) schema.Schema {
	t.Helper()
	fromIDs := tableIDs(from)
	wantIDs := tableIDs(want)
	b := schema.NewBuilder(got)
	for _, k := range got.Keyspaces() {
		wk, ok := want.Keyspace(k.Name)
		if !ok {
			continue
		}
		for _, gt := range k.Tables() {
			wt, ok := wk.Table(gt.Name)
			if !ok {
				continue
			}
			n := *gt
			changed := false
			if gt.ID != wt.ID {
				ft, inFrom := from.Table(k.Name, gt.Name)
				allowed := inFrom && ft.ID == gt.ID ||
					applyID(gt.ID) && (UnassignedID(wt.ID) || inFrom && ft.ID == wt.ID || fromIDs[wt.ID] != "" || wantIDs[wt.ID] != tableName(wt))
				if !allowed {
					t.Fatalf("table %s has id %s; want %s (the current table has %v)", tableName(gt), gt.ID, wt.ID, fromIDs)
				}
				n.ID = wt.ID
				changed = true
				eq.ids++
			}
			if gt.View() != nil && wt.View() != nil && schema.SameViewDefinition(gt, wt) && schema.WhereText(gt.View().Where) != schema.WhereText(wt.View().Where) {
				v := *gt.View()
				v.Where = wt.View().Where
				n.SetView(&v)
				changed = true
				eq.orders++
			}
			for name, v := range gt.Options() {
				if _, set := wt.Options()[name]; !set && propertyDefaults[name] == v {
					if len(n.Options()) == len(gt.Options()) {
						n.SetOptions(copyOptions(gt.Options()))
					}
					delete(n.Options(), name)
					changed = true
					eq.defaults++
				}
			}
			if len(n.Options()) == 0 {
				n.SetOptions(nil)
			}
			if changed {
				if err := b.PutTable(&n); err != nil {
					t.Fatalf("normalizing %s: %v", tableName(gt), err)
				}
			}
		}
	}
	return b.Schema()
}

// copyOptions returns a copy of m.
func copyOptions(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// checkEquivalent fails unless got, normalized, describes as want does.
func checkEquivalent(t tb, got, want, from schema.Schema, eq *equivalence, p Plan) {
	t.Helper()
	eq.checks++
	if describe.Schema(got) == describe.Schema(want) {
		eq.strict++
		return
	}
	norm := normalize(t, got, want, from, eq)
	if g, w := describe.Schema(norm), describe.Schema(want); g != w {
		t.Fatalf("the plan's result differs from the desired schema\nplan:\n%s\ngot (normalized):\n%s\nwant:\n%s\nfrom:\n%s", planText(p), g, w, describe.Schema(from))
	}
}

// mustUUID returns the id UUID text s names, as a table holds it.
func mustUUID(t tb, s string) schema.UUID {
	t.Helper()
	u, ok := schema.ParseUUID(s)
	if !ok {
		t.Fatalf("%q is not UUID text", s)
	}
	return u
}
