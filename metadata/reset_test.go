package metadata

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/metalog/metalog/guardrails"
)

// resetCommands are applied, in these batches, before and after a Reset.
func resetCommands(t *testing.T) [][]Command {
	return [][]Command{
		{{RequestID: "setup", Text: richDDL}},
		{
			{RequestID: "ok", Keyspace: "shop", Text: "CREATE TABLE orders (id int PRIMARY KEY, v text)"},
			{RequestID: "bad", Text: "DROP TABLE shop.nope"},
		},
		{setGuardrails(t, "tables_warn_threshold", "50")},
		{{Text: "CREATE TABLE shop.anonymous (id int PRIMARY KEY)"}, {RequestID: "ok", Text: "DROP TABLE shop.orders"}},
	}
}

// TestResetThenReplay resets a state machine holding every kind of object,
// remembered requests, set guardrails and (with a window) pending changes:
// it is empty at once and after a reopen, and replaying the same log onto it
// gives the same metadata, durably.
func TestResetThenReplay(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			dir := t.TempDir()
			sm, m := openWith(t, Config{Dir: dir, FlushWindow: window})
			a := &applier{t: t, sm: sm}
			for _, batch := range resetCommands(t) {
				a.apply(batch...)
			}
			want := sm.Current()
			if !want.GuardrailsSet || want.Epoch == 0 || want.Requests.Len() == 0 {
				t.Fatalf("test setup: %+v", want)
			}
			if window > 0 && testutil.ToFloat64(m.pending) == 0 {
				t.Fatal("test setup: nothing pending")
			}
			flushes := testutil.ToFloat64(m.flushes)

			if err := sm.Reset(); err != nil {
				t.Fatal(err)
			}
			empty := &ClusterMetadata{Guardrails: guardrails.Defaults()}
			sameMetadata(t, empty, sm.Current())
			if got := sm.Current(); got.GuardrailsSet || got.Guardrails != guardrails.Defaults() {
				t.Fatalf("guardrails after reset: set %v %+v", got.GuardrailsSet, got.Guardrails)
			}
			if got := testutil.ToFloat64(m.pending); got != 0 {
				t.Fatalf("pending changes after reset: %v", got)
			}
			if got := testutil.ToFloat64(m.flushes); got != flushes+1 {
				t.Fatalf("store commits during reset: %v, want one", got-flushes)
			}

			// The store is empty too: the dropped pending changes are not
			// written on close.
			if err := sm.Close(); err != nil {
				t.Fatal(err)
			}
			sm = openSM(t, dir)
			sameMetadata(t, empty, sm.Current())
			if sm.Current().GuardrailsSet {
				t.Fatal("guardrails still set in the store after reset")
			}

			b := &applier{t: t, sm: sm}
			for _, batch := range resetCommands(t) {
				b.apply(batch...)
			}
			sameMetadata(t, want, sm.Current())
			if got := sm.Current().Guardrails; got != want.Guardrails {
				t.Fatalf("guardrails after replay: %+v, want %+v", got, want.Guardrails)
			}
			if err := sm.Close(); err != nil {
				t.Fatal(err)
			}
			re := openSM(t, dir)
			defer re.Close()
			sameMetadata(t, want, re.Current())
		})
	}
}

// TestRebuildHoldsPublication checks that between BeginRebuild and
// EndRebuild readers keep the metadata of before, while the reset and the
// replay go on underneath, and that the replay builds on the reset state.
func TestRebuildHoldsPublication(t *testing.T) {
	sm, _ := openWith(t, Config{Dir: t.TempDir()})
	a := &applier{t: t, sm: sm}
	for _, batch := range resetCommands(t) {
		a.apply(batch...)
	}
	before := sm.Current()
	sm.mu.Lock()
	changed := sm.changed // closed at the next publication
	sm.mu.Unlock()

	sm.BeginRebuild()
	if err := sm.Reset(); err != nil {
		t.Fatal(err)
	}
	b := &applier{t: t, sm: sm}
	batches := resetCommands(t)
	for _, batch := range batches[:len(batches)-1] {
		b.apply(batch...)
		if sm.Current() != before {
			t.Fatalf("readers saw epoch %d during the rebuild, want the %d of before", sm.Current().Epoch, before.Epoch)
		}
	}
	select {
	case <-changed:
		t.Fatal("waiters were woken during the rebuild")
	default:
	}
	b.apply(batches[len(batches)-1]...)
	sm.EndRebuild()
	got := sm.Current()
	if got == before {
		t.Fatal("EndRebuild did not publish the rebuilt state")
	}
	sameMetadata(t, before, got)
	select {
	case <-changed:
	default:
		t.Fatal("EndRebuild did not wake waiters")
	}
	// Applying goes on as usual after it.
	a2 := &applier{t: t, sm: sm, index: b.index}
	a2.apply(Command{Text: "CREATE TABLE shop.after (id int PRIMARY KEY)"})
	if sm.Current().Epoch != got.Epoch+1 {
		t.Fatalf("epoch after the rebuild and one DDL: %d, want %d", sm.Current().Epoch, got.Epoch+1)
	}
}
