package schema

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// viewKS is keyspace ks with base table b (k, c, v, w) and its views
// b_by_v (SELECT *) and a_by_w (k, c, w), named so that one view sorts
// before its base and one after.
// a_by_w selects k, c, w and v.
func viewKS(t testing.TB) Schema {
	return mustApply(t, Schema{}, simpleKS("ks"),
		&CreateTable{Keyspace: "ks", Name: "b", Columns: []ColumnDef{{Name: "k", Type: TypeInt}, {Name: "c", Type: TypeInt}, {Name: "v", Type: TypeText}, {Name: "w", Type: TypeInt}},
			PartitionKey: []string{"k"}, Clustering: []string{"c"}},
		&CreateView{Keyspace: "ks", Name: "b_by_v", Base: "b", AllColumns: true, PartitionKey: []string{"v"}, Clustering: []string{"k", "c"},
			Where: notNull("v", "k", "c"), Options: map[string]string{"comment": "'by v'"}},
		&CreateView{Keyspace: "ks", Name: "a_by_w", Base: "b", Columns: []string{"k", "c", "w", "v"}, PartitionKey: []string{"w"}, Clustering: []string{"k", "c"},
			Where: append(notNull("w", "k"), ViewRelation{Columns: []string{"c"}, Op: ">", Value: "0"})})
}

// notNull is "col IS NOT NULL" of each column.
func notNull(cols ...string) []ViewRelation {
	out := make([]ViewRelation, len(cols))
	for i, c := range cols {
		out[i] = ViewRelation{Columns: []string{c}, Op: RelIsNot, Value: "NULL"}
	}
	return out
}

// TestViewEncoding checks the encoding of a view: a round trip, the view
// flag only on views, and the structural checks decoding runs (the view
// section, the relations in canonical text, the select order, no static
// or counter column, triggers or dropped columns).
func TestViewEncoding(t *testing.T) {
	s := viewKS(t)
	v, _ := s.Table("ks", "a_by_w")
	b := AppendTable(nil, v)
	got, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(v, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if b[2]&flagView == 0 {
		t.Errorf("flags %#x lack the view flag", b[2])
	}
	base, _ := s.Table("ks", "b")
	if AppendTable(nil, base)[2]&flagView != 0 {
		t.Errorf("a table has the view flag")
	}
	rel := func(op, value string) []ViewRelation {
		return append(notNull("w", "k", "c"), ViewRelation{Columns: []string{"c"}, Op: op, Value: value})
	}
	bad := []struct {
		name string
		edit func(t *Table)
		want string
	}{
		{"own base", func(t *Table) { t.View().Base = t.Name }, "cannot be its own base table"},
		{"bad base", func(t *Table) { t.View().Base = "a b" }, `base table name "a b" is invalid`},
		{"static", func(t *Table) { t.Columns[3].Kind = Static }, "materialized view column v is static"},
		{"counter", func(t *Table) { t.Columns[3] = Column{Name: "n", Type: TypeCounter} }, "materialized view column n is a counter"},
		{"trigger", func(t *Table) { t.SetTriggers([]Trigger{{"a", "C"}}) }, "a materialized view has no triggers"},
		{"dropped", func(t *Table) { t.SetDroppedColumns([]DroppedColumn{{Name: "z", Type: TypeInt, Epoch: 1}}) }, "a materialized view has no dropped columns"},
		{"order", func(t *Table) { t.Columns[0], t.Columns[1] = t.Columns[1], t.Columns[0] }, "not in select order"},
		{"no where", func(t *Table) { t.View().Where = nil }, "a materialized view needs a WHERE clause"},
		{"unknown op", func(t *Table) { t.View().Where = rel("~", "1") }, `unknown operator "~"`},
		{"is not", func(t *Table) { t.View().Where = rel(RelIsNot, "1") }, "IS NOT takes NULL"},
		{"spaces", func(t *Table) { t.View().Where = rel("=", "[1,2]") }, `expected ", " or "]"`},
		{"upper case", func(t *Table) { t.View().Where = rel("=", "TRUE") }, "unexpected \"TRUE\""},
		{"statement", func(t *Table) { t.View().Where = rel("=", "1; DROP KEYSPACE ks") }, "after a term"},
		{"string", func(t *Table) { t.View().Where = rel("=", "'it's'") }, "after a term"},
		{"field", func(t *Table) { t.View().Where = rel("=", `{"a": 1}`) }, `field name "\"a\"" is not in canonical form`},
		{"in", func(t *Table) { t.View().Where = rel(RelIn, "1, 2") }, "IN takes a list of terms in parentheses"},
		{"between", func(t *Table) { t.View().Where = rel(RelBetween, "1") }, "expected 2 terms, found 1"},
		{"map key on a tuple", func(t *Table) {
			t.View().Where = append(notNull("w", "k", "c"), ViewRelation{Columns: []string{"c"}, Tuple: true, Key: "1", Op: "=", Value: "(1)"})
		}, "a map element takes a comparison operator"},
		{"several columns", func(t *Table) {
			t.View().Where = append(notNull("w", "k", "c"), ViewRelation{Columns: []string{"c", "k"}, Op: "=", Value: "1"})
		}, "not a tuple relation"},
		{"tuple with LIKE", func(t *Table) {
			t.View().Where = append(notNull("w", "k", "c"), ViewRelation{Columns: []string{"c"}, Tuple: true, Op: RelLike, Value: "(1)"})
		}, "a tuple relation takes a comparison, IN or BETWEEN"},
		{"deep", func(t *Table) { t.View().Where = rel("=", strings.Repeat("[", 20)+strings.Repeat("]", 20)) }, "term nested too deeply"},
	}
	for _, tt := range bad {
		c := *v
		view := *v.View()
		c.SetView(&view)
		c.Columns = append([]Column(nil), v.Columns...)
		tt.edit(&c)
		_, err := DecodeTable(AppendTable(nil, &c))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	// Corrupt view sections.
	for name, edit := range map[string]func([]byte) []byte{
		"view flags":     func(b []byte) []byte { return withViewSection(b, base, 0x02) },
		"relation flags": func(b []byte) []byte { return withViewSection(b, base, 0, 0x04) },
		"empty key":      func(b []byte) []byte { return withViewSection(b, base, 0, relationKey) },
	} {
		if _, err := DecodeTable(edit(nil)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: decoded", name)
		}
	}
}

// withViewSection encodes table t with a hand-made view section: view
// flags, then one relation with the given flags (if any), column "k",
// an empty key when relationKey is set, "IS NOT" NULL.
func withViewSection(_ []byte, t *Table, viewFlags byte, relFlags ...byte) []byte {
	b := AppendTable(nil, t)
	b[2] |= flagView
	b = appendString(b, "base")
	b = append(b, viewFlags)
	b = append(b, byte(len(relFlags)))
	for _, f := range relFlags {
		b = append(b, f, 1)
		b = appendString(b, "k")
		if f&relationKey != 0 {
			b = appendString(b, "")
		}
		b = appendString(b, RelIsNot)
		b = appendString(b, "NULL")
	}
	return b
}

// TestViewOldEncoding checks that tables encoded before views existed
// (bytes written by the previous AppendTable and AppendKeyspaceObjects:
// a table with a clustering order, options, a dropped column and
// triggers, and its keyspace) decode, re-encode to the same bytes and
// keep their digest.
func TestViewOldEncoding(t *testing.T) {
	const oldTable = "015406026b7301740000000000008000826d6c670000000003016b0c0101630e020176220e0c0001000101010207636f6d6d656e74032778271067635f67726163655f7365636f6e64730231300101730c0302016103782e5901620469742773"
	const oldKeyspace = "014f1d014b026b730101127265706c69636174696f6e5f666163746f72013101000160" + "01" + "5406026b7301740000000000008000826d6c670000000003016b0c0101630e020176220e0c0001000101010207636f6d6d656e74032778271067635f67726163655f7365636f6e64730231300101730c0302016103782e590162046974277300"
	const oldDigest = "49fbe76bc68c7cd26215bc56bf728cc715753a237f8bde11bb4ff30c52748e60"
	b, _ := hex.DecodeString(oldTable)
	tbl, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.View() != nil || len(tbl.Triggers()) != 2 || len(tbl.DroppedColumns()) != 1 {
		t.Errorf("decoded %+v", tbl)
	}
	if again := hex.EncodeToString(AppendTable(nil, tbl)); again != oldTable {
		t.Errorf("re-encoded as %s", again)
	}
	kb, _ := hex.DecodeString(oldKeyspace)
	k, err := DecodeKeyspaceObjects(kb)
	if err != nil {
		t.Fatal(err)
	}
	var sb Builder
	sb.PutKeyspace(k)
	s := sb.Schema()
	if got := hex.EncodeToString(s.digest.sum[:]); got != oldDigest {
		t.Errorf("digest %s, want %s", got, oldDigest)
	}
	if hex.EncodeToString(AppendKeyspaceObjects(nil, k)) != oldKeyspace || s.TableCount() != 1 || s.ViewCount() != 0 {
		t.Errorf("keyspace re-encoded differently, or counts off")
	}
}

// TestViewDigest checks that a view changes the digest, the encoded size
// and the object count, that all three equal their recomputation, and
// that dropping it restores the schema exactly.
func TestViewDigest(t *testing.T) {
	before := viewKS(t)
	with := mustApply(t, before, &CreateView{Keyspace: "ks", Name: "c_by_c", Base: "b", Columns: []string{"c", "k"},
		PartitionKey: []string{"c"}, Clustering: []string{"k"}, Where: notNull("c", "k")})
	other := mustApply(t, before, &CreateView{Keyspace: "ks", Name: "c_by_c", Base: "b", Columns: []string{"c", "k"},
		PartitionKey: []string{"c"}, Clustering: []string{"k"}, Where: notNull("k", "c")})
	if with.Digest() == before.Digest() || with.Digest() == other.Digest() || with.EncodedSize() <= before.EncodedSize() || with.ObjectCount() != before.ObjectCount()+1 {
		t.Errorf("a view, or the order of its relations, does not change the digest, size and count")
	}
	if with.Digest() != ComputeDigest(with) || with.EncodedSize() != ComputeEncodedSize(with) {
		t.Errorf("maintained digest or size is off")
	}
	after := mustApply(t, with, &DropView{Keyspace: "ks", Name: "c_by_c"})
	if InternalState(after) != InternalState(before) {
		t.Errorf("dropping the view does not restore the schema:\n%s\nwant:\n%s", InternalState(after), InternalState(before))
	}
}

// TestViewUndo checks that every view change is undone through its prior,
// encoded and decoded as the history stores it, newest change first:
// CREATE, ALTER and DROP MATERIALIZED VIEW, and the base's ADD and RENAME
// that change its views; and that Undo refuses to take back a base table
// that still has views, or to put back a view without its base.
func TestViewUndo(t *testing.T) {
	before := viewKS(t)
	for _, st := range []Statement{
		&CreateView{Keyspace: "ks", Name: "z", Base: "b", AllColumns: true, PartitionKey: []string{"c", "k"}, Where: notNull("c", "k")},
		&AlterView{Keyspace: "ks", Name: "b_by_v", Options: map[string]string{"gc_grace_seconds": "5"}},
		&DropView{Keyspace: "ks", Name: "a_by_w"},
		&AlterTable{Keyspace: "ks", Name: "b", Add: []ColumnDef{{Name: "x", Type: TypeBigint}}},
		&AlterTable{Keyspace: "ks", Name: "b", Rename: []RenameField{{From: "k", To: "kk"}, {From: "c", To: "cc"}}},
		&DropKeyspace{Name: "ks"},
	} {
		after, diff, _, err := Apply(before, st, Env{Epoch: 10})
		if err != nil {
			t.Fatal(err)
		}
		back := after
		for i := len(diff.Changes) - 1; i >= 0; i-- {
			c := diff.Changes[i]
			prior, err := DecodePrior(c.Op, AppendPrior(nil, c.Op, Prior(before, c)))
			if err != nil {
				t.Fatal(err)
			}
			if back, err = Undo(back, c, prior); err != nil {
				t.Fatalf("undo %s: %v", st.Kind(), err)
			}
		}
		if InternalState(back) != InternalState(before) {
			t.Errorf("undo of %s: got\n%s\nwant\n%s", st.Kind(), InternalState(back), InternalState(before))
		}
	}
	// The base's creation cannot be taken back while it has views.
	if _, err := Undo(before, Change{Op: OpPutTable, Keyspace: "ks", Table: "b"}, nil); err == nil || !strings.Contains(err.Error(), "table still has materialized views") {
		t.Errorf("undo of the base's creation: %v", err)
	}
	// A dropped view does not come back without its base.
	v, _ := before.Table("ks", "a_by_w")
	noBase := mustApply(t, Schema{}, simpleKS("ks"))
	if _, err := Undo(noBase, Change{Op: OpDropTable, Keyspace: "ks", Table: "a_by_w"}, v); err == nil || !strings.Contains(err.Error(), "base table ks.b of the prior materialized view does not exist") {
		t.Errorf("undo of a view's drop without its base: %v", err)
	}
}

// TestViewLoading checks that views load like tables, before or after
// their base, through a Builder putting them one at a time or in bulk and
// DecodeKeyspaceObjects, with the same state (views by base, counts,
// digest) as when applied; and that a keyspace record holding a view
// without its base is corrupt.
func TestViewLoading(t *testing.T) {
	want := viewKS(t)
	k, _ := want.Keyspace("ks")
	empty := mustApply(t, Schema{}, simpleKS("ks"))
	l, one := NewBuilder(empty), NewBuilder(empty)
	for _, tbl := range k.Tables() { // a_by_w, b, b_by_v: a view before its base
		if err := l.PutTable(tbl); err != nil {
			t.Fatal(err)
		}
		if err := one.putTableAlone(tbl); err != nil {
			t.Fatal(err)
		}
	}
	for name, got := range map[string]Schema{"bulk": l.Schema(), "one at a time": one.Schema()} {
		if got.Digest() != want.Digest() || got.TableCount() != 1 || got.ViewCount() != 2 {
			t.Errorf("%s: digest or counts differ: %d tables %d views", name, got.TableCount(), got.ViewCount())
		}
		gk, _ := got.Keyspace("ks")
		if KeyspaceState(gk) != KeyspaceState(k) {
			t.Errorf("%s:\n%s\nwant:\n%s", name, KeyspaceState(gk), KeyspaceState(k))
		}
	}
	dk, err := DecodeKeyspaceObjects(AppendKeyspaceObjects(nil, k))
	if err != nil {
		t.Fatal(err)
	}
	if KeyspaceState(dk) != KeyspaceState(k) || len(dk.Views("b")) != 2 {
		t.Errorf("decoded:\n%s\nwant:\n%s", KeyspaceState(dk), KeyspaceState(k))
	}
	// Replacing a view by a view of another base moves it in the index.
	v, _ := k.Table("a_by_w")
	moved := *v
	view := *v.View()
	view.Base = "other"
	moved.SetView(&view)
	mb := NewBuilder(want)
	if err := mb.PutTable(&moved); err != nil {
		t.Fatal(err)
	}
	ms := mb.Schema()
	mk, _ := ms.Keyspace("ks")
	if len(mk.Views("b")) != 1 || len(mk.Views("other")) != 1 || ms.ViewCount() != 2 {
		t.Errorf("moved view: %d %d", len(mk.Views("b")), len(mk.Views("other")))
	}
	if _, err := DecodeKeyspaceObjects(AppendKeyspaceObjects(nil, mk)); err == nil || !strings.Contains(err.Error(), "its base table other is not a table of the keyspace") {
		t.Errorf("view without its base decoded: %v", err)
	}
	// A view replacing a table of its name, and back, keeps the counts.
	tb := NewBuilder(want)
	if err := tb.PutTable(&Table{Keyspace: "ks", Name: "b", ID: v.ID, Columns: v.Columns, PartitionKey: v.PartitionKey, Clustering: v.Clustering, Extra: &TableExtra{View: &View{Base: "c", Where: v.View().Where}}}); err != nil {
		t.Fatal(err)
	}
	tv := tb.Schema()
	if tv.TableCount() != 0 || tv.ViewCount() != 3 {
		t.Errorf("a view over a table: %d tables %d views", tv.TableCount(), tv.ViewCount())
	}
}

// TestViewStatementsDoNotWalkTables checks that CREATE, ALTER and DROP
// MATERIALIZED VIEW, and the base-table statements that look at views
// (ALTER TABLE ADD and RENAME with views, DROP TABLE refused for them),
// cost the same allocations with 1,000 tables as with 8,000 (within
// 1.2x), as TestApplyDoesNotWalkTables checks the others.
func TestViewStatementsDoNotWalkTables(t *testing.T) {
	const n = 1000
	build := func(n int) Schema {
		s := schemaWithTables(t, n)
		s = mustApply(t, s, &CreateView{Keyspace: "ks", Name: "t5_by_v", Base: "t5", AllColumns: true, PartitionKey: []string{"v", "id"}, Where: notNull("v", "id")})
		return s
	}
	small, large := build(n), build(8*n)
	for _, tt := range []struct {
		name string
		st   Statement
		ok   bool
	}{
		{"CreateView", &CreateView{Keyspace: "ks", Name: "new_view", Base: "t7", Columns: []string{"id", "v"}, PartitionKey: []string{"v"}, Clustering: []string{"id"}, Where: notNull("v", "id")}, true},
		{"AlterView", &AlterView{Keyspace: "ks", Name: "t5_by_v", Options: map[string]string{"comment": "'x'"}}, true},
		{"DropView", &DropView{Keyspace: "ks", Name: "t5_by_v"}, true},
		{"AlterBaseAdd", &AlterTable{Keyspace: "ks", Name: "t5", Add: []ColumnDef{{Name: "added", Type: TypeBigint}}}, true},
		{"AlterBaseRename", &AlterTable{Keyspace: "ks", Name: "t5", Rename: []RenameField{{From: "id", To: "pk"}}}, true},
		{"DropBase", &DropTable{Keyspace: "ks", Name: "t5"}, false},
		{"DropBaseColumn", &AlterTable{Keyspace: "ks", Name: "t5", Drop: []string{"v"}}, false},
	} {
		allocs := func(s Schema) float64 {
			return testing.AllocsPerRun(100, func() {
				if _, _, _, err := Apply(s, tt.st, Env{Epoch: 1}); (err == nil) != tt.ok {
					t.Fatal(err)
				}
			})
		}
		a, b := allocs(small), allocs(large)
		t.Logf("%s: %v allocations with %d tables, %v with %d", tt.name, a, n, b, 8*n)
		if b > 1.2*a {
			t.Errorf("%s allocates %v with %d tables vs %v with %d", tt.name, b, 8*n, a, n)
		}
	}
}
