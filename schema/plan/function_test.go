package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// fn is a function definition of the tests: name(args) returning ret.
func fn(name, args, ret, body string) string {
	return "CREATE FUNCTION ks." + name + "(" + args + ") CALLED ON NULL INPUT RETURNS " + ret + " LANGUAGE java AS '" + body + "';\n"
}

// TestFunctionsCreated: functions and aggregates the desired schema adds
// are created after the types they use, aggregates after their
// functions, and before the tables.
func TestFunctionsCreated(t *testing.T) {
	from := mustLoad(t, ksHead)
	to := mustLoad(t, ksHead+`CREATE TYPE ks.acc (n int, sum bigint);
`+fn("step", "s acc, v int", "acc", "return s;")+fn("done", "s acc", "double", "return 0.0;")+`
CREATE AGGREGATE ks.average(int) SFUNC step STYPE acc FINALFUNC done INITCOND {n: 0, sum: 0};
CREATE TABLE ks.t (id int PRIMARY KEY, a frozen<acc>);`)
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"CREATE TYPE ks.acc (\n    n int,\n    sum bigint\n)",
		"CREATE FUNCTION ks.done(s acc)\n    CALLED ON NULL INPUT\n    RETURNS double\n    LANGUAGE java\n    AS $$return 0.0;$$",
		"CREATE FUNCTION ks.step(s acc, v int)\n    CALLED ON NULL INPUT\n    RETURNS acc\n    LANGUAGE java\n    AS $$return s;$$",
		"CREATE AGGREGATE ks.average(int)\n    SFUNC step\n    STYPE acc\n    FINALFUNC done\n    INITCOND {n: 0, sum: 0}",
		"CREATE TABLE ks.t (\n    id int PRIMARY KEY,\n    a frozen<acc>\n)",
	})
	samePlanResult(t, from, to, p)
}

// TestFunctionsChanged: a changed body or directive-preserving change is
// CREATE OR REPLACE; a changed return type or null-input directive is
// DROP and CREATE with a note, and the aggregate using the function is
// recreated around it (dropped first, created after); an aggregate whose
// return type changes is recreated too.
func TestFunctionsChanged(t *testing.T) {
	from := mustLoad(t, ksHead+fn("body", "a int", "int", "return a;")+fn("ret", "s int, a int", "int", "return s;")+fn("fin", "s int", "int", "return s;")+
		"CREATE AGGREGATE ks.agg(int) SFUNC ret STYPE int INITCOND 0;\nCREATE AGGREGATE ks.agg2(int) SFUNC ret STYPE int FINALFUNC fin INITCOND 1;")
	to := mustLoad(t, ksHead+fn("body", "a int", "int", "return a + 1;")+fn("ret", "s int, a int", "int", "return s;")+fn("fin", "s int", "text", "return \"\";")+
		"CREATE AGGREGATE ks.agg(int) SFUNC ret STYPE int INITCOND 5;\nCREATE AGGREGATE ks.agg2(int) SFUNC ret STYPE int FINALFUNC fin INITCOND 1;")
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"DROP AGGREGATE ks.agg2(int)",
		"DROP FUNCTION ks.fin(int)",
		"CREATE OR REPLACE FUNCTION ks.body(a int)\n    CALLED ON NULL INPUT\n    RETURNS int\n    LANGUAGE java\n    AS $$return a + 1;$$",
		"CREATE FUNCTION ks.fin(s int)\n    CALLED ON NULL INPUT\n    RETURNS text\n    LANGUAGE java\n    AS $$return \"\";$$",
		"CREATE OR REPLACE AGGREGATE ks.agg(int)\n    SFUNC ret\n    STYPE int\n    INITCOND 5",
		"CREATE AGGREGATE ks.agg2(int)\n    SFUNC ret\n    STYPE int\n    FINALFUNC fin\n    INITCOND 1",
	})
	for _, w := range []string{
		"function ks.fin(int) changes its return type from int to text: it is dropped and created again (" + ruleFunctionReplace + ")",
		"aggregate ks.agg2(int) changes its return type from int to text: it is dropped and created again (" + ruleAggregateReplace + ")",
	} {
		if !slices.Contains(p.Notes, w) || len(p.Warnings) > 0 {
			t.Errorf("no note %q in %q (warnings %q)", w, p.Notes, p.Warnings)
		}
	}
	if p.Destructive {
		t.Error("a function plan is destructive")
	}
	samePlanResult(t, from, to, p)

	// The null-input directive cannot be replaced either.
	to2 := mustLoad(t, ksHead+strings.Replace(fn("body", "a int", "int", "return a;"), "CALLED", "RETURNS NULL", 1))
	p, err = Diff(mustLoad(t, ksHead+fn("body", "a int", "int", "return a;")), to2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP FUNCTION ks.body(int)", "CREATE FUNCTION ks.body(a int)\n    RETURNS NULL ON NULL INPUT\n    RETURNS int\n    LANGUAGE java\n    AS $$return a;$$"})
}

// TestFunctionsPruned: without Prune, functions and aggregates the desired
// schema lacks are kept with a note; with it they are dropped,
// aggregates before their functions, functions before their types.
func TestFunctionsPruned(t *testing.T) {
	from := mustLoad(t, ksHead+"CREATE TYPE ks.u (a int);\n"+fn("f", "s u, a int", "u", "return s;")+
		"CREATE AGGREGATE ks.agg(int) SFUNC f STYPE u INITCOND {a: 1};\nCREATE TABLE ks.t (id int PRIMARY KEY);")
	to := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY);")
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, nil)
	for _, w := range []string{"function ks.f(u,int) is not in the desired schema: kept (--prune drops it)", "aggregate ks.agg(int) is not in the desired schema: kept (--prune drops it)"} {
		if !slices.Contains(p.Notes, w) || len(p.Warnings) > 0 {
			t.Errorf("no note %q in %q (warnings %q)", w, p.Notes, p.Warnings)
		}
	}
	p, err = Diff(from, to, Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"DROP AGGREGATE ks.agg(int)", "DROP FUNCTION ks.f(u, int)", "DROP TYPE ks.u"})
	samePlanResult(t, from, to, p)
}

// TestFunctionsUseRecreatedType: a function using a type that is
// recreated is recreated with it, and so is the aggregate using the
// function; kept without Prune, it makes the plan impossible.
func TestFunctionsUseRecreatedType(t *testing.T) {
	from := mustLoad(t, ksHead+"CREATE TYPE ks.u (a int, b int);\n"+fn("f", "s frozen<tuple<int, int>>, x u", "frozen<tuple<int, int>>", "return s;")+
		"CREATE AGGREGATE ks.agg(u) SFUNC f STYPE tuple<int, int> INITCOND (0, 0);")
	to := mustLoad(t, ksHead+"CREATE TYPE ks.u (b int, a int);\n"+fn("f", "s tuple<int, int>, x u", "tuple<int, int>", "return s;")+
		"CREATE AGGREGATE ks.agg(u) SFUNC f STYPE tuple<int, int> INITCOND (0, 0);")
	p, err := Diff(from, to, Options{AllowRecreate: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"DROP AGGREGATE ks.agg(u)",
		"DROP FUNCTION ks.f(tuple<int, int>, u)",
		"DROP TYPE ks.u",
		"CREATE TYPE ks.u (\n    b int,\n    a int\n)",
		"CREATE FUNCTION ks.f(s tuple<int, int>, x u)\n    CALLED ON NULL INPUT\n    RETURNS tuple<int, int>\n    LANGUAGE java\n    AS $$return s;$$",
		"CREATE AGGREGATE ks.agg(u)\n    SFUNC f\n    STYPE tuple<int, int>\n    INITCOND (0, 0)",
	})
	samePlanResult(t, from, to, p)

	kept := mustLoad(t, ksHead+"CREATE TYPE ks.u (b int, a int);")
	_, err = Diff(from, kept, Options{AllowRecreate: true})
	var ie *ImpossibleError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "uses type ks.u, which is recreated, and the desired schema lacks it") {
		t.Fatalf("kept function on a recreated type: %v", err)
	}
}

// samePlanResult applies p to from and checks that the result has the
// functions and aggregates of to, and that planning again from it plans
// nothing.
func samePlanResult(t *testing.T, from, to schema.Schema, p Plan) {
	t.Helper()
	got := applyPlan(t, from, p)
	for _, k := range to.Keyspaces() {
		gk, _ := got.Keyspace(k.Name)
		var g, w strings.Builder
		for _, f := range gk.Functions() {
			g.WriteString(describe.Function(f))
		}
		for _, f := range k.Functions() {
			w.WriteString(describe.Function(f))
		}
		if g.String() != w.String() {
			t.Fatalf("functions of %s after the plan:\n%s\nwant:\n%s", k.Name, g.String(), w.String())
		}
	}
	again, err := Diff(got, to, Options{Prune: true})
	if err != nil || !again.Empty() {
		t.Fatalf("plan again: %v\n%s", err, planText(again))
	}
}
