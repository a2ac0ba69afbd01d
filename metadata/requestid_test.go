package metadata

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

// TestFingerprint pins the fingerprint of a command (it is persisted, so
// it must not change between builds) and checks what it covers.
func TestFingerprint(t *testing.T) {
	base := Command{RequestID: "r", Keyspace: "shop", Text: "CREATE TABLE t (id int PRIMARY KEY)", MaxMutationSize: 1 << 20}
	f := base.Fingerprint()
	// The first 16 bytes of SHA-256(00 00 04 "shop" 23 "CREATE ..." 00):
	// kind, flags, then keyspace, text and guardrails, length-prefixed.
	if got := hex.EncodeToString(f[:]); got != "2b8ee3f658660355c9c0fa9082be47f7" {
		t.Errorf("fingerprint changed: %s", got)
	}
	same := base
	same.RequestID, same.MaxMutationSize = "other id", 0
	if same.Fingerprint() != f {
		t.Error("the request id or the proposer's max_mutation_size changed the fingerprint")
	}
	g := guardrails.AppendSettings(nil, guardrails.Defaults())
	for name, c := range map[string]Command{
		"text":          {Keyspace: "shop", Text: "CREATE TABLE t (id int PRIMARY KEY) "},
		"keyspace":      {Keyspace: "shop2", Text: base.Text},
		"no keyspace":   {Text: base.Text},
		"atomic":        {Keyspace: "shop", Text: base.Text, Atomic: true},
		"kind":          {Kind: KindSetGuardrails, Keyspace: "shop", Text: base.Text},
		"guardrails":    {Keyspace: "shop", Text: base.Text, Guardrails: g},
		"only if unset": {Keyspace: "shop", Text: base.Text, OnlyIfUnset: true},
		// Fields are framed: moving text between them changes it.
		"framing": {Keyspace: "shopCREATE TABLE t (id int PRIMARY KEY)"},
	} {
		if c.Fingerprint() == f {
			t.Errorf("%s: same fingerprint", name)
		}
	}
	if (Command{}).Fingerprint().IsZero() {
		t.Error("a fingerprint is zero (which means unknown)")
	}
	if n := testing.AllocsPerRun(100, func() { base.Fingerprint() }); n != 0 {
		t.Errorf("Fingerprint of a small command: %v allocations", n)
	}
}

// TestRequestIDReusedByAnotherRequest checks that a command reusing a
// remembered request id for another request is refused, applies nothing
// and leaves the first result for the real retry.
func TestRequestIDReusedByAnotherRequest(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	first := Command{RequestID: "r1", Keyspace: "shop", Text: "CREATE TABLE a (id int PRIMARY KEY)", MaxMutationSize: 1 << 20}
	want := a.apply(first)[0]
	if want.Err != nil {
		t.Fatal(want.Err)
	}
	before := sm.Current()
	g := guardrails.Defaults()
	g.TablesWarnThreshold = 5
	for name, c := range map[string]Command{
		"text":       {Keyspace: "shop", Text: "CREATE TABLE b (id int PRIMARY KEY)"},
		"same text":  {Keyspace: "shop", Text: "CREATE TABLE a (id int PRIMARY KEY) "},
		"keyspace":   {Text: "CREATE TABLE a (id int PRIMARY KEY)"},
		"atomic":     {Keyspace: "shop", Text: first.Text, Atomic: true},
		"kind":       {Kind: KindSetGuardrails, Guardrails: guardrails.AppendSettings(nil, g)},
		"guardrails": {Kind: KindSetGuardrails, Keyspace: "shop", Text: first.Text, Guardrails: guardrails.AppendSettings(nil, g)},
	} {
		c.RequestID = "r1"
		got := a.apply(c)[0]
		if !errors.Is(got.Err, ErrRequestIDReused) || !errors.Is(got.Err, schema.ErrInvalid) || len(got.Outcome.Results) != 0 {
			t.Errorf("%s: %+v, want ErrRequestIDReused and no results", name, got)
		}
		if !strings.Contains(got.Err.Error(), `request id "r1" was already used by another request`) {
			t.Errorf("%s: message %q", name, got.Err)
		}
		cur := sm.Current()
		if cur.Epoch != before.Epoch || cur.Schema.Digest() != before.Schema.Digest() || cur.Guardrails != before.Guardrails || cur.Index != a.index {
			t.Errorf("%s: changed the metadata: epoch %d -> %d", name, before.Epoch, cur.Epoch)
		}
	}
	// The real retry, through a member with another max_mutation_size,
	// still gets the first result.
	retry := first
	retry.MaxMutationSize = 0
	if got := a.apply(retry)[0]; got.Err != nil || !cmp.Equal(got.Outcome, want.Outcome, ignoreTexts) {
		t.Fatalf("retry: %+v, want %+v", got, want)
	}
	if got, ok := sm.Current().Requests.Answer(Command{RequestID: "r1", Text: "DROP TABLE shop.a"}); !ok || !errors.Is(got.Err, ErrRequestIDReused) {
		t.Fatalf("Answer: %+v %v", got, ok)
	}
	if _, ok := sm.Current().Requests.Answer(Command{RequestID: "r2", Text: "DROP TABLE shop.a"}); ok {
		t.Fatal("Answer answers an id it does not remember")
	}
}

// Records as the code before fingerprints wrote them (record version 1).
const (
	// {Index: 7, Outcome: {Epoch: 3, Results: [CREATE TABLE shop.t applied
	// at 3], Warnings: [tables_warn_threshold "w"]}}
	v1Record = "01070301000c435245415445205441424c450473686f70017400010301157461626c65735f7761726e5f7468726573686f6c64017700"
	// {Index: 9, Outcome: {Epoch: 3}, Err: "DROP TABLE shop.x: table does
	// not exist" (not found)}
	v1FailedRecord = "010903000001032744524f50205441424c452073686f702e783a207461626c6520646f6573206e6f74206578697374"
)

func TestDecodeVersion1Records(t *testing.T) {
	b, _ := hex.DecodeString(v1Record)
	rec, err := DecodeRequestRecord(b)
	want := RequestRecord{Index: 7, Outcome: Outcome{Epoch: 3,
		Results:  []StatementResult{{Result: schema.Result{Kind: "CREATE TABLE", Keyspace: "shop", Table: "t", Applied: true}, Epoch: 3}},
		Warnings: []guardrails.Warning{{Guardrail: "tables_warn_threshold", Message: "w"}}}}
	if err != nil || !cmp.Equal(rec, want, cmp.Comparer(sameError)) || !rec.Fingerprint.IsZero() {
		t.Fatalf("version 1 record: %+v, %v", rec, err)
	}
	b, _ = hex.DecodeString(v1FailedRecord)
	rec, err = DecodeRequestRecord(b)
	if err != nil || rec.Index != 9 || !errors.Is(rec.Err, schema.ErrNotFound) || rec.Err.Error() != "DROP TABLE shop.x: table does not exist" {
		t.Fatalf("version 1 failed record: %+v, %v", rec, err)
	}
	// Written again, it is a version 2 record that still says unknown.
	again, err := DecodeRequestRecord(AppendRequestRecord(nil, rec))
	if err != nil || again.Fingerprint != rec.Fingerprint || again.Index != rec.Index {
		t.Fatalf("re-encoded: %+v, %v", again, err)
	}
	for _, bad := range []string{"03", "02", "0201020304"} {
		b, _ := hex.DecodeString(bad)
		if _, err := DecodeRequestRecord(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: %v, want ErrBadCommand", bad, err)
		}
	}
}

// TestVersion1RecordsInTheStoreKeepAnswering opens a schema.db whose
// remembered request was written before fingerprints: its retries are
// answered with the first result whatever they carry, as they were, and
// the new requests around it are checked.
func TestVersion1RecordsInTheStoreKeepAnswering(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	old := Command{RequestID: "old", Text: "CREATE TABLE shop.a (id int PRIMARY KEY)"}
	first := a.apply(old, Command{RequestID: "new", Text: "CREATE TABLE shop.b (id int PRIMARY KEY)"})
	sm.Close()
	rewriteAsVersion1(t, dir, "old")

	sm = openSM(t, dir)
	defer sm.Close()
	a.sm = sm
	rec, _ := sm.Current().Requests.Get("old")
	if !rec.Fingerprint.IsZero() {
		t.Fatal("the rewritten record has a fingerprint")
	}
	res := a.apply(old, Command{RequestID: "old", Text: "DROP TABLE shop.a"}, Command{RequestID: "new", Text: "DROP TABLE shop.b"})
	for i := range 2 {
		if res[i].Err != nil || !cmp.Equal(res[i].Outcome, first[0].Outcome, ignoreTexts) {
			t.Errorf("retry %d of a version 1 record: %+v, want %+v", i, res[i], first[0])
		}
	}
	if !errors.Is(res[2].Err, ErrRequestIDReused) {
		t.Errorf("reused new id: %v", res[2].Err)
	}
	if _, ok := sm.Current().Schema.Table("shop", "a"); !ok || sm.Current().Epoch != 3 {
		t.Fatalf("epoch %d", sm.Current().Epoch)
	}
}

// rewriteAsVersion1 rewrites the remembered request id in dir's schema.db
// as the code before fingerprints wrote it.
func rewriteAsVersion1(t *testing.T, dir, id string) {
	t.Helper()
	db, err := bolt.Open(dir+"/schema.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := sealed(tx, bucketRequests)
		v, err := b.get([]byte(id))
		if err != nil || len(v) < 17 || v[0] != recordVersion {
			t.Fatalf("record of %q: %x, %v", id, v, err)
		}
		var a arena
		return b.putBytes(&a, []byte(id), append([]byte{recordVersion1}, v[17:]...))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFingerprintsSurviveSnapshots restores a snapshot into a new state
// machine: a reused id is still refused there, the retry still answered,
// and a version 1 record in a snapshot still answers.
func TestFingerprintsSurviveSnapshots(t *testing.T) {
	sm := openSM(t, t.TempDir())
	a := &applier{t: t, sm: sm}
	a.apply(Command{Text: ksDDL})
	first := Command{RequestID: "r1", Text: "CREATE TABLE shop.a (id int PRIMARY KEY)"}
	want := a.apply(first)[0]
	data, err := sm.Capture(a.index)()
	sm.Close()
	if err != nil {
		t.Fatal(err)
	}

	other := openSM(t, t.TempDir())
	defer other.Close()
	if err := other.Restore(a.index, data); err != nil {
		t.Fatal(err)
	}
	b := &applier{t: t, sm: other, index: a.index}
	res := b.apply(first, Command{RequestID: "r1", Text: "CREATE TABLE shop.b (id int PRIMARY KEY)"})
	if res[0].Err != nil || !cmp.Equal(res[0].Outcome, want.Outcome, ignoreTexts) {
		t.Errorf("retry after restore: %+v", res[0])
	}
	if !errors.Is(res[1].Err, ErrRequestIDReused) || other.Current().Epoch != 2 {
		t.Errorf("reuse after restore: %v, epoch %d", res[1].Err, other.Current().Epoch)
	}

	// The same snapshot with the record as the code before fingerprints
	// wrote it: any retry under r1 gets the first result.
	c := capturedContents(t, data)
	if len(c.Requests) != 1 {
		t.Fatalf("decode: %d requests", len(c.Requests))
	}
	c.Requests[0].Record = append([]byte{recordVersion1}, c.Requests[0].Record[17:]...)
	third := openSM(t, t.TempDir())
	defer third.Close()
	if err := third.Restore(a.index, snapshot.Encode(nil, c)); err != nil {
		t.Fatal(err)
	}
	d := &applier{t: t, sm: third, index: a.index}
	res = d.apply(Command{RequestID: "r1", Text: "CREATE TABLE shop.b (id int PRIMARY KEY)"})
	if res[0].Err != nil || !cmp.Equal(res[0].Outcome, want.Outcome, ignoreTexts) || third.Current().Epoch != 2 {
		t.Errorf("retry of a version 1 record after restore: %+v", res[0])
	}
}
