package metadata

import (
	"fmt"
	"testing"
)

func TestRecentDigestsKeepTheLatestEpochs(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	for i := range recentDigests + 10 {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t_%d (id int PRIMARY KEY)", i)})
	}
	h := sm.RecentDigests()
	if len(h) != recentDigests {
		t.Fatalf("history holds %d pairs, want %d", len(h), recentDigests)
	}
	last := h[len(h)-1]
	if cur := sm.Current(); last.Epoch != cur.Epoch || last.Digest != cur.Schema.Digest() {
		t.Fatalf("newest pair %d, want the current epoch %d and its digest", last.Epoch, cur.Epoch)
	}
	for i := 1; i < len(h); i++ {
		if h[i].Epoch != h[i-1].Epoch+1 {
			t.Fatalf("history not in epoch order at %d: %d after %d", i, h[i].Epoch, h[i-1].Epoch)
		}
	}
	// A refused command publishes the same epoch: no new pair.
	a.apply(Command{Text: "DROP TABLE shop.nope"})
	if got := sm.RecentDigests(); got[len(got)-1] != last {
		t.Fatal("a refused command changed the history")
	}
}
