package metadata

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// functionDDL creates a type, two functions and an aggregate using them.
const functionDDL = ksDDL + `;
	CREATE TYPE shop.acc (n int, sum bigint);
	CREATE FUNCTION shop.step(s acc, v int) CALLED ON NULL INPUT RETURNS acc LANGUAGE java AS 'return s;';
	CREATE FUNCTION shop.done(s acc) CALLED ON NULL INPUT RETURNS double LANGUAGE java AS $$return 0.0;$$;
	CREATE AGGREGATE shop.average(int) SFUNC step STYPE acc FINALFUNC done INITCOND {n: 0, sum: 0}`

// hasAverage reports whether m's shop has aggregate average(int) over
// step.
func hasAverage(m *ClusterMetadata) bool {
	k, ok := m.Schema.Keyspace("shop")
	if !ok {
		return false
	}
	f, ok := k.Function("average(int)")
	return ok && f.Kind == schema.AggregateFunction && f.StateFunc == "step" && f.InitCond == "{n: 0, sum: 0}"
}

// TestFunctionSurvivesStoreAndSnapshot checks that functions and
// aggregates are flushed to the store and read back by a reopened node,
// that a snapshot carries them to another node, digest included, and that
// a dropped one stays dropped across a reopen.
func TestFunctionSurvivesStoreAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	if r := a.apply(setGuardrails(t, "user_defined_functions_enabled", "true"), Command{Text: functionDDL}); r[0].Err != nil || r[1].Err != nil {
		t.Fatal(r[0].Err, r[1].Err)
	}
	want := sm.Current()
	if !hasAverage(want) {
		t.Fatalf("no aggregate after apply:\n%s", describe.Schema(want.Schema))
	}
	data, err := sm.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	re := openSM(t, dir)
	sameMetadata(t, want, re.Current())
	if !hasAverage(re.Current()) || !re.Current().Guardrails.UserDefinedFunctionsEnabled {
		t.Fatal("the reopened store lost the aggregate or the setting")
	}

	dst, _ := openWith(t, Config{Dir: t.TempDir()})
	defer dst.Close()
	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	sameMetadata(t, want, dst.Current())
	if !hasAverage(dst.Current()) {
		t.Fatal("the restored snapshot lost the aggregate")
	}

	// Drops are written too, and need no guardrail.
	a = &applier{t: t, sm: re, index: a.index}
	if r := a.apply(setGuardrails(t), Command{Text: "DROP AGGREGATE shop.average; DROP FUNCTION shop.done"}); r[1].Err != nil {
		t.Fatalf("drops with user_defined_functions_enabled=false: %v", r[1].Err)
	}
	want = re.Current()
	if err := re.Close(); err != nil {
		t.Fatal(err)
	}
	again := openSM(t, dir)
	defer again.Close()
	sameMetadata(t, want, again.Current())
	k, _ := again.Current().Schema.Keyspace("shop")
	if _, ok := k.Function("step(acc,int)"); !ok || k.FunctionCount() != 1 {
		t.Fatalf("after the drops the store has %d functions:\n%s", k.FunctionCount(), describe.Keyspace(k))
	}
}

// TestFunctionGuardrail checks that the log refuses CREATE FUNCTION while
// user_defined_functions_enabled is false (its default), saying how to set
// it, and changes nothing.
func TestFunctionGuardrail(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	before := sm.Current()
	r := a.apply(Command{Text: "CREATE FUNCTION shop.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''"})
	if !errors.Is(r[0].Err, guardrails.ErrFailed) || !strings.Contains(r[0].Err.Error(), "metalog guardrails set user_defined_functions_enabled=true") {
		t.Fatalf("CREATE FUNCTION with the defaults: %v", r[0].Err)
	}
	if sm.Current().Schema.Digest() != before.Schema.Digest() {
		t.Fatal("a refused CREATE FUNCTION changed the schema")
	}
}

// TestFunctionHistoryEvents checks that function statements record events
// named by signature whose Before and After show the change, and that the
// history's schema at each epoch is the one the node had then (Undo of the
// function's prior, as the history keeps it).
func TestFunctionHistoryEvents(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(setGuardrails(t, "user_defined_functions_enabled", "true"), Command{Text: functionDDL})
	created := sm.Current()
	if r := a.apply(Command{Text: "CREATE OR REPLACE FUNCTION shop.done(s acc) CALLED ON NULL INPUT RETURNS double LANGUAGE java AS 'return 1.0;'"}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	replaced := sm.Current()
	if r := a.apply(Command{Text: "DROP AGGREGATE shop.average"}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	cur := sm.Current()
	recs, err := sm.History(0, cur.Epoch, 0)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]*Event{}
	for _, r := range recs {
		for i := range r.Events {
			e := &r.Events[i]
			byKind[e.Kind] = append(byKind[e.Kind], e)
		}
	}
	if len(byKind["CREATE FUNCTION"]) != 3 || len(byKind["CREATE AGGREGATE"]) != 1 || len(byKind["DROP AGGREGATE"]) != 1 {
		t.Fatalf("events %v", byKind)
	}
	agg, repl, drop := byKind["CREATE AGGREGATE"][0], byKind["CREATE FUNCTION"][2], byKind["DROP AGGREGATE"][0]
	if agg.Keyspace != "shop" || agg.Name != "average(int)" || !agg.Matches("shop", "") || drop.Name != "average(int)" || repl.Name != "done(acc)" {
		t.Errorf("events about %s %s, %s, %s", agg.Keyspace, agg.Name, repl.Name, drop.Name)
	}
	const aggText = "CREATE AGGREGATE shop.average(int)\n    SFUNC step\n    STYPE acc\n    FINALFUNC done\n    INITCOND {n: 0, sum: 0};\n"
	if agg.Before() != "" || agg.After() != aggText {
		t.Errorf("CREATE AGGREGATE event before:\n%s\nafter:\n%s", agg.Before(), agg.After())
	}
	if drop.Before() != aggText || drop.After() != "" {
		t.Errorf("DROP AGGREGATE event before:\n%s\nafter:\n%s", drop.Before(), drop.After())
	}
	if !strings.Contains(repl.Before(), "AS $$return 0.0;$$;") || !strings.Contains(repl.After(), "AS $$return 1.0;$$;") {
		t.Errorf("CREATE OR REPLACE event before:\n%s\nafter:\n%s", repl.Before(), repl.After())
	}
	for _, m := range []*ClusterMetadata{created, replaced} {
		at, err := sm.SchemaAt(cur, m.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		if at.Digest() != m.Schema.Digest() {
			t.Errorf("the schema at epoch %d differs from the one the node had", m.Epoch)
		}
	}
	// The records round-trip through their encoding, priors and values
	// included.
	for _, r := range recs {
		got, err := DecodeRecord(AppendRecord(nil, r))
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Events {
			if got.Events[i].Before() != r.Events[i].Before() || got.Events[i].After() != r.Events[i].After() {
				t.Errorf("epoch %d event %d changes through the codec", r.Epoch, i)
			}
		}
	}
}

// TestFunctionApplyStepCostDoesNotGrowWithTables compares the allocations
// of the whole apply step of creating and dropping a function and an
// aggregate at N and 8N existing tables: none of them may walk the tables.
func TestFunctionApplyStepCostDoesNotGrowWithTables(t *testing.T) {
	n := 1000
	allocs := map[int]float64{}
	for _, size := range []int{n, 8 * n} {
		sm, a := loadedSM(t, size)
		a.apply(setGuardrails(t, "user_defined_functions_enabled", "true"),
			Command{Text: "CREATE FUNCTION shop.sf(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s;'"})
		i := 0
		var err error
		allocs[size] = testing.AllocsPerRun(100, func() {
			for _, text := range []string{
				fmt.Sprintf("CREATE FUNCTION shop.f_%d(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", i),
				fmt.Sprintf("CREATE AGGREGATE shop.a_%d(int) SFUNC sf STYPE int INITCOND 0", i),
				fmt.Sprintf("DROP AGGREGATE shop.a_%d", i),
				fmt.Sprintf("DROP FUNCTION shop.f_%d", i),
			} {
				a.index++
				res, e := sm.Apply([]Entry{{Index: a.index, Data: Command{Text: text}.Marshal(nil)}})
				if e == nil {
					e = res[0].Err
				}
				if e != nil {
					err = e
				}
			}
			i++
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if ratio := allocs[8*n] / allocs[n]; ratio > 1.2 {
		t.Fatalf("function apply step allocations: %v at %d tables, %v at %d (ratio %.2f > 1.2)", allocs[n], n, allocs[8*n], 8*n, ratio)
	}
	t.Logf("function apply step allocations (4 statements): %v at %d tables, %v at %d", allocs[n], n, allocs[8*n], 8*n)
}
