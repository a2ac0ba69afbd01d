package schema

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// droppedKindTable is ks.t (k, c, v, s static) after DROP v and DROP s
// under rules (Env.Rules), at epochs 3 and 4.
func droppedKindTable(t testing.TB, rules uint64) (Schema, *Table) {
	t.Helper()
	s := mustApply(t, Schema{}, simpleKS("ks"), &CreateTable{Keyspace: "ks", Name: "t",
		Columns:      []ColumnDef{{Name: "k", Type: TypeInt}, {Name: "c", Type: TypeInt}, {Name: "v", Type: TypeInt}, {Name: "s", Type: TypeText, Static: true}},
		PartitionKey: []string{"k"}, Clustering: []string{"c"}})
	for i, col := range []string{"v", "s"} {
		var err error
		if s, _, _, err = Apply(s, &AlterTable{Keyspace: "ks", Name: "t", Drop: []string{col}}, Env{Epoch: uint64(3 + i), Rules: rules}); err != nil {
			t.Fatal(err)
		}
	}
	tbl, _ := s.Table("ks", "t")
	return s, tbl
}

// TestDroppedKindRule: under RulesDroppedKind a dropped column comes back
// only as the kind it was dropped as, with Cassandra's message, both ways;
// records of unknown kind (RulesOriginal) take either kind, as before.
func TestDroppedKindRule(t *testing.T) {
	s, tbl := droppedKindTable(t, RulesDroppedKind)
	if v, _ := tbl.DroppedColumn("v"); v.Kind != DroppedRegular {
		t.Errorf("v dropped as %v, want REGULAR", v.Kind)
	}
	if sc, _ := tbl.DroppedColumn("s"); sc.Kind != DroppedStatic {
		t.Errorf("s dropped as %v, want STATIC", sc.Kind)
	}
	old, oldTbl := droppedKindTable(t, RulesOriginal)
	for i := range oldTbl.DroppedColumns() {
		if k := oldTbl.DroppedColumns()[i].Kind; k != DroppedUnknown {
			t.Errorf("RulesOriginal recorded %s as %v, want UNKNOWN", oldTbl.DroppedColumns()[i].Name, k)
		}
	}
	for _, tc := range []struct {
		name   string
		static bool
		want   string
	}{
		{"v", true, "ALTER TABLE ks.t: cannot re-add previously dropped column v of kind STATIC, incompatible with previous kind REGULAR"},
		{"s", false, "ALTER TABLE ks.t: cannot re-add previously dropped column s of kind REGULAR, incompatible with previous kind STATIC"},
		{"v", false, ""},
		{"s", true, ""},
	} {
		typ := Type(TypeInt)
		if tc.name == "s" {
			typ = TypeText
		}
		st := &AlterTable{Keyspace: "ks", Name: "t", Add: []ColumnDef{{Name: tc.name, Type: typ, Static: tc.static}}}
		for _, rules := range []uint64{RulesOriginal, CurrentRules} {
			ns, _, _, err := Apply(s, st, Env{Epoch: 10, Rules: rules})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, ErrInvalid)) {
				t.Errorf("ADD %s (static %v), rules %d: %v, want %q", tc.name, tc.static, rules, err, tc.want)
			}
			if err != nil && ns.Digest() != s.Digest() {
				t.Errorf("a refused ADD changed the schema")
			}
			if _, _, _, err := Apply(old, st, Env{Epoch: 10, Rules: rules}); err != nil {
				t.Errorf("ADD %s (static %v) over a record of unknown kind: %v, want it accepted", tc.name, tc.static, err)
			}
		}
	}
}

// TestDroppedKindEncoding: kinds round-trip under flagDroppedKinds; a table
// whose records have no kind encodes without the flag, byte for byte as
// before kinds existed (the bytes below are that build's encoding of
// droppedKindTable), and those bytes decode with unknown kinds.
func TestDroppedKindEncoding(t *testing.T) {
	_, tbl := droppedKindTable(t, CurrentRules)
	b := AppendTable(nil, tbl)
	if b[2]&flagDroppedKinds == 0 {
		t.Fatalf("no dropped-kinds flag in %x", b)
	}
	got, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := got.DroppedColumn("v"); v.Kind != DroppedRegular {
		t.Errorf("decoded v kind %v", v.Kind)
	}
	if sc, _ := got.DroppedColumn("s"); sc.Kind != DroppedStatic || sc.Epoch != 4 {
		t.Errorf("decoded s %+v", sc)
	}
	if string(AppendTable(nil, got)) != string(b) {
		t.Error("re-encoding the decoded table changed its bytes")
	}

	const before = "015402026b7301740000000000008000826d6c670000000002016b0c0101630c020100010100000201760c0301730e04"
	_, oldTbl := droppedKindTable(t, RulesOriginal)
	if got := hex.EncodeToString(AppendTable(nil, oldTbl)); got != before {
		t.Errorf("a table without kinds encodes as %s, want %s", got, before)
	}
	raw, _ := hex.DecodeString(before)
	dec, err := DecodeTable(raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dec.DroppedColumns() {
		if dec.DroppedColumns()[i].Kind != DroppedUnknown {
			t.Errorf("old encoding decoded %+v, want an unknown kind", dec.DroppedColumns()[i])
		}
	}

	withKinds := append([]byte(nil), raw...)
	withKinds[2] |= flagDroppedKinds
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		// Both records unknown under the flag: not canonical.
		{"flag without kinds", insertAfterEpochs(t, withKinds, 0, 0), "dropped-kinds flag with no known kind"},
		{"kind out of range", insertAfterEpochs(t, withKinds, 1, 3), "dropped column s has an invalid kind"},
	} {
		if _, err := DecodeTable(tc.b); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", tc.name, err, tc.want)
		}
	}
	noDropped := *oldTbl
	noDropped.SetDroppedColumns(nil)
	nb := AppendTable(nil, &noDropped)
	nb[2] |= flagDroppedKinds
	if _, err := DecodeTable(nb); err == nil || !strings.Contains(err.Error(), "dropped-kinds flag") {
		t.Errorf("the dropped-kinds flag without dropped columns: %v", err)
	}
}

// insertAfterEpochs returns the encoding of droppedKindTable(RulesOriginal)
// in b with kind byte a after the first record's epoch and z after the
// second's (the records end the encoding: v's epoch is the byte 3 before
// "s", s's epoch the last byte).
func insertAfterEpochs(t *testing.T, b []byte, a, z byte) []byte {
	t.Helper()
	i := len(b) - 5 // 03, then 01 73 0e 04: name "s", text, epoch 4
	if b[i] != 3 || b[len(b)-1] != 4 {
		t.Fatalf("unexpected layout %x", b)
	}
	out := append([]byte(nil), b[:i+1]...)
	out = append(out, a)
	out = append(out, b[i+1:]...)
	return append(out, z)
}
