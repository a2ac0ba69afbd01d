package schema

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const auditClass = "org.apache.cassandra.triggers.AuditTrigger"

// triggerBase is keyspace shop with table orders, an index on it, and
// trigger audit on it.
func triggerBase(t testing.TB) Schema {
	return mustApply(t, Schema{}, simpleKS("shop"), simpleTable("shop", "orders"),
		&CreateIndex{Keyspace: "shop", Table: "orders", Name: "by_v", Target: IndexTarget{Column: "v"}},
		&CreateTrigger{Keyspace: "shop", Table: "orders", Name: "audit", Class: auditClass})
}

// TestTriggerApply checks CREATE and DROP TRIGGER against Cassandra's
// rules: the table must exist, names are unique per table and follow the
// index-name rules, the class is not empty, and IF [NOT] EXISTS makes the
// statements no-ops (DROP TRIGGER IF EXISTS also on a missing table or
// keyspace).
func TestTriggerApply(t *testing.T) {
	base := triggerBase(t)
	tests := []struct {
		name     string
		st       Statement
		env      Env
		code     error
		msg      string
		applied  bool
		triggers []string // of shop.orders afterwards
	}{
		{name: "create", st: &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "a_first", Class: "C"}, applied: true, triggers: []string{"a_first", "audit"}},
		{name: "create default keyspace", st: &CreateTrigger{Table: "orders", Name: "z", Class: "C"}, env: Env{DefaultKeyspace: "shop"}, applied: true, triggers: []string{"audit", "z"}},
		{name: "create duplicate", st: &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "audit", Class: "C"}, code: ErrAlreadyExists,
			msg: "CREATE TRIGGER audit ON shop.orders: trigger audit already exists on table shop.orders", triggers: []string{"audit"}},
		{name: "create if not exists", st: &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "audit", Class: "C", IfNotExists: true}, triggers: []string{"audit"}},
		{name: "create missing table", st: &CreateTrigger{Keyspace: "shop", Table: "nope", Name: "x", Class: "C", IfNotExists: true}, code: ErrNotFound,
			msg: "CREATE TRIGGER x ON shop.nope: table shop.nope does not exist", triggers: []string{"audit"}},
		{name: "create missing keyspace", st: &CreateTrigger{Keyspace: "nope", Table: "orders", Name: "x", Class: "C"}, code: ErrNotFound,
			msg: "CREATE TRIGGER x ON nope.orders: keyspace nope does not exist", triggers: []string{"audit"}},
		{name: "create no keyspace", st: &CreateTrigger{Table: "orders", Name: "x", Class: "C"}, code: ErrInvalid,
			msg: "CREATE TRIGGER x ON orders: no keyspace specified and no default keyspace", triggers: []string{"audit"}},
		{name: "create bad name", st: &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "a-b", Class: "C"}, code: ErrInvalid,
			msg: `CREATE TRIGGER "a-b" ON shop.orders: trigger name "a-b" is invalid: it must be 1 to 48 characters of [A-Za-z0-9_]`, triggers: []string{"audit"}},
		{name: "create empty class", st: &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "x"}, code: ErrInvalid,
			msg: "CREATE TRIGGER x ON shop.orders: trigger class is empty", triggers: []string{"audit"}},
		{name: "drop", st: &DropTrigger{Keyspace: "shop", Table: "orders", Name: "audit"}, applied: true},
		{name: "drop missing", st: &DropTrigger{Keyspace: "shop", Table: "orders", Name: "nope"}, code: ErrNotFound,
			msg: "DROP TRIGGER nope ON shop.orders: trigger nope does not exist on table shop.orders", triggers: []string{"audit"}},
		{name: "drop missing if exists", st: &DropTrigger{Keyspace: "shop", Table: "orders", Name: "nope", IfExists: true}, triggers: []string{"audit"}},
		{name: "drop missing table", st: &DropTrigger{Keyspace: "shop", Table: "nope", Name: "audit"}, code: ErrNotFound,
			msg: "DROP TRIGGER audit ON shop.nope: table shop.nope does not exist", triggers: []string{"audit"}},
		{name: "drop missing table if exists", st: &DropTrigger{Keyspace: "shop", Table: "nope", Name: "audit", IfExists: true}, triggers: []string{"audit"}},
		{name: "drop missing keyspace if exists", st: &DropTrigger{Keyspace: "nope", Table: "orders", Name: "audit", IfExists: true}, triggers: []string{"audit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, diff, res, err := Apply(base, tt.st, tt.env)
			switch {
			case tt.code == nil && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.code != nil && !errors.Is(err, tt.code):
				t.Fatalf("error %v, want code %v", err, tt.code)
			case tt.code != nil && err.Error() != tt.msg:
				t.Fatalf("error %q, want %q", err, tt.msg)
			}
			if res.Applied != tt.applied || diff.Empty() == tt.applied {
				t.Errorf("applied %v with %d changes, want %v", res.Applied, len(diff.Changes), tt.applied)
			}
			if tt.applied && (len(diff.Changes) != 1 || diff.Changes[0].Op != OpPutTable || diff.Changes[0].Table != "orders") {
				t.Errorf("changes %+v, want one PutTable of orders", diff.Changes)
			}
			tbl, _ := s.Table("shop", "orders")
			var names []string
			for _, tr := range tbl.Triggers() {
				names = append(names, tr.Name)
			}
			if d := cmp.Diff(tt.triggers, names); d != "" {
				t.Errorf("triggers (-want +got):\n%s", d)
			}
			if ComputeDigest(s) != s.Digest() || ComputeEncodedSize(s) != s.EncodedSize() {
				t.Errorf("maintained digest or size differs from the computed one")
			}
			if old, _ := base.Table("shop", "orders"); len(old.Triggers()) != 1 {
				t.Errorf("the applied-to schema changed: %+v", old.Triggers())
			}
		})
	}
}

// TestTriggerGoesWithTable checks that DROP TABLE drops the table's
// triggers (a table of the same name created again has none), that ALTER
// TABLE keeps them, and that CREATE TABLE ... LIKE does not copy them.
func TestTriggerGoesWithTable(t *testing.T) {
	s := mustApply(t, triggerBase(t), &AlterTable{Keyspace: "shop", Name: "orders", Options: map[string]string{"comment": "'x'"}})
	if tbl, _ := s.Table("shop", "orders"); len(tbl.Triggers()) != 1 {
		t.Fatalf("ALTER TABLE lost the trigger: %+v", tbl.Triggers())
	}
	like := mustApply(t, s, &CreateTableLike{Keyspace: "shop", Name: "copy", SourceKeyspace: "shop", Source: "orders"})
	if tbl, _ := like.Table("shop", "copy"); len(tbl.Triggers()) != 0 {
		t.Errorf("CREATE TABLE LIKE copied triggers: %+v", tbl.Triggers())
	}
	s = mustApply(t, s, &DropTable{Keyspace: "shop", Name: "orders"}, simpleTable("shop", "orders"))
	if tbl, _ := s.Table("shop", "orders"); len(tbl.Triggers()) != 0 {
		t.Errorf("a new table has the old one's triggers: %+v", tbl.Triggers())
	}
	if ComputeDigest(s) != s.Digest() {
		t.Errorf("maintained digest differs from the computed one")
	}
}

// TestTriggerDescribe checks that DESCRIBE prints a table's triggers after
// its indexes, in name order, names quoted as identifiers and the class
// as a string, and that describe.Table alone leaves them out.
func TestTriggerDescribe(t *testing.T) {
	s := mustApply(t, triggerBase(t), &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "Quoted", Class: "it's.Class"})
	k, _ := s.Keyspace("shop")
	got := DescribeKeyspace(k)
	want := `CREATE INDEX by_v ON shop.orders (v);
CREATE TRIGGER "Quoted" ON shop.orders USING 'it''s.Class';
CREATE TRIGGER audit ON shop.orders USING '` + auditClass + `';
`
	if !strings.HasSuffix(got, want) {
		t.Errorf("DESCRIBE KEYSPACE ends:\n%s\nwant it to end:\n%s", got, want)
	}
	tbl, _ := k.Table("orders")
	if strings.Contains(DescribeTable(tbl), "TRIGGER") {
		t.Errorf("DescribeTable prints triggers:\n%s", DescribeTable(tbl))
	}
	if !strings.HasSuffix(want, DescribeTriggers(tbl)) {
		t.Errorf("DescribeTriggers:\n%s", DescribeTriggers(tbl))
	}
}

// TestTriggerDigest checks that a trigger changes the digest and the
// encoded size, that both equal their recomputation, and that dropping it
// brings the schema back to the digest it had.
func TestTriggerDigest(t *testing.T) {
	before := mustApply(t, Schema{}, simpleKS("shop"), simpleTable("shop", "orders"))
	with := mustApply(t, before, &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "audit", Class: auditClass})
	other := mustApply(t, before, &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "audit", Class: auditClass + "2"})
	if with.Digest() == before.Digest() || with.Digest() == other.Digest() || with.EncodedSize() <= before.EncodedSize() {
		t.Errorf("a trigger or its class does not change the digest and size")
	}
	if with.Digest() != ComputeDigest(with) || with.EncodedSize() != ComputeEncodedSize(with) || with.ObjectCount() != before.ObjectCount() {
		t.Errorf("maintained digest, size or object count is off")
	}
	after := mustApply(t, with, &DropTrigger{Keyspace: "shop", Table: "orders", Name: "audit"})
	if after.Digest() != before.Digest() || InternalState(after) != InternalState(before) {
		t.Errorf("dropping the trigger does not restore the schema:\n%s\nwant:\n%s", InternalState(after), InternalState(before))
	}
}

// TestTriggerUndo checks that CREATE and DROP TRIGGER are undone through
// their table's prior, encoded and decoded as the history stores it.
func TestTriggerUndo(t *testing.T) {
	before := triggerBase(t)
	for _, st := range []Statement{
		&CreateTrigger{Keyspace: "shop", Table: "orders", Name: "b", Class: "C"},
		&DropTrigger{Keyspace: "shop", Table: "orders", Name: "audit"},
	} {
		after, diff, _, err := Apply(before, st, Env{Epoch: 10})
		if err != nil {
			t.Fatal(err)
		}
		c := diff.Changes[0]
		prior, err := DecodePrior(c.Op, AppendPrior(nil, c.Op, Prior(before, c)))
		if err != nil {
			t.Fatal(err)
		}
		back, err := Undo(after, c, prior)
		if err != nil {
			t.Fatal(err)
		}
		if InternalState(back) != InternalState(before) {
			t.Errorf("undo of %s: got\n%s\nwant\n%s", st.Kind(), InternalState(back), InternalState(before))
		}
	}
}

// TestTriggerEncoding checks the table encoding with triggers: a round
// trip, the flag only when there are triggers, and corrupt or invalid
// trigger sections refused.
func TestTriggerEncoding(t *testing.T) {
	s := mustApply(t, triggerBase(t), &CreateTrigger{Keyspace: "shop", Table: "orders", Name: "Zed", Class: "x.Y"})
	tbl, _ := s.Table("shop", "orders")
	b := AppendTable(nil, tbl)
	got, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(tbl, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if b[2]&flagTriggers == 0 {
		t.Errorf("flags %#x lack the triggers flag", b[2])
	}
	bad := []struct {
		name string
		t    Table
		want string
	}{
		{"unsorted", Table{Extra: &TableExtra{Triggers: []Trigger{{"b", "C"}, {"a", "C"}}}}, "triggers are not sorted by name and distinct at a"},
		{"duplicate", Table{Extra: &TableExtra{Triggers: []Trigger{{"a", "C"}, {"a", "D"}}}}, "triggers are not sorted by name and distinct at a"},
		{"bad name", Table{Extra: &TableExtra{Triggers: []Trigger{{"a b", "C"}}}}, `trigger name "a b" is invalid`},
		{"empty class", Table{Extra: &TableExtra{Triggers: []Trigger{{"a", ""}}}}, "trigger a: trigger class is empty"},
	}
	for _, tt := range bad {
		c := *tbl
		c.SetTriggers(tt.t.Triggers())
		_, err := DecodeTable(AppendTable(nil, &c))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	// The flag with a count of zero is not canonical.
	none := AppendTable(nil, minimalTable(t))
	none[2] |= flagTriggers
	none = append(none, 0)
	if _, err := DecodeTable(none); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "triggers flag with no triggers") {
		t.Errorf("flag without triggers: %v", err)
	}
}

// TestTriggerOldEncoding checks that tables encoded before triggers
// existed (bytes written by the previous AppendTable: a plain table, and
// one with a dropped column) still decode, and that a table without
// triggers still encodes to those bytes, so its digest is unchanged.
func TestTriggerOldEncoding(t *testing.T) {
	for _, old := range []string{
		"015400026b7303745f310000000000008000826d6c6700000000020269640c0101760e0001000000",
		"015402026b7303745f310000000000008000826d6c6700000000010269640c01010000000101760e07",
	} {
		b, _ := hex.DecodeString(old)
		tbl, err := DecodeTable(b)
		if err != nil {
			t.Fatalf("%s: %v", old, err)
		}
		if tbl.Triggers() != nil {
			t.Errorf("%s: triggers %+v", old, tbl.Triggers())
		}
		if again := hex.EncodeToString(AppendTable(nil, tbl)); again != old {
			t.Errorf("re-encoded as %s, want %s", again, old)
		}
	}
}
