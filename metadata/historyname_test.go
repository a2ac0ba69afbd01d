package metadata

import (
	"errors"
	"testing"
)

// nameCmd is the KindNameHistory command naming cluster's history nonce.
func nameCmd(cluster, nonce uint64) Command {
	return Command{Kind: KindNameHistory, Cluster: cluster, Nonce: nonce}
}

// TestNameHistoryCommandRoundTrip: a KindNameHistory command encodes its
// cluster id and nonce (cluster 0 included) and decodes to the same; a
// flagged nonce 0 or a truncated one is refused.
func TestNameHistoryCommandRoundTrip(t *testing.T) {
	for _, c := range []Command{nameCmd(0x1234, 0xfeedface_00000001), nameCmd(0, 1), nameCmd(1<<63, 1<<63)} {
		b := c.Marshal(nil)
		if len(b) != c.EncodedSize() {
			t.Errorf("%+v: %d bytes, EncodedSize %d", c, len(b), c.EncodedSize())
		}
		got, err := UnmarshalCommand(b)
		if err != nil || got.Kind != KindNameHistory || got.Cluster != c.Cluster || got.Nonce != c.Nonce {
			t.Errorf("round trip of %+v: %+v, %v", c, got, err)
		}
	}
	b := nameCmd(7, 9).Marshal(nil)
	zero := append([]byte(nil), b...)
	clear(zero[len(zero)-8:])
	if _, err := UnmarshalCommand(zero); !errors.Is(err, ErrBadCommand) {
		t.Errorf("a flagged nonce 0: %v, want ErrBadCommand", err)
	}
	if _, err := UnmarshalCommand(b[:len(b)-3]); !errors.Is(err, ErrBadCommand) {
		t.Errorf("a truncated nonce: %v, want ErrBadCommand", err)
	}
}

// TestNameHistoryAppliesWithoutEpochOrEvent: a history mark changes the
// history name and nothing else: no epoch, no history record, no feed
// event, no remembered request; the first mark applied for a cluster id
// wins, a later one for it is a no-op, and one for another cluster id
// (after a restore or a forcing) replaces it. A mark without a nonce is
// refused.
func TestNameHistoryAppliesWithoutEpochOrEvent(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	before := sm.Current()
	changed := sm.Changed()
	res := a.apply(nameCmd(0xc1, 0xaaaa))
	if res[0].Err != nil || res[0].Outcome.Epoch != before.Epoch {
		t.Fatalf("mark: %+v, want no error and the epoch as it was (%d)", res[0], before.Epoch)
	}
	cur := sm.Current()
	if cur.Epoch != before.Epoch || cur.History != (HistoryName{Cluster: 0xc1, Nonce: 0xaaaa}) || !cur.History.Names(0xc1) || cur.History.Names(0xc2) {
		t.Fatalf("after the mark: epoch %d (want %d), history %+v", cur.Epoch, before.Epoch, cur.History)
	}
	if cur.Schema.Digest() != before.Schema.Digest() || cur.Requests.Len() != before.Requests.Len() || cur.Index != a.index {
		t.Errorf("the mark changed the schema or the requests, or the index is %d (want %d)", cur.Index, a.index)
	}
	select {
	case <-changed:
	default:
		t.Error("the mark was not published")
	}
	if recs, err := sm.History(0, cur.Epoch, 0); err != nil || len(recs) != 1 {
		t.Errorf("history: %d records, %v; want the keyspace's only", len(recs), err)
	}

	a.apply(nameCmd(0xc1, 0xbbbb))
	if got := sm.Current().History; got.Nonce != 0xaaaa {
		t.Errorf("a second mark for the same cluster: %+v, want the first one's nonce kept", got)
	}
	a.apply(nameCmd(0xc2, 0xcccc))
	if got := sm.Current().History; got != (HistoryName{Cluster: 0xc2, Nonce: 0xcccc}) {
		t.Errorf("a mark for another cluster id: %+v, want it", got)
	}
	if res := a.apply(Command{Kind: KindNameHistory, Cluster: 0xc3}); !errors.Is(res[0].Err, errNoNonce) {
		t.Errorf("a mark without nonce: %v, want errNoNonce", res[0].Err)
	}
	if got := sm.Current(); got.History.Cluster != 0xc2 || got.Epoch != before.Epoch {
		t.Errorf("after a refused mark: %+v at epoch %d", got.History, got.Epoch)
	}
}

// TestHistoryNameSurvivesRestartAndSnapshot: the history name is in the
// store (with a flush window too, once flushed or closed) and in
// snapshots: a restarted state machine and one restored from a snapshot
// or a backup hold it. A snapshot without it restores none.
func TestHistoryNameSurvivesRestartAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	sm, err := Open(Config{Dir: dir, FlushWindow: 50_000_000})
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	unnamed, err := sm.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	a.apply(nameCmd(0xc1, 0xaaaa), Command{Text: "CREATE TABLE shop.t (id int PRIMARY KEY)"})
	want := HistoryName{Cluster: 0xc1, Nonce: 0xaaaa}
	named, err := sm.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	backup, err := sm.Backup(sm.Current())
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	sm = openSM(t, dir)
	if got := sm.Current().History; got != want {
		t.Errorf("after a restart: %+v, want %+v", got, want)
	}
	sm.Close()

	// A flush of a batch holding only the mark writes it too.
	dir2 := t.TempDir()
	sm2 := openSM(t, dir2)
	(&applier{t: t, sm: sm2}).apply(nameCmd(0, 0x77))
	sm2.Close()
	sm2 = openSM(t, dir2)
	if got := sm2.Current().History; got != (HistoryName{Nonce: 0x77}) {
		t.Errorf("a mark for cluster 0 after a restart: %+v", got)
	}

	// Restored from the named snapshot, then from the unnamed one.
	if err := sm2.Restore(a.index, named); err != nil {
		t.Fatal(err)
	}
	if got := sm2.Current().History; got != want {
		t.Errorf("restored from a snapshot: %+v, want %+v", got, want)
	}
	if err := sm2.Restore(1, unnamed); err != nil {
		t.Fatal(err)
	}
	if got := sm2.Current().History; got != (HistoryName{}) {
		t.Errorf("restored from a snapshot taken before the mark: %+v, want none", got)
	}
	sm2.Close()
	sm2 = openSM(t, dir2)
	if got := sm2.Current().History; got != (HistoryName{}) {
		t.Errorf("reopened after that restore: %+v, want none (the store was rewritten)", got)
	}
	sm2.Close()

	// A backup carries the name of the cluster it was taken from: a
	// cluster restored from it, under a new cluster id, has no name.
	rdir := t.TempDir()
	m, err := RestoreBackup(rdir, backup)
	if err != nil {
		t.Fatal(err)
	}
	restored := openSM(t, rdir)
	defer restored.Close()
	if got := restored.Current().History; got != want || m.History != want {
		t.Errorf("restored from a backup: %+v (RestoreBackup said %+v), want the old cluster's %+v", got, m.History, want)
	}
	if restored.Current().History.Names(0xc1 + 1) {
		t.Error("the backup's history name names the history of a new cluster id")
	}
}
