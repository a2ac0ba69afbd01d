package member

import (
	"fmt"
	"testing"
	"time"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// TestApplierAddsNoAllocations checks that the applier, between raftlog
// and the state machine, costs no allocation of its own for a batch of
// one entry (it cost one, its results slice, before that was reused from
// one batch to the next), and that every reused result starts zeroed.
func TestApplierAddsNoAllocations(t *testing.T) {
	sm, err := metadata.Open(metadata.Config{Dir: t.TempDir(), FlushWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	a := &applier{sm: sm, fatal: func(err error) { t.Errorf("fatal: %v", err) }}
	index := uint64(0)
	entry := func(text string) []raftlog.Entry {
		index++
		return []raftlog.Entry{{Index: index, Data: metadata.Command{Text: text}.Marshal(nil)}}
	}
	if r := a.Apply(entry("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	// A refused entry leaves its error in the reused slot; the next
	// result must not show it.
	if r := a.Apply(entry("CREATE TABLE nope.t (id int PRIMARY KEY)")); r[0].Err == nil {
		t.Fatal("CREATE TABLE in a missing keyspace applied")
	}
	i := 0
	batches := make([][]raftlog.Entry, 202) // AllocsPerRun runs once more to warm up
	for j := range batches {
		batches[j] = entry(fmt.Sprintf("CREATE TABLE ks.t_%d (id int PRIMARY KEY, v text)", j))
	}
	through := testing.AllocsPerRun(100, func() {
		if r := a.Apply(batches[i]); r[0].Err != nil {
			t.Fatal(r[0].Err)
		}
		i++
	})
	one := make([]metadata.Entry, 1)
	direct := testing.AllocsPerRun(100, func() {
		b := batches[i]
		one[0] = metadata.Entry{Index: b[0].Index, Data: b[0].Data}
		if r, err := sm.Apply(one); err != nil || r[0].Err != nil {
			t.Fatal(err, r[0].Err)
		}
		i++
	})
	t.Logf("allocations per entry: %.0f through the applier, %.0f directly", through, direct)
	if through > direct {
		t.Errorf("the applier adds %.0f allocations per entry, want none", through-direct)
	}
}
