package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/guardrails"
)

// eventLine is what a test compares of an event.
type eventLine struct {
	Epoch                       uint64
	Principal, RequestID        string
	Kind, Keyspace, Table, Name string
	Statement, Before, After    string
	Time                        int64
	Index                       uint64
	AtomicWith                  int // events in the record
}

func lines(recs []*Record) []eventLine {
	var out []eventLine
	for _, r := range recs {
		for i := range r.Events {
			e := &r.Events[i]
			out = append(out, eventLine{Epoch: r.Epoch, Principal: r.Principal, RequestID: r.RequestID, Kind: e.Kind,
				Keyspace: e.Keyspace, Table: e.Table, Name: e.Name, Statement: e.Statement, Before: e.Before(), After: e.After(),
				Time: r.Time, Index: r.Index, AtomicWith: len(r.Events)})
		}
	}
	return out
}

func encodedAll(t *testing.T, recs []*Record) [][]byte {
	t.Helper()
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = AppendRecord(nil, r)
	}
	return out
}

func TestHistoryRecordsEveryEpoch(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			dir := t.TempDir()
			sm, err := Open(Config{Dir: dir, FlushWindow: window})
			if err != nil {
				t.Fatal(err)
			}
			a := &applier{t: t, sm: sm}
			g := setGuardrails(t, "tables_warn_threshold", "5")
			g.Text, g.Principal, g.Time, g.RequestID = "tables_warn_threshold=5", "ops", 300, "g1"
			res := a.apply(
				Command{Text: ksDDL, Principal: "alice", Time: 100, RequestID: "r1"},
				Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY, n int); CREATE TABLE IF NOT EXISTS shop.a (id int PRIMARY KEY); CREATE INDEX ai ON shop.a (n)",
					Principal: "bob", Time: 200, RequestID: "r2"},
				Command{Text: "DROP TABLE shop.nope", Principal: "bob", RequestID: "r3"},
				g,
				Command{Text: "ALTER TABLE shop.a ADD v text; DROP TABLE shop.a", Atomic: true, Principal: "carol", Time: 400, RequestID: "r4"},
			)
			if res[2].Err == nil || res[4].Err != nil {
				t.Fatalf("results: %+v", res)
			}
			cur := sm.Current()
			if cur.Epoch != 5 {
				t.Fatalf("epoch %d, want 5", cur.Epoch)
			}
			recs, err := sm.History(0, cur.Epoch, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := lines(recs)
			want := []string{
				"1 alice CREATE KEYSPACE shop",
				"2 bob CREATE TABLE shop.a",
				"3 bob CREATE INDEX shop.a.ai",
				"4 ops SET GUARDRAILS",
				"5 carol ALTER TABLE shop.a",
				"5 carol DROP TABLE shop.a",
			}
			var short []string
			for _, l := range got {
				obj := strings.TrimRight(strings.Join([]string{l.Keyspace, l.Table, l.Name}, "."), ".")
				short = append(short, strings.TrimSpace(fmt.Sprintf("%d %s %s %s", l.Epoch, l.Principal, l.Kind, obj)))
			}
			if diff := cmp.Diff(want, short); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			ks := got[0]
			if ks.Before != "" || !strings.HasPrefix(ks.After, "CREATE KEYSPACE shop WITH replication") || ks.Time != 100 || ks.RequestID != "r1" || ks.Index != 1 {
				t.Errorf("keyspace event: %+v", ks)
			}
			if tbl := got[1]; tbl.Before != "" || !strings.Contains(tbl.After, "CREATE TABLE shop.a (") || tbl.Statement != "CREATE TABLE shop.a (id int PRIMARY KEY, n int)" {
				t.Errorf("create table event: %+v", tbl)
			}
			if ix := got[2]; ix.After != "CREATE INDEX ai ON shop.a (n);\n" || ix.Epoch != 3 {
				t.Errorf("index event: %+v", ix)
			}
			if gr := got[3]; !strings.Contains(gr.Before, "tables_warn_threshold=1000\n") || !strings.Contains(gr.After, "tables_warn_threshold=5\n") ||
				gr.Statement != "tables_warn_threshold=5" || gr.Time != 300 {
				t.Errorf("guardrails event: %+v", gr)
			}
			alter, drop := got[4], got[5]
			if alter.AtomicWith != 2 || !strings.Contains(alter.After, "v text") || strings.Contains(alter.Before, "v text") {
				t.Errorf("alter event: %+v", alter)
			}
			if drop.After != "" || !strings.Contains(drop.Before, "v text") {
				t.Errorf("drop event: before should be the table as altered in the same request: %+v", drop)
			}

			// The same records after a restart, decoded from the store.
			want2 := encodedAll(t, recs)
			if err := sm.Close(); err != nil {
				t.Fatal(err)
			}
			sm = openSM(t, dir)
			defer sm.Close()
			again, err := sm.History(0, 5, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want2, encodedAll(t, again)); diff != "" {
				t.Errorf("records after reopening differ:\n%s", diff)
			}
			if diff := cmp.Diff(got, lines(again)); diff != "" {
				t.Errorf("events after reopening (-before +after):\n%s", diff)
			}
		})
	}
}

func TestHistoryRangesAcrossMemoryAndStore(t *testing.T) {
	sm, _ := openWith(t, Config{Dir: t.TempDir(), HistoryCache: 4})
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	for i := range 40 {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i)})
	}
	if n := len(sm.history.now().recent); n > 4 {
		t.Fatalf("%d records in memory, want at most the cache (4)", n)
	}
	for _, tc := range []struct{ from, to uint64 }{{0, 41}, {3, 9}, {36, 41}, {10, 38}, {40, 41}, {41, 41}} {
		recs, err := sm.History(tc.from, tc.to, 0)
		if err != nil {
			t.Fatalf("(%d, %d]: %v", tc.from, tc.to, err)
		}
		if uint64(len(recs)) != tc.to-tc.from {
			t.Fatalf("(%d, %d]: %d records", tc.from, tc.to, len(recs))
		}
		for i, r := range recs {
			if r.Epoch != tc.from+1+uint64(i) {
				t.Fatalf("(%d, %d]: record %d has epoch %d", tc.from, tc.to, i, r.Epoch)
			}
		}
	}
	if recs, _ := sm.History(0, 41, 7); len(recs) != 7 || recs[6].Epoch != 7 {
		t.Fatalf("limit 7: %d records", len(recs))
	}
	tail, err := sm.HistoryTail(41, 3, EventFilter{})
	if err != nil || len(tail) != 3 || tail[0].Epoch != 39 || tail[2].Epoch != 41 {
		t.Fatalf("tail of 3: %v %v", len(tail), err)
	}
	filtered, err := sm.HistoryTail(41, 100, EventFilter{Keyspace: "shop", Table: "t5"})
	if err != nil || len(filtered) != 1 || filtered[0].Events[0].Table != "t5" {
		t.Fatalf("tail filtered on shop.t5: %d records, %v", len(filtered), err)
	}
	if none, err := sm.HistoryTail(41, 100, EventFilter{Keyspace: "other"}); err != nil || len(none) != 0 {
		t.Fatalf("tail filtered on another keyspace: %d records, %v", len(none), err)
	}
}

func TestHistoryRetention(t *testing.T) {
	dir := t.TempDir()
	sm, _ := openWith(t, Config{Dir: dir, HistoryRetention: 10, HistoryCache: 2})
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	for i := range 29 {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.t%d (id int PRIMARY KEY)", i)})
	}
	check := func(sm *StateMachine) {
		t.Helper()
		if got := sm.OldestEpoch(); got != 21 {
			t.Fatalf("oldest epoch %d, want 21 (30 epochs, 10 kept)", got)
		}
		_, err := sm.History(5, 30, 0)
		var pe *PrunedError
		if !errors.As(err, &pe) || !errors.Is(err, ErrHistoryPruned) || pe.Oldest != 21 {
			t.Fatalf("history after epoch 5: %v", err)
		}
		if !strings.Contains(err.Error(), "the oldest epoch kept is 21") {
			t.Errorf("error does not name the oldest epoch: %v", err)
		}
		if recs, err := sm.History(20, 30, 0); err != nil || len(recs) != 10 {
			t.Fatalf("history after epoch 20: %d, %v", len(recs), err)
		}
		if _, err := sm.SchemaAt(sm.Current(), 19); !errors.Is(err, ErrHistoryPruned) {
			t.Fatalf("schema at 19: %v", err)
		}
		s, err := sm.SchemaAt(sm.Current(), 20)
		if err != nil {
			t.Fatal(err)
		}
		_ = s
	}
	check(sm)
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}
	sm, _ = openWith(t, Config{Dir: dir, HistoryRetention: 10})
	defer sm.Close()
	check(sm)
}

func TestRecordCodecRejectsCorruptInput(t *testing.T) {
	sm, _, _ := richSM(t, Config{})
	defer sm.Close()
	recs, err := sm.History(0, sm.Current().Epoch, 0)
	if err != nil || len(recs) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for _, r := range recs {
		b := AppendRecord(nil, r)
		again, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("epoch %d: %v", r.Epoch, err)
		}
		if !bytes.Equal(AppendRecord(nil, again), b) {
			t.Fatalf("epoch %d: re-encoding differs", r.Epoch)
		}
		for n := range len(b) {
			if _, err := DecodeRecord(b[:n]); !errors.Is(err, ErrBadRecord) {
				t.Fatalf("epoch %d, %d of %d bytes: err = %v, want ErrBadRecord", r.Epoch, n, len(b), err)
			}
		}
		if _, err := DecodeRecord(append(b, 0)); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("trailing byte: %v", err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	r := &Record{Epoch: 3, Index: 9, Time: 5, Principal: "p", RequestID: "r",
		Events: []Event{{Kind: KindSetGuardrailsEvent, Guardrails: &GuardrailChange{Before: guardrails.Defaults(), After: guardrails.Defaults()}}}}
	f.Add(AppendRecord(nil, r))
	f.Add([]byte{1, 1, 1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		if _, err := DecodeRecord(AppendRecord(nil, r)); err != nil {
			t.Fatalf("re-encoding a decoded record: %v", err)
		}
	})
}

// tables applies n CREATE TABLEs named prefix0.. to shop.
func tables(a *applier, prefix string, n int) {
	for i := range n {
		a.apply(Command{Text: fmt.Sprintf("CREATE TABLE shop.%s%d (id int PRIMARY KEY)", prefix, i), Principal: "p", Time: int64(i)})
	}
}

// gapSignalled reports whether sm's HistoryGapSignal holds a signal, and
// takes it.
func gapSignalled(sm *StateMachine) bool {
	select {
	case <-sm.HistoryGapSignal():
		return true
	default:
		return false
	}
}

func TestRestoreLeavesAGapAPeerFills(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			src, a, _ := richSM(t, Config{FlushWindow: window})
			defer src.Close()
			tables(a, "s", 20)
			data, err := src.Capture(a.index)()
			if err != nil {
				t.Fatal(err)
			}
			epoch := src.Current().Epoch

			// A member that had applied the first few epochs, then got
			// the snapshot.
			dir := t.TempDir()
			dst, _ := openWith(t, Config{Dir: dir, FlushWindow: window})
			b := &applier{t: t, sm: dst}
			b.apply(Command{RequestID: "setup", Text: richDDL})
			kept := dst.Current().Epoch
			// Publishes without a gap leave the gap filler asleep.
			if gapSignalled(dst) {
				t.Fatal("gap signal after epochs applied without a gap")
			}
			if err := dst.Restore(a.index, data); err != nil {
				t.Fatal(err)
			}
			if from, to := dst.HistoryGap(); from != kept || to != epoch {
				t.Fatalf("gap (%d, %d], want (%d, %d]", from, to, kept, epoch)
			}
			if !gapSignalled(dst) {
				t.Fatal("no gap signal after a restore that left a gap")
			}
			if _, err := dst.History(0, epoch, 0); !errors.Is(err, ErrHistoryIncomplete) {
				t.Fatalf("history over the gap: %v", err)
			}
			if recs, err := dst.History(0, kept, 0); err != nil || uint64(len(recs)) != kept {
				t.Fatalf("history before the gap: %d, %v", len(recs), err)
			}
			// New epochs apply while the gap is open.
			b.index = a.index
			b.apply(Command{Text: "CREATE TABLE shop.after (id int PRIMARY KEY)"})
			a.apply(Command{Text: "CREATE TABLE shop.after (id int PRIMARY KEY)"})

			// A peer's records fill it, a few at a time, as the
			// member would copy them.
			for {
				from, to := dst.HistoryGap()
				if to == 0 {
					break
				}
				chunk, oldest, err := src.EncodedHistory(from, to, 4)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := dst.FillHistory(chunk, oldest); err != nil {
					t.Fatal(err)
				}
			}
			all := func(sm *StateMachine) [][]byte {
				recs, err := sm.History(0, sm.Current().Epoch, 0)
				if err != nil {
					t.Fatal(err)
				}
				return encodedAll(t, recs)
			}
			if diff := cmp.Diff(all(src), all(dst)); diff != "" {
				t.Fatalf("filled history differs from the peer's:\n%s", diff)
			}
			if err := dst.Close(); err != nil {
				t.Fatal(err)
			}
			re := openSM(t, dir)
			defer re.Close()
			if diff := cmp.Diff(all(src), all(re)); diff != "" {
				t.Fatalf("filled history after reopening differs:\n%s", diff)
			}
		})
	}
}

func TestFillFromAPeerThatPrunedMore(t *testing.T) {
	src, _ := openWith(t, Config{Dir: t.TempDir(), HistoryRetention: 5})
	defer src.Close()
	a := &applier{t: t, sm: src}
	a.apply(Command{Text: ksDDL})
	tables(a, "t", 19)
	data, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := openWith(t, Config{Dir: t.TempDir()})
	defer dst.Close()
	b := &applier{t: t, sm: dst}
	b.apply(Command{Text: ksDDL}) // epoch 1, which the peer pruned long ago
	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	from, to := dst.HistoryGap()
	chunk, oldest, err := src.EncodedHistory(from, to, 0)
	if err != nil || oldest != 16 || len(chunk) != 5 {
		t.Fatalf("peer history: %d records, oldest %d, %v", len(chunk), oldest, err)
	}
	if _, to, err := dst.FillHistory(chunk, oldest); err != nil || to != 0 {
		t.Fatalf("fill: gap to %d, %v", to, err)
	}
	if got := dst.OldestEpoch(); got != 16 {
		t.Fatalf("oldest epoch after the fill: %d, want the peer's 16", got)
	}
	if recs, err := dst.History(15, 20, 0); err != nil || len(recs) != 5 {
		t.Fatalf("history: %d, %v", len(recs), err)
	}
	if _, err := dst.History(0, 20, 0); !errors.Is(err, ErrHistoryPruned) {
		t.Fatalf("history from 0: %v", err)
	}
}

func TestFillRefusesBadRecords(t *testing.T) {
	src, a, _ := richSM(t, Config{})
	defer src.Close()
	tables(a, "s", 5)
	data, err := src.Capture(a.index)()
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := openWith(t, Config{Dir: t.TempDir()})
	defer dst.Close()
	if err := dst.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	from, to := dst.HistoryGap()
	chunk, oldest, err := src.EncodedHistory(from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	skipped := append([][]byte{chunk[0]}, chunk[2:]...)
	corrupt := append([][]byte{chunk[0][:len(chunk[0])-1]}, chunk[1:]...)
	for name, recs := range map[string][][]byte{"skips an epoch": skipped, "corrupt": corrupt} {
		if _, _, err := dst.FillHistory(recs, oldest); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if f, g := dst.HistoryGap(); f != from || g != to {
			t.Errorf("%s: gap changed to (%d, %d]", name, f, g)
		}
	}
}

func TestResetClearsHistory(t *testing.T) {
	sm, a, _ := richSM(t, Config{})
	defer sm.Close()
	if err := sm.Reset(); err != nil {
		t.Fatal(err)
	}
	if recs, err := sm.History(0, 100, 0); err != nil || len(recs) != 0 {
		t.Fatalf("history after a reset: %d, %v", len(recs), err)
	}
	// Replaying the log makes it again.
	b := &applier{t: t, sm: sm}
	b.apply(Command{RequestID: "setup", Text: richDDL})
	_ = a
	if recs, err := sm.History(0, sm.Current().Epoch, 0); err != nil || uint64(len(recs)) != sm.Current().Epoch {
		t.Fatalf("history after replay: %d, %v", len(recs), err)
	}
}
