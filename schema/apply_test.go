package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/cqltext"
)

func simpleKS(name string) *CreateKeyspace {
	return &CreateKeyspace{Name: name, DurableWrites: true, Replication: Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}}}
}

func simpleTable(ks, name string) *CreateTable {
	return &CreateTable{Keyspace: ks, Name: name, Columns: []ColumnDef{
		{Name: "id", Type: TypeInt, PrimaryKey: true},
		{Name: "v", Type: TypeText},
	}}
}

// mustApply applies statements in order and fails the test on an error.
func mustApply(t testing.TB, s Schema, sts ...Statement) Schema {
	t.Helper()
	for i, st := range sts {
		var err error
		s, _, _, err = Apply(s, st, Env{Epoch: uint64(i + 1)})
		if err != nil {
			t.Fatalf("apply %s %s: %v", st.Kind(), st.Object(), err)
		}
	}
	return s
}

func TestApply(t *testing.T) {
	base := mustApply(t, Schema{}, simpleKS("shop"), simpleTable("shop", "orders"))
	tests := []struct {
		name      string
		st        Statement
		env       Env
		code      error  // expected error code, nil for success
		msg       string // expected error text
		applied   bool
		changes   []ChangeOp
		keyspaces int
		tables    int
	}{
		{name: "create keyspace", st: simpleKS("other"), applied: true, changes: []ChangeOp{OpPutKeyspace}, keyspaces: 2, tables: 1},
		{name: "create existing keyspace", st: simpleKS("shop"), code: ErrAlreadyExists, msg: "CREATE KEYSPACE shop: keyspace already exists", keyspaces: 1, tables: 1},
		{name: "create keyspace if not exists", st: &CreateKeyspace{Name: "shop", IfNotExists: true, Replication: simpleKS("x").Replication}, keyspaces: 1, tables: 1},
		{name: "create keyspace bad name", st: &CreateKeyspace{Name: "a-b", Replication: simpleKS("x").Replication}, code: ErrInvalid, msg: `CREATE KEYSPACE "a-b": keyspace name "a-b" is invalid: it must be 1 to 48 characters of [A-Za-z0-9_]`, keyspaces: 1, tables: 1},
		{name: "create keyspace bad replication", st: &CreateKeyspace{Name: "k", Replication: Replication{Class: "Nope"}}, code: ErrInvalid, msg: `CREATE KEYSPACE k: unknown replication strategy class "Nope"`, keyspaces: 1, tables: 1},
		{name: "drop keyspace", st: &DropKeyspace{Name: "shop"}, applied: true, changes: []ChangeOp{OpDropKeyspace}, keyspaces: 0, tables: 0},
		{name: "drop missing keyspace", st: &DropKeyspace{Name: "nope"}, code: ErrNotFound, msg: "DROP KEYSPACE nope: keyspace does not exist", keyspaces: 1, tables: 1},
		{name: "drop missing keyspace if exists", st: &DropKeyspace{Name: "nope", IfExists: true}, keyspaces: 1, tables: 1},
		{name: "create table", st: simpleTable("shop", "items"), applied: true, changes: []ChangeOp{OpPutTable}, keyspaces: 1, tables: 2},
		{name: "create table default keyspace", st: simpleTable("", "items"), env: Env{DefaultKeyspace: "shop"}, applied: true, changes: []ChangeOp{OpPutTable}, keyspaces: 1, tables: 2},
		{name: "create table no keyspace", st: simpleTable("", "items"), code: ErrInvalid, msg: "CREATE TABLE items: no keyspace specified and no default keyspace", keyspaces: 1, tables: 1},
		{name: "create existing table", st: simpleTable("shop", "orders"), code: ErrAlreadyExists, msg: "CREATE TABLE shop.orders: table already exists", keyspaces: 1, tables: 1},
		{name: "create table if not exists", st: &CreateTable{Keyspace: "shop", Name: "orders", IfNotExists: true, Columns: []ColumnDef{{Name: "x", Type: TypeInt, PrimaryKey: true}}}, keyspaces: 1, tables: 1},
		{name: "create table missing keyspace", st: simpleTable("nope", "t"), code: ErrNotFound, msg: "CREATE TABLE nope.t: keyspace nope does not exist", keyspaces: 1, tables: 1},
		{name: "create table no primary key", st: &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "x", Type: TypeInt}}}, code: ErrInvalid, msg: "CREATE TABLE shop.t: PRIMARY KEY is missing", keyspaces: 1, tables: 1},
		{name: "create table duplicate column", st: &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "x", Type: TypeInt, PrimaryKey: true}, {Name: "x", Type: TypeText}}}, code: ErrInvalid, msg: "CREATE TABLE shop.t: duplicate column name x", keyspaces: 1, tables: 1},
		{name: "create table unknown key column", st: &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "x", Type: TypeInt}}, PartitionKey: []string{"y"}}, code: ErrInvalid, msg: "CREATE TABLE shop.t: unknown column y in PRIMARY KEY", keyspaces: 1, tables: 1},
		{name: "create table nil type", st: &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "x", PrimaryKey: true}}}, code: ErrInvalid, msg: "CREATE TABLE shop.t: column x: missing type", keyspaces: 1, tables: 1},
		{name: "create table counter mix", st: &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "x", Type: TypeInt, PrimaryKey: true}, {Name: "c", Type: TypeCounter}, {Name: "v", Type: TypeText}}}, code: ErrInvalid, msg: "CREATE TABLE shop.t: cannot mix counter and non-counter columns outside the PRIMARY KEY", keyspaces: 1, tables: 1},
		{name: "create table bad id", st: &CreateTable{Keyspace: "shop", Name: "t", ID: "xyz", Columns: []ColumnDef{{Name: "x", Type: TypeInt, PrimaryKey: true}}}, code: ErrInvalid, msg: "CREATE TABLE shop.t: table id xyz is not a UUID", keyspaces: 1, tables: 1},
		{name: "create table bad option", st: &CreateTable{Keyspace: "shop", Name: "t", Options: map[string]string{"Bad-Name": "1"}, Columns: []ColumnDef{{Name: "x", Type: TypeInt, PrimaryKey: true}}}, code: ErrInvalid, msg: `CREATE TABLE shop.t: unknown table property "bad-name"`, keyspaces: 1, tables: 1},
		{name: "drop table", st: &DropTable{Keyspace: "shop", Name: "orders"}, applied: true, changes: []ChangeOp{OpDropTable}, keyspaces: 1, tables: 0},
		{name: "drop missing table", st: &DropTable{Keyspace: "shop", Name: "nope"}, code: ErrNotFound, msg: "DROP TABLE shop.nope: table does not exist", keyspaces: 1, tables: 1},
		{name: "drop table missing keyspace", st: &DropTable{Keyspace: "nope", Name: "t"}, code: ErrNotFound, msg: "DROP TABLE nope.t: keyspace nope does not exist", keyspaces: 1, tables: 1},
		{name: "drop missing table if exists", st: &DropTable{Keyspace: "shop", Name: "nope", IfExists: true}, keyspaces: 1, tables: 1},
		{name: "nil statement", st: nil, code: ErrInvalid, msg: "nil statement", keyspaces: 1, tables: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := DescribeSchema(base)
			s, diff, res, err := Apply(base, tt.st, tt.env)
			if tt.code != nil {
				if !errors.Is(err, tt.code) {
					t.Fatalf("err = %v, want code %v", err, tt.code)
				}
				var se *Error
				if !errors.As(err, &se) || err.Error() != tt.msg {
					t.Fatalf("err = %q, want %q", err, tt.msg)
				}
				for _, other := range []error{ErrAlreadyExists, ErrNotFound, ErrInvalid} {
					if other != tt.code && errors.Is(err, other) {
						t.Errorf("err also matches %v", other)
					}
				}
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if res.Applied != tt.applied {
				t.Errorf("Applied = %v, want %v", res.Applied, tt.applied)
			}
			if tt.st != nil && res.Kind != tt.st.Kind() {
				t.Errorf("Kind = %q, want %q", res.Kind, tt.st.Kind())
			}
			var ops []ChangeOp
			for _, c := range diff.Changes {
				ops = append(ops, c.Op)
			}
			if len(ops) != len(tt.changes) || (len(ops) > 0 && ops[0] != tt.changes[0]) {
				t.Errorf("changes = %v, want %v", ops, tt.changes)
			}
			if got := s.KeyspaceCount(); got != tt.keyspaces {
				t.Errorf("KeyspaceCount = %d, want %d", got, tt.keyspaces)
			}
			if got := s.TableCount(); got != tt.tables {
				t.Errorf("TableCount = %d, want %d", got, tt.tables)
			}
			if !res.Applied && DescribeSchema(s) != before {
				t.Errorf("a statement that did not apply changed the schema")
			}
			if DescribeSchema(base) != before {
				t.Errorf("Apply modified the old schema")
			}
		})
	}
}

func TestDiffValues(t *testing.T) {
	s := mustApply(t, Schema{}, simpleKS("shop"))
	s2, diff, res, err := Apply(s, &CreateTable{Keyspace: "shop", Name: "events",
		Columns:         []ColumnDef{{Name: "k", Type: TypeText}, {Name: "at", Type: TypeTimestamp}, {Name: "v", Type: ListType{Elem: TypeInt}}, {Name: "s", Type: TypeInt, Static: true}},
		PartitionKey:    []string{"k"},
		Clustering:      []string{"at"},
		ClusteringOrder: []ClusteringColumn{{Name: "at", Order: Desc}},
		Options:         map[string]string{"comment": "'x'"},
	}, Env{Epoch: 7, Seq: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res != (Result{Kind: "CREATE TABLE", Keyspace: "shop", Table: "events", Applied: true}) {
		t.Errorf("result = %+v", res)
	}
	if len(diff.Changes) != 1 {
		t.Fatalf("changes = %+v", diff.Changes)
	}
	c := diff.Changes[0]
	tbl, _ := s2.Table("shop", "events")
	if c.Op != OpPutTable || c.Keyspace != "shop" || c.Table != "events" || c.TableValue != tbl || c.KeyspaceValue != nil {
		t.Errorf("change = %+v", c)
	}
	if tbl.ID != TableID(7, 2) {
		t.Errorf("ID = %s, want %s", tbl.ID, TableID(7, 2))
	}
	wantKinds := []ColumnKind{PartitionKey, Clustering, Regular, Static}
	for i, col := range tbl.Columns {
		if col.Kind != wantKinds[i] {
			t.Errorf("column %s kind %v, want %v", col.Name, col.Kind, wantKinds[i])
		}
	}
	if len(tbl.Clustering) != 1 || tbl.Clustering[0] != (ClusteringColumn{Name: "at", Order: Desc}) {
		t.Errorf("clustering = %+v", tbl.Clustering)
	}
	if _, ok := s.Table("shop", "events"); ok {
		t.Errorf("old schema sees the new table")
	}
	k, _ := s2.Keyspace("shop")
	if k.TableCount() != 1 || len(k.Tables()) != 1 || k.Tables()[0] != tbl {
		t.Errorf("keyspace tables = %v", k.Tables())
	}
}

func TestTableID(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range []uint64{0, 1, 2, 15, 16, 1 << 12, 1<<16 - 1, 1 << 32, 1<<64 - 1} {
		for _, seq := range []uint32{0, 1, 1<<32 - 1} {
			id := TableID(e, seq).String()
			if seen[id] {
				t.Fatalf("duplicate id %s for epoch %d seq %d", id, e, seq)
			}
			seen[id] = true
			if c, ok := cqltext.CanonicalUUID(id); !ok || c != id {
				t.Fatalf("id %q is not canonical UUID text", id)
			}
			if id[14] != '8' || !strings.ContainsRune("89ab", rune(id[19])) {
				t.Fatalf("id %s is not a version 8, RFC 9562 variant UUID", id)
			}
		}
	}
	if TableID(1, 0).String() >= TableID(2, 0).String() || TableID(255, 0).String() >= TableID(256, 0).String() {
		t.Errorf("ids do not sort by epoch")
	}
}

func TestPutKeyspaceAndTable(t *testing.T) {
	var b Builder
	if err := b.PutTable(&Table{Keyspace: "ks", Name: "t", ID: TableID(1, 0), Columns: []Column{{Name: "id", Type: TypeInt, Kind: PartitionKey}}, PartitionKey: []string{"id"}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PutTable without keyspace: %v", err)
	}
	b.PutKeyspace(&Keyspace{Name: "ks", Replication: Replication{Class: SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}})
	tbl := &Table{Keyspace: "ks", Name: "t", ID: TableID(1, 0), Columns: []Column{{Name: "id", Type: TypeInt, Kind: PartitionKey}}, PartitionKey: []string{"id"}}
	if err := b.PutTable(tbl); err != nil {
		t.Fatal(err)
	}
	_ = b.PutTable(tbl) // replacing keeps the count
	if s := b.Schema(); s.TableCount() != 1 {
		t.Fatalf("TableCount = %d", s.TableCount())
	}
	_ = b.PutTable(tbl) // and so does replacing it once the keyspace has tables
	if s := b.Schema(); s.TableCount() != 1 {
		t.Fatalf("TableCount = %d", s.TableCount())
	}
	// Replacing the keyspace keeps its tables.
	b.PutKeyspace(&Keyspace{Name: "ks", DurableWrites: true, Replication: Replication{Class: SimpleStrategy, Options: map[string]string{"replication_factor": "3"}}})
	s := b.Schema()
	if got, ok := s.Table("ks", "t"); !ok || got != tbl || s.TableCount() != 1 {
		t.Fatalf("tables lost by PutKeyspace")
	}
	if k, _ := s.Keyspace("ks"); !k.DurableWrites || k.Replication.Options["replication_factor"] != "3" {
		t.Fatalf("keyspace not replaced: %+v", k)
	}
	bad := *tbl
	bad.PartitionKey = nil
	if err := b.PutTable(&bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("PutTable of invalid table: %v", err)
	}
	if err := b.PutTable(nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("PutTable(nil): %v", err)
	}
	if b.PutKeyspace(nil); b.Schema().KeyspaceCount() != 1 {
		t.Fatal("PutKeyspace(nil) changed the schema")
	}
	if got := b.Schema(); got.keyspaces != s.keyspaces || got.Digest() != s.Digest() {
		t.Fatal("failed puts changed the schema")
	}
}

func TestZeroSchema(t *testing.T) {
	var s Schema
	if s.KeyspaceCount() != 0 || s.TableCount() != 0 || s.Keyspaces() != nil || DescribeSchema(s) != "" {
		t.Fatal("zero schema is not empty")
	}
	if _, ok := s.Table("a", "b"); ok {
		t.Fatal("zero schema has a table")
	}
	var k *Keyspace
	if k.TableCount() != 0 || k.Tables() != nil {
		t.Fatal("nil keyspace has tables")
	}
}

func TestNormalizeReplication(t *testing.T) {
	tests := []struct {
		in     Replication
		class  string
		opts   map[string]string
		reason string
	}{
		{in: Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": " 03"}}, class: SimpleStrategy, opts: map[string]string{"replication_factor": "3"}},
		{in: Replication{Class: "org.apache.cassandra.locator.simplestrategy", Options: map[string]string{"replication_factor": "1"}}, class: SimpleStrategy, opts: map[string]string{"replication_factor": "1"}},
		{in: Replication{Class: "NetworkTopologyStrategy", Options: map[string]string{"dc1": "3", "dc2": "0"}}, class: NetworkTopologyStrategy, opts: map[string]string{"dc1": "3", "dc2": "0"}},
		{in: Replication{Class: "NetworkTopologyStrategy"}, class: NetworkTopologyStrategy},
		{in: Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "-1"}}, reason: `replication_factor must be a non-negative integer, not "-1"`},
		{in: Replication{Class: "NetworkTopologyStrategy", Options: map[string]string{"dc1": "-1"}}, reason: `replication factor for "dc1" must be a non-negative integer, not "-1"`},
		{in: Replication{}, reason: "missing replication strategy class"},
	}
	for _, tt := range tests {
		got, reason := NormalizeReplication(tt.in)
		if reason != tt.reason {
			t.Errorf("%+v: reason %q, want %q", tt.in, reason, tt.reason)
			continue
		}
		if reason != "" {
			continue
		}
		if got.Class != tt.class || len(got.Options) != len(tt.opts) {
			t.Errorf("%+v: got %+v", tt.in, got)
		}
		for k, v := range tt.opts {
			if got.Options[k] != v {
				t.Errorf("%+v: option %s = %q, want %q", tt.in, k, got.Options[k], v)
			}
		}
	}
}

func TestTypes(t *testing.T) {
	for _, name := range []string{"ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration", "float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint", "uuid", "varint"} {
		nt, ok := NativeTypeByName(strings.ToUpper(name))
		if !ok || nt.String() != name {
			t.Errorf("NativeTypeByName(%q) = %v, %v", name, nt, ok)
		}
	}
	if nt, ok := NativeTypeByName("varchar"); !ok || nt != TypeText {
		t.Errorf("varchar is not text")
	}
	if _, ok := NativeTypeByName("integer"); ok {
		t.Errorf("integer is not a type")
	}
	typ := MapType{Key: TypeText, Value: FrozenType{Inner: ListType{Elem: TupleType{Elems: []Type{TypeInt, VectorType{Elem: TypeFloat, Dimension: 3}}}}}}
	if got, want := typ.String(), "map<text, frozen<list<tuple<int, vector<float, 3>>>>>"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if !TypesEqual(typ, typ) || TypesEqual(typ, MapType{Key: TypeText, Value: TypeInt}) {
		t.Errorf("TypesEqual is wrong")
	}
	if !IsMultiCell(typ) || IsMultiCell(FrozenType{Inner: typ}) || IsMultiCell(TypeInt) {
		t.Errorf("IsMultiCell is wrong")
	}
}

func TestQuoteIdentifier(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "a_1": "a_1", "Abc": `"Abc"`, "1a": `"1a"`, "select": `"select"`, "key": "key", `a"b`: `"a""b"`, "a b": `"a b"`} {
		if got := cqltext.QuoteIdentifier(in); got != want {
			t.Errorf("cqltext.QuoteIdentifier(%q) = %s, want %s", in, got, want)
		}
	}
}
