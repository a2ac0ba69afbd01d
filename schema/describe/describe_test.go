package describe_test

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
	"pgregory.net/rapid"
)

// withoutID is what a table's statement without its id has always been:
// the statement with it, the "WITH ID = ..." cut out, and the first
// property after it, if any, moved up after WITH.
func withoutID(t *schema.Table) string {
	full := describe.Table(t)
	i := strings.LastIndex(full, ") WITH ID = "+t.ID.String())
	props := full[i+len(") WITH ID = "+t.ID.String()) : len(full)-len(";\n")]
	rest, ok := strings.CutPrefix(props, "\n    AND ")
	if !ok {
		return full[:i] + ");\n"
	}
	return full[:i] + ") WITH " + rest + ";\n"
}

// TestOmitID checks that a table rendered without its id is the text
// with it, less the id: what the planner sends for a table the cluster
// is to assign an id to.
func TestOmitID(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ks := schematest.CreateKeyspace(rt)
		s, _, _, err := schema.Apply(schema.Schema{}, ks, schema.Env{Epoch: 1})
		if err != nil {
			rt.Fatal(err)
		}
		s, _, _, err = schema.Apply(s, schematest.CreateTable(rt, ks.Name), schema.Env{Epoch: 2})
		if err != nil {
			rt.Skip(err)
		}
		for _, k := range s.Keyspaces() {
			for _, tbl := range k.Tables() {
				got := describe.Options{OmitID: true}.Table(tbl)
				if want := withoutID(tbl); got != want {
					rt.Fatalf("without id:\n%s\nwant:\n%s", got, want)
				}
				if strings.Contains(got, "ID =") {
					rt.Fatalf("without id:\n%s", got)
				}
			}
		}
	})
}
