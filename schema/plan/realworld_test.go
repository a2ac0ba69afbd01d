package plan

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata")

// apps are the schemas of testdata: <name>.v1.cql, an application's older
// schema, and <name>.v2.cql, its newer one, planned with opt; the plan
// from v1 to v2 is kept in <name>.plan.txt for reviewers to read.
var apps = []struct {
	name string
	opt  Options
	// recreated names the table v2 can only get by recreation, if any.
	recreated string
}{
	{name: "vidshare", opt: Options{Prune: true, DropColumns: true}},
	{name: "telemetry", opt: Options{Prune: true, DropColumns: true}},
	{name: "chat", opt: Options{Prune: true, DropColumns: true, AllowRecreate: true}, recreated: "chat.rooms_by_user"},
}

// TestRealWorldSchemas plans three applications' schemas, from empty and
// from v1 (as a cluster holds it, with the ids it gave) to v2: applying
// each plan gives v2 as Load reads it (normalized, see normalize), a
// second plan is empty, and the v1 to v2 plan is the golden one
// (go test -update rewrites it).
func TestRealWorldSchemas(t *testing.T) {
	for _, app := range apps {
		t.Run(app.name, func(t *testing.T) {
			v1text := readFile(t, app.name+".v1.cql")
			v2 := mustLoad(t, readFile(t, app.name+".v2.cql"))
			eq := &equivalence{}

			p, err := Diff(schema.Schema{}, v2, app.opt)
			if err != nil {
				t.Fatal(err)
			}
			got := applyPlan(t, schema.Schema{}, p)
			checkEquivalent(t, got, v2, schema.Schema{}, eq, p)
			checkConverged(t, got, v2, app.opt)

			cur := asCluster(t, v1text)
			p, err = Diff(cur, v2, app.opt)
			if err != nil {
				t.Fatal(err)
			}
			got = applyPlan(t, cur, p)
			checkEquivalent(t, got, v2, cur, eq, p)
			checkConverged(t, got, v2, app.opt)
			t.Logf("%d statements; normalized %d ids, %d relation orders, %d defaults", len(p.Statements), eq.ids, eq.orders, eq.defaults)

			if p1, err := Diff(mustLoad(t, v1text), v2, app.opt); err != nil || planText(p1) != planText(p) {
				t.Errorf("the plan from v1 as loaded differs from the one from v1 as a cluster holds it (%v):\n%s", err, planText(p1))
			}
			if app.recreated != "" {
				_, err := Diff(cur, v2, Options{Prune: true, DropColumns: true})
				var ie *ImpossibleError
				if !errors.As(err, &ie) || len(ie.Changes) != 1 || ie.Changes[0].Object != app.recreated {
					t.Errorf("without AllowRecreate: want %s impossible in place, got %v", app.recreated, err)
				}
			}
			checkGolden(t, filepath.Join("testdata", app.name+".plan.txt"),
				"-- The plan from "+app.name+".v1.cql to "+app.name+".v2.cql, "+optionsText(app.opt)+".\n-- Regenerate with: go test ./schema/plan -run TestRealWorldSchemas -update\n\n"+planText(p))
		})
	}
}

// asCluster applies text's statements as a cluster does, each at its own
// epoch, so that its tables get real ids.
func asCluster(t *testing.T, text string) schema.Schema {
	t.Helper()
	parsed, err := cql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var s schema.Schema
	for i, p := range parsed {
		if s, _, _, err = schema.Apply(s, p.Statement, schema.Env{Epoch: uint64(i + 1)}); err != nil {
			t.Fatalf("%s: %v", p.Text, err)
		}
	}
	return s
}

// optionsText names the options set in opt, for the golden files' header.
func optionsText(opt Options) string {
	var names []string
	for _, o := range []struct {
		on   bool
		name string
	}{{opt.Prune, "Prune"}, {opt.DropColumns, "DropColumns"}, {opt.AllowRecreate, "AllowRecreate"}} {
		if o.on {
			names = append(names, o.name)
		}
	}
	if len(names) == 0 {
		return "with no options"
	}
	text := "with " + strings.Join(names[:len(names)-1], ", ")
	if len(names) > 1 {
		text += " and "
	}
	return text + names[len(names)-1]
}

// readFile returns the text of testdata file name.
func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkGolden compares got with the golden file at path, or rewrites it
// with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, got)
	}
}
