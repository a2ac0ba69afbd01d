package metadata

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range []Command{
		{},
		{RequestID: "r-1", Keyspace: "shop", Atomic: true, Text: "CREATE TABLE t (id int PRIMARY KEY)"},
		{Text: strings.Repeat("x", 1000)},
		{Text: "DROP TABLE a.b", Principal: "ci", Time: 1764633600123456789},
		{Kind: KindSetGuardrails, Guardrails: []byte{1, 2}, Principal: "anonymous", Time: -1},
		{Text: "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", HasIfEpoch: true},
		{Text: "DROP TABLE a.b", Atomic: true, HasIfEpoch: true, IfEpoch: 1 << 40, Time: 7},
	} {
		got, err := UnmarshalCommand(c.Marshal(nil))
		if err != nil {
			t.Fatalf("UnmarshalCommand(%+v): %v", c, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestUnmarshalCommandRejectsCorruptInput(t *testing.T) {
	good := Command{RequestID: "a", Text: "DROP TABLE x.y"}.Marshal(nil)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-3],
		"trailing":  append(append([]byte{}, good...), 0),
	} {
		if _, err := UnmarshalCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err = %v, want ErrBadCommand", name, err)
		}
	}
}

// TestUnmarshalCommandVersion1 decodes a command as members logged it
// before principals and times: version 1, without either.
func TestUnmarshalCommandVersion1(t *testing.T) {
	// version 1, kind DDL, flag atomic; request id "r", keyspace "k",
	// text "DROP TABLE t", max mutation size 5, no guardrails.
	v1 := []byte{1, 0, 1, 1, 'r', 1, 'k', 12, 'D', 'R', 'O', 'P', ' ', 'T', 'A', 'B', 'L', 'E', ' ', 't', 5, 0}
	got, err := UnmarshalCommand(v1)
	if err != nil {
		t.Fatal(err)
	}
	want := Command{RequestID: "r", Keyspace: "k", Atomic: true, Text: "DROP TABLE t", MaxMutationSize: 5}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("version 1 command (-want +got):\n%s", diff)
	}
	if _, err := UnmarshalCommand(append(v1, 0, 0)); !errors.Is(err, ErrBadCommand) {
		t.Errorf("version 1 with a principal and time after it: err = %v, want ErrBadCommand (trailing bytes)", err)
	}
}

func FuzzUnmarshalCommand(f *testing.F) {
	f.Add(Command{RequestID: "a", Keyspace: "k", Text: "CREATE KEYSPACE k"}.Marshal(nil))
	f.Add([]byte{1, 0, 0xff, 0xff})
	f.Add(Command{Text: "ALTER TABLE k.t DROP v", HasIfEpoch: true, IfEpoch: 3, Rules: schema.CurrentRules}.Marshal(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := UnmarshalCommand(b)
		if err != nil {
			return
		}
		again, err := UnmarshalCommand(c.Marshal(nil))
		if err != nil || !cmp.Equal(again, c) {
			t.Fatalf("re-encoding %+v: %+v, %v", c, again, err)
		}
	})
}

// applier feeds commands to a state machine with consecutive indexes.
type applier struct {
	t     testing.TB
	sm    *StateMachine
	index uint64
}

func (a *applier) apply(cmds ...Command) []Result {
	a.t.Helper()
	entries := make([]Entry, len(cmds))
	for i, c := range cmds {
		a.index++
		entries[i] = Entry{Index: a.index, Data: c.Marshal(nil)}
	}
	res, err := a.sm.Apply(entries)
	if err != nil {
		a.t.Fatalf("Apply: %v", err)
	}
	return res
}

func openSM(t *testing.T, dir string) *StateMachine {
	t.Helper()
	sm, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

const ksDDL = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

func TestApplyEpochsResultsAndErrors(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}

	res := a.apply(
		Command{Text: ksDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"},
		Command{Text: "CREATE TABLE IF NOT EXISTS shop.a (id int PRIMARY KEY)"},
		Command{Keyspace: "shop", Text: "CREATE TABLE b (id int PRIMARY KEY)"},
	)
	if res[0].Err != nil || res[0].Outcome.Epoch != 2 || len(res[0].Outcome.Results) != 2 {
		t.Fatalf("first command: %+v", res[0])
	}
	if res[1].Err != nil || res[1].Outcome.Epoch != 2 || res[1].Outcome.Results[0].Result.Applied {
		t.Fatalf("IF NOT EXISTS no-op must keep the epoch: %+v", res[1])
	}
	if res[2].Err != nil || res[2].Outcome.Epoch != 3 {
		t.Fatalf("default keyspace: %+v", res[2])
	}

	// Atomic: a failure applies nothing.
	res = a.apply(Command{Atomic: true, Text: "CREATE TABLE shop.c (id int PRIMARY KEY); CREATE TABLE shop.a (id int PRIMARY KEY)"})
	var serr *StatementError
	if !errors.As(res[0].Err, &serr) || serr.Position != 2 || !errors.Is(res[0].Err, schema.ErrAlreadyExists) {
		t.Fatalf("atomic failure: %v", res[0].Err)
	}
	if _, ok := sm.Current().Schema.Table("shop", "c"); ok || sm.Current().Epoch != 3 {
		t.Fatalf("atomic failure applied something: epoch %d", sm.Current().Epoch)
	}

	// Atomic success: one epoch for the whole command, distinct table ids.
	res = a.apply(Command{Atomic: true, Text: "CREATE TABLE shop.x (id int PRIMARY KEY); CREATE TABLE shop.y (id int PRIMARY KEY)"})
	if res[0].Err != nil || res[0].Outcome.Epoch != 4 || res[0].Outcome.Results[0].Epoch != 4 {
		t.Fatalf("atomic command: %+v", res[0])
	}
	x, _ := sm.Current().Schema.Table("shop", "x")
	y, _ := sm.Current().Schema.Table("shop", "y")
	if x == nil || y == nil || x.ID == y.ID {
		t.Fatalf("atomic command tables: %v %v", x, y)
	}
	a.apply(Command{Atomic: true, Text: "DROP TABLE shop.x; DROP TABLE shop.y"})

	// Non-atomic: statements before the failure stay.
	res = a.apply(Command{Text: "CREATE TABLE shop.c (id int PRIMARY KEY); DROP TABLE shop.nope; CREATE TABLE shop.d (id int PRIMARY KEY)"})
	if !errors.As(res[0].Err, &serr) || serr.Applied != 1 || !errors.Is(res[0].Err, schema.ErrNotFound) {
		t.Fatalf("non-atomic failure: %v", res[0].Err)
	}
	if !strings.Contains(res[0].Err.Error(), "statement 2 of 3") {
		t.Errorf("error does not say which statement: %v", res[0].Err)
	}
	if _, ok := sm.Current().Schema.Table("shop", "c"); !ok || sm.Current().Epoch != 6 {
		t.Fatalf("non-atomic: epoch %d, want 6 with shop.c", sm.Current().Epoch)
	}
	if _, ok := sm.Current().Schema.Table("shop", "d"); ok {
		t.Fatal("non-atomic: statement after the failure applied")
	}

	// Undecodable entries and syntax errors fail alone and still advance the index.
	res, err := sm.Apply([]Entry{{Index: a.index + 1, Data: []byte{42}}})
	a.index++
	if err != nil || !errors.Is(res[0].Err, ErrBadCommand) {
		t.Fatalf("bad entry: %v %v", res, err)
	}
	res = a.apply(Command{Text: "CREATE TABLE shop.e (id int PRIMRY KEY)"})
	if res[0].Err == nil {
		t.Fatal("syntax error applied")
	}
	if got := sm.Current().Index; got != a.index {
		t.Fatalf("index = %d, want %d", got, a.index)
	}
}

func TestReopenRestoresAndSkipsCoveredEntries(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL}, Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY, v text)"})
	a.apply(Command{Text: "CREATE KEYSPACE gone WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE gone.t (id int PRIMARY KEY)"})
	a.apply(Command{Text: "DROP KEYSPACE gone; CREATE TABLE shop.b (k text, c int, PRIMARY KEY (k, c)); DROP TABLE shop.a"})
	want := sm.Current()
	if err := sm.Close(); err != nil {
		t.Fatal(err)
	}

	sm = openSM(t, dir)
	defer sm.Close()
	got := sm.Current()
	if got.Epoch != want.Epoch || got.Index != want.Index {
		t.Fatalf("reopened at epoch %d index %d, want %d %d", got.Epoch, got.Index, want.Epoch, want.Index)
	}
	if diff := cmp.Diff(describe.Schema(want.Schema), describe.Schema(got.Schema)); diff != "" {
		t.Fatalf("reopened schema (-want +got):\n%s", diff)
	}
	// Replaying an entry the store already covers changes nothing.
	res, err := sm.Apply([]Entry{{Index: got.Index, Data: Command{Text: "DROP TABLE shop.b"}.Marshal(nil)}})
	if err != nil || res[0].Err == nil {
		t.Fatalf("replayed entry: %v %v", res, err)
	}
	if _, ok := sm.Current().Schema.Table("shop", "b"); !ok {
		t.Fatal("replayed entry applied twice")
	}
}

func TestWaitEpoch(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := sm.WaitEpoch(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitEpoch past the deadline: %v", err)
	}

	done := make(chan *ClusterMetadata)
	go func() {
		m, _ := sm.WaitEpoch(context.Background(), 2)
		done <- m
	}()
	a.apply(Command{Text: ksDDL})
	a.apply(Command{Text: "CREATE TABLE shop.a (id int PRIMARY KEY)"})
	if m := <-done; m.Epoch != 2 {
		t.Fatalf("WaitEpoch returned epoch %d", m.Epoch)
	}
}

func TestOpenLockedStore(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	defer sm.Close()
	if _, err := Open(Config{Dir: dir}); !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("second Open: %v, want ErrStoreLocked", err)
	}
}

func TestRetriedRequestIDAppliesOnce(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	first := a.apply(Command{RequestID: "r1", Text: ksDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"})
	again := a.apply(Command{RequestID: "r1", Text: ksDDL + "; CREATE TABLE shop.a (id int PRIMARY KEY)"})
	if first[0].Err != nil || again[0].Err != nil {
		t.Fatalf("first %v, retry %v", first[0].Err, again[0].Err)
	}
	if diff := cmp.Diff(first[0].Outcome, again[0].Outcome, ignoreTexts); diff != "" {
		t.Fatalf("retry answered differently (-first +retry):\n%s", diff)
	}
	if sm.Current().Epoch != 2 {
		t.Fatalf("epoch %d after a retried request, want 2", sm.Current().Epoch)
	}
	// A failed request is remembered too: its retry fails the same way.
	f1 := a.apply(Command{RequestID: "r2", Text: "DROP TABLE shop.nope"})
	a.apply(Command{Text: "CREATE TABLE shop.nope (id int PRIMARY KEY)"})
	f2 := a.apply(Command{RequestID: "r2", Text: "DROP TABLE shop.nope"})
	if f1[0].Err == nil || f2[0].Err == nil || f1[0].Err.Error() != f2[0].Err.Error() {
		t.Fatalf("failed request and its retry: %v / %v", f1[0].Err, f2[0].Err)
	}
	if _, ok := sm.Current().Schema.Table("shop", "nope"); !ok {
		t.Fatal("the retry of a failed DROP applied")
	}
	// Distinct ids apply independently.
	if r := a.apply(Command{RequestID: "r3", Text: "CREATE TABLE shop.b (id int PRIMARY KEY)"}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	sm.Close()
}

func TestRequestsAreBounded(t *testing.T) {
	var r Requests
	for i := range MaxRememberedRequests + 10 {
		r, _ = r.Remember(fmt.Sprint("id-", i), RequestRecord{Index: uint64(i)})
	}
	if r.Len() != MaxRememberedRequests {
		t.Fatalf("remembered %d, want %d", r.Len(), MaxRememberedRequests)
	}
	if _, ok := r.Get("id-9"); ok {
		t.Fatal("oldest id not evicted")
	}
	if rec, ok := r.Get(fmt.Sprint("id-", MaxRememberedRequests+9)); !ok || rec.Index != MaxRememberedRequests+9 {
		t.Fatal("newest id missing")
	}
	if ids := r.IDs(); len(ids) != MaxRememberedRequests || ids[0] != "id-10" {
		t.Fatalf("IDs() starts with %q, len %d", ids[0], len(ids))
	}
}

func TestRequestIDsSurviveReopen(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		dir := t.TempDir()
		sm, err := Open(Config{Dir: dir, FlushWindow: window})
		if err != nil {
			t.Fatal(err)
		}
		a := &applier{t: t, sm: sm}
		first := a.apply(Command{RequestID: "ok", Text: ksDDL}, Command{RequestID: "bad", Text: "DROP TABLE shop.x"})
		sm.Close()

		sm = openSM(t, dir)
		a.sm = sm
		again := a.apply(Command{RequestID: "ok", Text: ksDDL}, Command{RequestID: "bad", Text: "DROP TABLE shop.x"})
		if diff := cmp.Diff(first[0].Outcome, again[0].Outcome, ignoreTexts); diff != "" || again[0].Err != nil {
			t.Fatalf("window %v: retry after reopen (-first +retry):\n%s err %v", window, diff, again[0].Err)
		}
		if again[1].Err == nil || again[1].Err.Error() != first[1].Err.Error() || !errors.Is(again[1].Err, schema.ErrNotFound) {
			t.Fatalf("window %v: failed retry after reopen: %v, first %v", window, again[1].Err, first[1].Err)
		}
		if sm.Current().Epoch != 1 || sm.Current().Requests.Len() != 2 {
			t.Fatalf("window %v: epoch %d, %d requests", window, sm.Current().Epoch, sm.Current().Requests.Len())
		}
		sm.Close()
	}
}

func FuzzDecodeRequestRecord(f *testing.F) {
	f.Add(AppendRequestRecord(nil, RequestRecord{Index: 7, Outcome: Outcome{Epoch: 3, Results: []StatementResult{{Text: "x", Epoch: 3}}}}))
	f.Add(AppendRequestRecord(nil, RequestRecord{Index: 1, Err: &schema.Error{Code: schema.ErrNotFound, Reason: "r"}}))
	f.Add(AppendRequestRecord(nil, RequestRecord{Index: 2, Fingerprint: Command{Text: "x"}.Fingerprint(), Outcome: Outcome{Epoch: 1,
		Warnings: []guardrails.Warning{{Guardrail: "g", Message: "m"}}}}))
	for _, v1 := range []string{v1Record, v1FailedRecord} {
		b, _ := hex.DecodeString(v1)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := DecodeRequestRecord(b)
		if err != nil {
			return
		}
		again, err := DecodeRequestRecord(AppendRequestRecord(nil, rec))
		if err != nil || !cmp.Equal(rec, again, cmp.Comparer(sameError)) {
			t.Fatalf("re-encoding %+v: %+v, %v", rec, again, err)
		}
	})
}

// ignoreTexts compares outcomes without the statement texts, which
// remembered requests do not keep.
var ignoreTexts = cmpopts.IgnoreFields(StatementResult{}, "Text")

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}
