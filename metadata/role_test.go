package metadata

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/guardrails"
)

// TestCommandRole checks that a command's Role round-trips behind its
// flag, and that a command without one encodes as before roles existed.
func TestCommandRole(t *testing.T) {
	c := Command{Text: "CREATE TABLE shop.t (k int PRIMARY KEY)", Principal: "token:ci", Time: 9, HasIfEpoch: true, IfEpoch: 4}
	plain := c.Marshal(nil)
	c.Role = "ddl@shop,ddl@tenant_*"
	withRole := c.Marshal(nil)
	got, err := UnmarshalCommand(withRole)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if plain[2]&flagRole != 0 || !bytes.HasPrefix(withRole[3:], plain[3:]) {
		t.Errorf("a command without a role must encode as before (flag byte %#x): the role is appended behind its flag", plain[2])
	}
	for name, b := range map[string][]byte{
		"role flag without a role": append([]byte{plain[0], plain[1], plain[2] | flagRole}, plain[3:]...),
		"empty role":               append(append([]byte{plain[0], plain[1], plain[2] | flagRole}, plain[3:]...), 0),
		"truncated role":           withRole[:len(withRole)-1],
		"role in version 1":        {1, 0, flagRole, 0, 0, 0, 0, 0, 1, 'r'},
	} {
		if _, err := UnmarshalCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err = %v, want ErrBadCommand", name, err)
		}
	}
}

// TestRecordRole checks that a record's role reaches the history from the
// command, round-trips in a version 2 record, and that a record without a
// role encodes as version 1, as before.
func TestRecordRole(t *testing.T) {
	m := &ClusterMetadata{Guardrails: guardrails.Defaults()}
	next, eff, _, err := m.Apply(Command{Text: ksDDL, Principal: "token:ci", Role: "ddl@shop", RequestID: "r1"}, 1)
	if err != nil || len(eff.Records) != 1 {
		t.Fatalf("%v, %d records", err, len(eff.Records))
	}
	r := eff.Records[0]
	if r.Role != "ddl@shop" || r.Principal != "token:ci" {
		t.Fatalf("record %+v", r)
	}
	b := AppendRecord(nil, r)
	if b[0] != historyRecordVersionRole {
		t.Fatalf("a record with a role has version %d", b[0])
	}
	again, err := DecodeRecord(b)
	if err != nil || again.Role != "ddl@shop" || again.Principal != "token:ci" || again.RequestID != "r1" || len(again.Events) != 1 {
		t.Fatalf("decoded %+v, %v", again, err)
	}
	if !bytes.Equal(AppendRecord(nil, again), b) {
		t.Fatal("re-encoding differs")
	}
	if e, err := RecordEpoch(b); err != nil || e != r.Epoch {
		t.Fatalf("RecordEpoch = %d, %v", e, err)
	}
	for n := range len(b) {
		if _, err := DecodeRecord(b[:n]); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("%d of %d bytes: err = %v", n, len(b), err)
		}
	}

	_, eff, _, err = next.Apply(Command{Text: "DROP KEYSPACE shop", Principal: "token:ops"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	plain := AppendRecord(nil, eff.Records[0])
	if plain[0] != historyRecordVersion {
		t.Fatalf("a record without a role has version %d, want %d as before roles", plain[0], historyRecordVersion)
	}
	// A version 2 record with an empty role is not canonical.
	r.Role = ""
	bad := append([]byte{historyRecordVersionRole}, AppendRecord(nil, r)[1:]...)
	if _, err := DecodeRecord(bad); !errors.Is(err, ErrBadRecord) {
		t.Fatalf("version 2 without a role: %v", err)
	}
}
