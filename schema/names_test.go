package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestIdentifierRules checks the rules of every kind of name, each where
// it is created: keyspaces, tables and indexes 1 to 48 characters of
// [A-Za-z0-9_]; columns and user type fields 1 to 1024 bytes of UTF-8
// without control or bidirectional formatting characters; user types 1
// to 48 characters without them, not a type name.
func TestIdentifierRules(t *testing.T) {
	base := mustApply(t, Schema{}, simpleKS("shop"), simpleTable("shop", "orders"),
		&CreateTable{Keyspace: "shop", Name: "keyed", Columns: []ColumnDef{{Name: "k", Type: TypeInt, PrimaryKey: true}, {Name: "v", Type: TypeText}}},
		&CreateType{Keyspace: "shop", Name: "addr", Fields: []Field{{Name: "street", Type: TypeText}}})
	type stmtFor func(name string) Statement
	column := map[string]stmtFor{
		"CREATE TABLE column": func(n string) Statement {
			return &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "id", Type: TypeInt, PrimaryKey: true}, {Name: n, Type: TypeText}}}
		},
		"CREATE TABLE key column": func(n string) Statement {
			return &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: n, Type: TypeInt, PrimaryKey: true}}}
		},
		"ALTER TABLE ADD": func(n string) Statement {
			return &AlterTable{Keyspace: "shop", Name: "orders", Add: []ColumnDef{{Name: n, Type: TypeText}}}
		},
		"ALTER TABLE RENAME TO": func(n string) Statement {
			return &AlterTable{Keyspace: "shop", Name: "keyed", Rename: []RenameField{{From: "k", To: n}}}
		},
		"CREATE TYPE field": func(n string) Statement {
			return &CreateType{Keyspace: "shop", Name: "x", Fields: []Field{{Name: n, Type: TypeInt}}}
		},
		"ALTER TYPE ADD": func(n string) Statement {
			return &AlterType{Keyspace: "shop", Name: "addr", Add: &Field{Name: n, Type: TypeInt}}
		},
		"ALTER TYPE RENAME TO": func(n string) Statement {
			return &AlterType{Keyspace: "shop", Name: "addr", Rename: []RenameField{{From: "street", To: n}}}
		},
	}
	named := map[string]stmtFor{
		"CREATE KEYSPACE": func(n string) Statement { return simpleKS(n) },
		"CREATE TABLE":    func(n string) Statement { return simpleTable("shop", n) },
		"CREATE INDEX": func(n string) Statement {
			return &CreateIndex{Keyspace: "shop", Name: n, Table: "orders", Target: IndexTarget{Column: "v"}}
		},
	}
	typ := map[string]stmtFor{
		"CREATE TYPE": func(n string) Statement {
			return &CreateType{Keyspace: "shop", Name: n, Fields: []Field{{Name: "a", Type: TypeInt}}}
		},
	}
	tests := []struct {
		name  string
		kinds map[string]stmtFor
		want  string // "" for accepted, else a part of the reason
	}{
		{"v2", column, ""},
		{"Mixed Case, spaces & \"quotes\"", column, ""},
		{"naïve 名前 🙂", column, ""},
		{"zero\u200bwidth", column, ""}, // a format character, not a control one
		{strings.Repeat("é", 512), column, ""},
		{"", column, "name is empty"},
		{strings.Repeat("a", 1025), column, "name is longer than 1024 bytes"},
		{"bad\xffutf8", column, "name is not valid UTF-8"},
		{"nul\x00", column, `name "nul\x00" contains a control character (U+0000)`},
		{"new\nline", column, `name "new\nline" contains a control character (U+000A)`},
		{"tab\t", column, "contains a control character (U+0009)"},
		{"del\x7f", column, "contains a control character (U+007F)"},
		{"c1\u0085", column, "contains a control character (U+0085)"},
		{"total\u202e", column, `name "total\u202e" contains a bidirectional formatting character (U+202E), which would make it show as another name`},
		{"a\u202ab\u202c", column, "contains a bidirectional formatting character (U+202A)"},
		{"iso\u2066x\u2069", column, "contains a bidirectional formatting character (U+2066)"},
		{"lrm\u200e", column, "contains a bidirectional formatting character (U+200E)"},
		{"alm\u061c", column, "contains a bidirectional formatting character (U+061C)"},
		{"ls\u2028", column, "contains a line or paragraph separator (U+2028)"},
		{"zwj\u200d", column, ""}, // a joiner, not a formatting override

		{"Orders_2", named, ""},
		{strings.Repeat("a", 48), named, ""},
		{strings.Repeat("a", 49), named, "must be 1 to 48 characters of [A-Za-z0-9_]"},
		{"a b", named, "must be 1 to 48 characters of [A-Za-z0-9_]"},
		{"é", named, "must be 1 to 48 characters of [A-Za-z0-9_]"},
		{"nl\n", named, "must be 1 to 48 characters of [A-Za-z0-9_]"},

		{"Address Book", typ, ""},
		{strings.Repeat("é", 48), typ, ""},
		{strings.Repeat("é", 49), typ, "must be 1 to 48 characters"},
		{"nl\n", typ, "contains a control character"},
		{"c1\u0085", typ, "contains a control character (U+0085)"},
		{"Address\u202eBook", typ, "type name \"Address\\u202eBook\" contains a bidirectional formatting character (U+202E)"},
		{"text", typ, "is reserved"},
		{"interval", typ, "is reserved"},
	}
	for _, tt := range tests {
		for kind, st := range tt.kinds {
			// As a new request: admitted, then applied.
			err := Admit(st(tt.name))
			if err == nil {
				_, _, _, err = Apply(base, st(tt.name), Env{Epoch: 10})
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s %.40q: %v", kind, tt.name, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("%s %.40q: %v, want an error saying %q", kind, tt.name, err, tt.want)
			}
		}
	}
}

// TestApplyDoesNotCheckAdmissionRules: an entry logged before control
// and bidirectional characters were refused replays as it applied (Apply
// does not check admission rules), while Admit refuses the same statement
// as a new request, saying which name.
func TestApplyDoesNotCheckAdmissionRules(t *testing.T) {
	base := mustApply(t, Schema{}, simpleKS("shop"))
	for _, name := range []string{"new\nline", "rlo\u202e"} {
		st := &CreateTable{Keyspace: "shop", Name: "t", Columns: []ColumnDef{{Name: "id", Type: TypeInt, PrimaryKey: true}, {Name: name, Type: TypeText}}}
		err := Admit(st)
		var une *UnprintableNameError
		if err == nil || !strings.Contains(err.Error(), "CREATE TABLE shop.t: column name") || !errors.Is(err, ErrInvalid) ||
			!errors.As(err, &une) || une.Name != name {
			t.Fatalf("Admit: %v, want a refusal naming the statement, the object and the name", err)
		}
		if _, _, _, err := Apply(base, st, Env{Epoch: 2}); err != nil {
			t.Fatalf("replaying an entry logged before the rule: %v", err)
		}
	}
}

// TestAdmitFunctionNames: the names a CREATE FUNCTION or AGGREGATE
// creates are held to the same rule as columns.
func TestAdmitFunctionNames(t *testing.T) {
	for _, st := range []Statement{
		&CreateFunction{Keyspace: "shop", Name: "f\u202e", Args: []FunctionArg{{Name: "a", Type: TypeInt}}},
		&CreateFunction{Keyspace: "shop", Name: "f", Args: []FunctionArg{{Name: "a\u2067", Type: TypeInt}}},
		&CreateAggregate{Keyspace: "shop", Name: "agg\x1b"},
	} {
		if err := Admit(st); !errors.Is(err, ErrInvalid) {
			t.Errorf("Admit(%s %q): %v, want a refusal", st.Kind(), st.Object(), err)
		}
	}
	if err := Admit(&CreateFunction{Keyspace: "shop", Name: "naïve", Args: []FunctionArg{{Name: "名前", Type: TypeInt}}}); err != nil {
		t.Errorf("Admit of printable function names: %v", err)
	}
}

// TestOldNamesWithControlCharactersStillLoad: a schema written before
// control characters were refused still decodes, and the column can be
// dropped (references are not new names).
func TestOldNamesWithControlCharactersStillLoad(t *testing.T) {
	base := mustApply(t, Schema{}, simpleKS("shop"))
	old := &Table{Keyspace: "shop", Name: "t", ID: TableID(2, 0), PartitionKey: []string{"id"},
		Columns: []Column{{Name: "id", Type: TypeInt, Kind: PartitionKey}, {Name: "new\nline", Type: TypeText, Kind: Regular}}}
	got, err := DecodeTable(AppendTable(nil, old))
	if err != nil || got.Columns[1].Name != "new\nline" {
		t.Fatalf("decode: %v", err)
	}
	b := NewBuilder(base)
	if err := b.PutTable(got); err != nil {
		t.Fatal(err)
	}
	s := b.Schema()
	if _, _, _, err := Apply(s, &AlterTable{Keyspace: "shop", Name: "t", Drop: []string{"new\nline"}}, Env{Epoch: 5}); err != nil {
		t.Fatalf("drop: %v", err)
	}
}
