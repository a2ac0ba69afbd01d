package metadata

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/ddlgen"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
	"github.com/metalog/metalog/schema/plan"
)

// TestDiffBetweenEpochsOfARandomRun: for random DDL histories, the diff
// between the schemas at two epochs, taken as `metalog diff --from-epoch A
// --to-epoch B` takes them (the history's schema at each epoch, described
// and loaded again), applied to the schema at A gives the schema at B; the
// diff of an epoch with itself is empty. Schemas are compared object by
// object as DESCRIBE shows them, but for what Cassandra does not tell
// apart (docs/planner.md): table ids, the order of non-key columns, and
// table properties at their default.
func TestDiffBetweenEpochsOfARandomRun(t *testing.T) {
	var runs, statements, destructive int
	defer func() {
		t.Logf("%d runs: %d statements planned, %d destructive", runs, statements, destructive)
	}()
	rapid.Check(t, func(rt *rapid.T) {
		sm, err := Open(Config{Dir: t.TempDir(), FlushWindow: time.Hour})
		if err != nil {
			rt.Fatal(err)
		}
		defer sm.Close()
		a := &applier{t: t, sm: sm}
		for i := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			cmd := Command{Text: ddlgen.Statement(rt, fmt.Sprint("stmt", i))}
			if rapid.Bool().Draw(rt, fmt.Sprint("atomic", i)) {
				cmd.Text += "; " + ddlgen.Statement(rt, fmt.Sprint("more", i))
				cmd.Atomic = true
			}
			a.apply(cmd)
		}
		end := sm.Current().Epoch
		from := rapid.Uint64Range(0, end).Draw(rt, "from")
		to := rapid.Uint64Range(0, end).Draw(rt, "to")
		described := func(epoch uint64) (string, schema.Schema) {
			s, err := sm.SchemaAt(sm.Current(), epoch)
			if err != nil {
				rt.Fatalf("schema at %d: %v", epoch, err)
			}
			text := describe.Schema(s)
			loaded, err := plan.Load(text)
			if err != nil {
				rt.Fatalf("loading the schema at %d: %v\n%s", epoch, err, text)
			}
			return text, loaded
		}
		fromText, fromSchema := described(from)
		toText, toSchema := described(to)
		if self, err := plan.Diff(fromSchema, fromSchema, plan.Options{Complete: true, AllowRecreate: true}); err != nil || len(self.Statements) != 0 {
			rt.Fatalf("diff of epoch %d with itself: %d statements, %v", from, len(self.Statements), err)
		}
		p, err := plan.Diff(fromSchema, toSchema, plan.Options{Complete: true, AllowRecreate: true})
		if err != nil {
			rt.Fatalf("diff %d..%d: %v", from, to, err)
		}
		runs++
		statements += len(p.Statements)
		s := fromSchema
		for i, st := range p.Statements {
			if st.Destructive {
				destructive++
			}
			parsed, err := cql.Parse(st.CQL)
			if err != nil || len(parsed) != 1 {
				rt.Fatalf("diff %d..%d statement %d does not parse as one (%v): %s", from, to, i+1, err, st.CQL)
			}
			if s, _, _, err = schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: end + 1, Seq: uint32(i)}); err != nil {
				rt.Fatalf("diff %d..%d statement %d does not apply: %v\n%s", from, to, i+1, err, st.CQL)
			}
		}
		if diff := cmp.Diff(objectsWithoutDefaults(toSchema), objectsWithoutDefaults(s)); diff != "" {
			rt.Fatalf("the diff %d..%d applied to the schema at %d differs from the schema at %d (-want +got):\n%s\nfrom:\n%s\nto:\n%s",
				from, to, from, to, diff, fromText, toText)
		}
	})
}

// objectsWithoutDefaults is objectsOf(s) with every table described
// without its id (a table a diff drops and creates again gets a new one
// from the cluster, as in Cassandra), with its non-key columns by name,
// and without the properties set to Cassandra's default.
func objectsWithoutDefaults(s schema.Schema) map[objectKey]string {
	out := objectsOf(s)
	for _, t := range tablesOf(s) {
		c := *t
		// Key columns keep their order; the others are listed by name,
		// as Cassandra's DESCRIBE does (ADD appends).
		c.Columns = slices.Clone(t.Columns)
		slices.SortStableFunc(c.Columns, func(a, b schema.Column) int {
			ka, kb := a.Kind == schema.PartitionKey || a.Kind == schema.Clustering, b.Kind == schema.PartitionKey || b.Kind == schema.Clustering
			switch {
			case ka && kb:
				return 0
			case ka != kb:
				if ka {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Name, b.Name)
		})
		opts := map[string]string{}
		for name, v := range t.Options() {
			if def, ok := plan.PropertyDefault(name); !ok || v != def {
				opts[name] = v
			}
		}
		c.SetOptions(opts)
		out[objectKey{"table", t.Keyspace, t.Name}] = (describe.Options{OmitID: true}).Table(&c)
	}
	return out
}

// tablesOf lists every table of s.
func tablesOf(s schema.Schema) []*schema.Table {
	var out []*schema.Table
	for _, k := range s.Keyspaces() {
		out = append(out, k.Tables()...)
	}
	return out
}
