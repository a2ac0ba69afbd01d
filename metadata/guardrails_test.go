package metadata

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/metalog/metalog/guardrails"
)

func setGuardrails(t *testing.T, kv ...string) Command {
	t.Helper()
	g := guardrails.Defaults()
	for i := 0; i < len(kv); i += 2 {
		var err error
		if g, err = g.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return Command{Kind: KindSetGuardrails, Guardrails: guardrails.AppendSettings(nil, g)}
}

func TestGuardrailsReplicateWarnRefuseAndPersist(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			dir := t.TempDir()
			sm, err := Open(Config{Dir: dir, FlushWindow: window})
			if err != nil {
				t.Fatal(err)
			}
			a := &applier{t: t, sm: sm}
			a.apply(Command{Text: ksDDL})
			if r := a.apply(setGuardrails(t, "tables_warn_threshold", "2", "tables_fail_threshold", "3")); r[0].Err != nil || r[0].Outcome.Epoch != 2 {
				t.Fatalf("set guardrails: %+v", r[0])
			}
			if g := sm.Current().Guardrails; g.TablesWarnThreshold != 2 || !sm.Current().GuardrailsSet {
				t.Fatalf("guardrails not applied: %+v", g)
			}
			r := a.apply(Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY); CREATE TABLE shop.b (id int PRIMARY KEY); CREATE TABLE shop.c (id int PRIMARY KEY)"})
			if r[0].Err != nil || len(r[0].Outcome.Warnings) != 1 || r[0].Outcome.Warnings[0].Guardrail != "tables_warn_threshold" {
				t.Fatalf("third table: want one tables_warn_threshold warning, got %+v", r[0])
			}
			// Crossing the fail threshold inside an atomic request applies nothing.
			r = a.apply(Command{Atomic: true, Text: "DROP TABLE shop.a; CREATE TABLE shop.d (id int PRIMARY KEY); CREATE TABLE shop.e (id int PRIMARY KEY)"})
			if !errors.Is(r[0].Err, guardrails.ErrFailed) || !strings.Contains(r[0].Err.Error(), "Cannot have more than 3 tables") {
				t.Fatalf("atomic request over tables_fail_threshold: %v", r[0].Err)
			}
			if _, ok := sm.Current().Schema.Table("shop", "a"); !ok || sm.Current().Schema.TableCount() != 3 {
				t.Fatal("a refused atomic request applied part of itself")
			}
			// A config-file value proposed once set is a no-op.
			only := setGuardrails(t, "tables_warn_threshold", "100")
			only.OnlyIfUnset = true
			epoch := sm.Current().Epoch
			if r := a.apply(only); r[0].Err != nil || sm.Current().Guardrails.TablesWarnThreshold != 2 || sm.Current().Epoch != epoch {
				t.Fatalf("OnlyIfUnset after a set: %+v, threshold %d", r[0], sm.Current().Guardrails.TablesWarnThreshold)
			}
			want := sm.Current().Guardrails
			data, err := sm.Capture(sm.Current().Index)()
			if err != nil {
				t.Fatal(err)
			}
			sm.Close()

			sm = openSM(t, dir)
			if g := sm.Current().Guardrails; g != want || !sm.Current().GuardrailsSet {
				t.Fatalf("guardrails after reopen: %+v, want %+v", g, want)
			}
			sm.Close()
			fresh := openSM(t, t.TempDir())
			defer fresh.Close()
			if err := fresh.Restore(a.index, data); err != nil {
				t.Fatal(err)
			}
			if g := fresh.Current().Guardrails; g != want {
				t.Fatalf("guardrails after restore: %+v", g)
			}
		})
	}
}

func TestInvalidGuardrailsCommandChangesNothing(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	bad := guardrails.Defaults()
	bad.TablesWarnThreshold, bad.TablesFailThreshold = 10, 5 // warn above fail
	r := a.apply(Command{Kind: KindSetGuardrails, Guardrails: guardrails.AppendSettings(nil, bad)}, Command{Kind: KindSetGuardrails})
	if r[0].Err == nil || r[1].Err == nil {
		t.Fatalf("invalid guardrails applied: %v / %v", r[0].Err, r[1].Err)
	}
	if sm.Current().GuardrailsSet || sm.Current().Epoch != 0 {
		t.Fatal("an invalid guardrails command changed the metadata")
	}
}

func TestMetadataSizeGuardrailRefusesBeforeTheSnapshotWould(t *testing.T) {
	const max = 8 << 10
	sm, err := Open(Config{Dir: t.TempDir(), MaxSnapshotBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL, MaxMutationSize: max})
	var refused error
	warned := false
	for i := 0; i < 1000 && refused == nil; i++ {
		r := a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY, v text)", i), MaxMutationSize: max})
		refused = r[0].Err
		for _, w := range r[0].Outcome.Warnings {
			warned = warned || w.Guardrail == guardrails.MetadataSize
		}
	}
	if !warned || !errors.Is(refused, guardrails.ErrFailed) || !strings.Contains(refused.Error(), "metadata_size") {
		t.Fatalf("metadata_size: warned %v, refused %v", warned, refused)
	}
	// The refusal came before the snapshot became un-storable.
	if _, err := sm.Capture(sm.Current().Index)(); err != nil {
		t.Fatalf("snapshot after the metadata_size refusal: %v", err)
	}
}
