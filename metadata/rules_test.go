package metadata

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/schema"
)

// TestCommandRulesEncoding: the rules version round-trips, after IfEpoch
// when both are set; a command without one encodes as before it existed
// (no flag, no bytes), and one of version 2 logged before decodes with
// RulesOriginal.
func TestCommandRulesEncoding(t *testing.T) {
	for _, c := range []Command{
		{Text: "DROP TABLE a.b", Rules: schema.CurrentRules},
		{Text: "DROP TABLE a.b", Atomic: true, HasIfEpoch: true, IfEpoch: 300, Rules: schema.CurrentRules, Time: 9},
	} {
		b := c.Marshal(nil)
		if b[2]&flagRules == 0 {
			t.Errorf("%+v: no rules flag in %x", c, b)
		}
		got, err := UnmarshalCommand(b)
		if err != nil {
			t.Fatalf("UnmarshalCommand(%+v): %v", c, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	// Version 2, kind DDL, flag if_epoch; request id "r", keyspace "",
	// text "x", max mutation size 0, no guardrails, principal "", time 0,
	// if_epoch 7: as a member logged it before rules versions.
	old := []byte{2, 0, flagIfEpoch, 1, 'r', 0, 1, 'x', 0, 0, 0, 0, 7}
	got, err := UnmarshalCommand(old)
	if err != nil {
		t.Fatal(err)
	}
	want := Command{RequestID: "r", Text: "x", HasIfEpoch: true, IfEpoch: 7}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a command logged before rules versions (-want +got):\n%s", diff)
	}
	if again := want.Marshal(nil); hex.EncodeToString(again) != hex.EncodeToString(old) {
		t.Errorf("a command without rules encodes as %x, want the bytes of before, %x", again, old)
	}
}

// TestUnmarshalCommandRejectsBadRules: the rules flag with no version, with
// version 0 (not canonical), with a version newer than this build (its
// members would apply it by rules this one does not have) or on a version 1
// command is a malformed command.
func TestUnmarshalCommandRejectsBadRules(t *testing.T) {
	good := Command{Text: "x", Rules: schema.CurrentRules}.Marshal(nil)
	body := good[:len(good)-1]
	v1 := []byte{1, 0, flagRules, 0, 0, 1, 'x', 0, 0, 1}
	for name, b := range map[string][]byte{
		"missing":   body,
		"zero":      append(append([]byte{}, body...), 0),
		"newer":     append(append([]byte{}, body...), schema.CurrentRules+1),
		"version 1": v1,
	} {
		_, err := UnmarshalCommand(b)
		if !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err = %v, want ErrBadCommand", name, err)
		}
		if name == "newer" && (err == nil || !strings.Contains(err.Error(), "newer than this build")) {
			t.Errorf("newer: %v, want it to say the version is newer than this build", err)
		}
	}
}

// droppedKindScript drops a regular and a static column and re-adds each
// as the other kind, which only rules that keep dropped kinds refuse.
var droppedKindScript = []string{
	ksDDL,
	"CREATE TABLE shop.t (k int, c int, v int, s int static, PRIMARY KEY (k, c))",
	"ALTER TABLE shop.t DROP v",
	"ALTER TABLE shop.t DROP s USING TIMESTAMP 99",
	"ALTER TABLE shop.t ADD s int",
	"ALTER TABLE shop.t ADD v int static",
}

// oldRulesDigest is the digest the members of the build before rules
// versions (commit fdc6b3f) made from droppedKindScript; oldRulesTable is
// their encoding of shop.t.
const (
	oldRulesDigest = "d7793d41c05f7a17019bf1bb52b4cf2e351b4cc27c8b85ddeedf214a34703b49"
	oldRulesTable  = "0154020473686f7001740000000000008000826d6c670000000004016b0c0101630c0201730c0001760c030100010100000201760c0301730c63"
)

// TestOldRulesApplyAsBefore: commands without a rules version, as members
// of an older build logged them, apply on this build to the same bytes
// and digest as on that build: the drops keep no kind, and the re-adds as
// the other kind are accepted.
func TestOldRulesApplyAsBefore(t *testing.T) {
	sm := openSM(t, t.TempDir())
	defer sm.Close()
	a := &applier{t: t, sm: sm}
	for _, text := range droppedKindScript {
		for _, r := range a.apply(Command{Text: text, Time: 5, RequestID: "r-" + text}) {
			if r.Err != nil {
				t.Fatalf("%s: %v", text, r.Err)
			}
		}
	}
	d := sm.Current().Schema.Digest()
	tbl, _ := sm.Current().Schema.Table("shop", "t")
	if got := hex.EncodeToString(d[:]); got != oldRulesDigest {
		t.Errorf("digest %s, want %s as the build before rules versions made", got, oldRulesDigest)
	}
	if got := hex.EncodeToString(schema.AppendTable(nil, tbl)); got != oldRulesTable {
		t.Errorf("table encoding %s, want %s", got, oldRulesTable)
	}
}

// TestCurrentRulesKeepDroppedKinds: under the current rules the drops
// record their kinds, which survive the store (reopened from disk), and
// re-adding a column as the other kind is refused with Cassandra's message
// and changes nothing.
func TestCurrentRulesKeepDroppedKinds(t *testing.T) {
	dir := t.TempDir()
	sm := openSM(t, dir)
	a := &applier{t: t, sm: sm}
	for _, text := range droppedKindScript[:4] {
		if res := a.apply(Command{Text: text, Rules: schema.CurrentRules}); res[0].Err != nil {
			t.Fatalf("%s: %v", text, res[0].Err)
		}
	}
	dropped := sm.Current()
	for text, want := range map[string]string{
		droppedKindScript[4]: "cannot re-add previously dropped column s of kind REGULAR, incompatible with previous kind STATIC",
		droppedKindScript[5]: "cannot re-add previously dropped column v of kind STATIC, incompatible with previous kind REGULAR",
	} {
		res := a.apply(Command{Text: text, Rules: schema.CurrentRules})
		if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, res[0].Err, want)
		}
	}
	before := sm.Current()
	if before.Schema.Digest() != dropped.Schema.Digest() {
		t.Fatal("a refused re-add changed the schema")
	}
	sm.Close()
	sm = openSM(t, dir)
	defer sm.Close()
	if sm.Current().Schema.Digest() != before.Schema.Digest() {
		t.Fatal("the schema reopened from the store differs")
	}
	tbl, _ := sm.Current().Schema.Table("shop", "t")
	v, _ := tbl.DroppedColumn("v")
	s, _ := tbl.DroppedColumn("s")
	if v.Kind != schema.DroppedRegular || s.Kind != schema.DroppedStatic || s.Epoch != 99 {
		t.Errorf("dropped v %+v, s %+v: want REGULAR, and STATIC at 99", v, s)
	}
	a.sm = sm
	if res := a.apply(Command{Text: "ALTER TABLE shop.t ADD v int", Rules: schema.CurrentRules}); res[0].Err != nil {
		t.Errorf("re-adding v as regular: %v", res[0].Err)
	}
}
