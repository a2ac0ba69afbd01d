package schema_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// functionBase is keyspace ks with a user type, functions and aggregates
// of every form: an overloaded name, a quoted name, a keyword name, a
// state function that returns null on null input, a final function.
const functionBase = `
CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE ks;
CREATE TYPE pt (x int, y int);
CREATE FUNCTION plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;';
CREATE FUNCTION over(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;';
CREATE FUNCTION over(a text) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return 1;';
CREATE FUNCTION "Fin"(s int) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE java AS $$return "" + s;$$;
CREATE FUNCTION token(s pt, l list<int>) RETURNS NULL ON NULL INPUT RETURNS pt LANGUAGE java AS $$ return s; $$;
CREATE AGGREGATE total(int) SFUNC plus STYPE int FINALFUNC "Fin" INITCOND 0;
CREATE AGGREGATE points(list<int>) SFUNC token STYPE pt INITCOND {x: 1, y: -2};
`

// TestFunctionRules checks each of Cassandra's rules for CREATE and DROP
// FUNCTION and AGGREGATE, with its message; each refused statement
// changes nothing.
func TestFunctionRules(t *testing.T) {
	base, _ := schemakit.Exec(t, schema.Schema{}, functionBase)
	const fn = " CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''"
	tests := []struct {
		name, cql string
		code      error  // nil: applies
		msg       string // the whole error, or the signature changed
	}{
		// CREATE FUNCTION.
		{"create", "CREATE FUNCTION ks.f(a int, b frozen<tuple<int, text>>)" + fn, nil, "f(int,tuple<int, text>)"},
		{"create from USE", "USE ks; CREATE FUNCTION f()" + fn, nil, "f()"},
		{"create overload", "CREATE FUNCTION ks.over(a bigint)" + fn, nil, "over(bigint)"},
		{"missing keyspace", "CREATE FUNCTION nope.f(a int)" + fn, schema.ErrNotFound, "CREATE FUNCTION nope.f: Keyspace 'nope' doesn't exist"},
		{"no keyspace", "CREATE FUNCTION f(a int)" + fn, schema.ErrInvalid, "CREATE FUNCTION f: no keyspace specified and no default keyspace"},
		{"system keyspace", "CREATE FUNCTION system.f(a int)" + fn, schema.ErrInvalid, "CREATE FUNCTION system.f: System keyspace 'system' is not user-modifiable"},
		{"system_ keyspace", "DROP FUNCTION system_schema.f", schema.ErrInvalid, "DROP FUNCTION system_schema.f: System keyspace 'system_schema' is not user-modifiable"},
		{"or replace and if not exists", "CREATE OR REPLACE FUNCTION IF NOT EXISTS ks.f(a int)" + fn, schema.ErrInvalid,
			"CREATE FUNCTION ks.f: Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives"},
		{"duplicate argument names", "CREATE FUNCTION ks.f(a int, a text)" + fn, schema.ErrInvalid,
			"CREATE FUNCTION ks.f: Duplicate argument names for given function f with argument names a, a"},
		{"frozen argument", "CREATE FUNCTION ks.f(a frozen<list<int>>)" + fn, schema.ErrInvalid,
			"CREATE FUNCTION ks.f: Argument 'frozen<list<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<list<int>>'"},
		{"frozen user type argument", "CREATE FUNCTION ks.f(a frozen<pt>)" + fn, schema.ErrInvalid,
			"CREATE FUNCTION ks.f: Argument 'frozen<pt>' cannot be frozen; remove frozen<> modifier from 'frozen<pt>'"},
		{"frozen return type", "CREATE FUNCTION ks.f(a int) CALLED ON NULL INPUT RETURNS frozen<set<int>> LANGUAGE java AS ''", schema.ErrInvalid,
			"CREATE FUNCTION ks.f: Return type 'frozen<set<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<set<int>>'"},
		{"unknown type", "CREATE FUNCTION ks.f(a nope)" + fn, schema.ErrInvalid, "CREATE FUNCTION ks.f: argument nope: unknown type ks.nope"},
		{"javascript", "CREATE FUNCTION ks.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS ''", schema.ErrInvalid,
			`CREATE FUNCTION ks.f: language "javascript": Currently only Java UDFs are available in Cassandra. For more information - CASSANDRA-18252 and CASSANDRA-17281`},
		{"exists", "CREATE FUNCTION ks.over(b int)" + fn, schema.ErrAlreadyExists, "CREATE FUNCTION ks.over(int): Function 'over' already exists"},
		{"if not exists", "CREATE FUNCTION IF NOT EXISTS ks.over(b int)" + fn, nil, ""},
		{"replace", "CREATE OR REPLACE FUNCTION ks.over(b int)" + fn, nil, "over(int)"},
		{"replace other return type", "CREATE OR REPLACE FUNCTION ks.over(b int) CALLED ON NULL INPUT RETURNS bigint LANGUAGE java AS ''", schema.ErrInvalid,
			"CREATE FUNCTION ks.over(int): Cannot replace function 'over', the new return type bigint is not compatible with the return type int of existing function"},
		{"replace other null input", "CREATE OR REPLACE FUNCTION ks.over(b int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS ''", schema.ErrInvalid,
			"CREATE FUNCTION ks.over(int): Function 'over' must have RETURNS NULL ON NULL INPUT directive"},
		{"function replaces aggregate", "CREATE OR REPLACE FUNCTION ks.total(a int)" + fn, schema.ErrInvalid,
			"CREATE FUNCTION ks.total(int): Function 'total' cannot replace an aggregate"},
		{"control character name", "CREATE FUNCTION ks.\"a\tb\"(a int)" + fn, schema.ErrInvalid, `CREATE FUNCTION ks."a` + "\t" + `b": function name "a\tb" contains a control character (U+0009)`},

		// CREATE AGGREGATE.
		{"aggregate", "CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int INITCOND 5", nil, "agg(int)"},
		{"aggregate replace", "CREATE OR REPLACE AGGREGATE ks.total(int) SFUNC plus STYPE int FINALFUNC \"Fin\" INITCOND 1", nil, "total(int)"},
		{"aggregate or replace and if not exists", "CREATE OR REPLACE AGGREGATE IF NOT EXISTS ks.agg(int) SFUNC plus STYPE int", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg: Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives"},
		{"aggregate missing keyspace", "CREATE AGGREGATE nope.agg(int) SFUNC plus STYPE int", schema.ErrNotFound, "CREATE AGGREGATE nope.agg: Keyspace 'nope' doesn't exist"},
		{"aggregate frozen state", "CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE frozen<list<int>>", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg: State type 'frozen<list<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<list<int>>'"},
		{"aggregate frozen argument", "CREATE AGGREGATE ks.agg(frozen<list<int>>) SFUNC token STYPE pt", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg: Argument 'frozen<list<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<list<int>>'"},
		{"state function missing", "CREATE AGGREGATE ks.agg(int) SFUNC nope STYPE int", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(int): State function ks.nope(int, int) doesn't exist"},
		{"state function of other types", "CREATE AGGREGATE ks.agg(text) SFUNC plus STYPE int INITCOND 0", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(text): State function ks.plus(int, text) doesn't exist"},
		{"state function is an aggregate", "CREATE AGGREGATE ks.agg() SFUNC total STYPE int INITCOND 0", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(): State function ks.total(int) isn't a scalar function"},
		{"state function returns another type", "CREATE FUNCTION ks.g(s int, a int) CALLED ON NULL INPUT RETURNS text LANGUAGE java AS ''; CREATE AGGREGATE ks.agg(int) SFUNC g STYPE int", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(int): State function ks.g(int, int) return type must be the same as the first argument type - check STYPE, argument and return types"},
		{"final function missing", "CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int FINALFUNC nope", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(int): Final function ks.nope(int) doesn't exist"},
		{"final function is an aggregate", "CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int FINALFUNC total", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(int): Final function ks.total(int) isn't a scalar function"},
		{"initcond of another type", "CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int INITCOND 'zero'", schema.ErrInvalid,
			`CREATE AGGREGATE ks.agg(int): Invalid value for INITCOND of type int: invalid value "'zero'" for type int: expected an integer, found a string`},
		{"initcond out of range", "CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int INITCOND 3000000000", schema.ErrInvalid,
			`CREATE AGGREGATE ks.agg(int): Invalid value for INITCOND of type int: invalid value "3000000000" for type int: integer 3000000000 is out of the range of int`},
		{"initcond unknown field", "CREATE AGGREGATE ks.agg(list<int>) SFUNC token STYPE pt INITCOND {z: 1}", schema.ErrInvalid,
			`CREATE AGGREGATE ks.agg(list<int>): Invalid value for INITCOND of type pt: invalid value "{z: 1}" for type pt: unknown field z in type pt`},
		{"initcond null in a collection", "CREATE FUNCTION ks.g(s list<int>, a int) CALLED ON NULL INPUT RETURNS list<int> LANGUAGE java AS ''; CREATE AGGREGATE ks.agg(int) SFUNC g STYPE list<int> INITCOND [1, null]", schema.ErrInvalid,
			`CREATE AGGREGATE ks.agg(int): Invalid value for INITCOND of type list<int>: invalid value "[1, null]" for type list<int>: null is not supported inside collections`},
		{"null input without initcond", "CREATE AGGREGATE ks.agg(list<int>) SFUNC token STYPE pt", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(list<int>): Cannot create aggregate 'agg' without INITCOND because state function ks.token does not accept 'null' arguments"},
		{"null input with initcond null", "CREATE AGGREGATE ks.agg(list<int>) SFUNC token STYPE pt INITCOND null", schema.ErrInvalid,
			"CREATE AGGREGATE ks.agg(list<int>): Cannot create aggregate 'agg' without INITCOND because state function ks.token does not accept 'null' arguments"},
		{"aggregate exists", "CREATE AGGREGATE ks.total(int) SFUNC plus STYPE int INITCOND 0", schema.ErrAlreadyExists, "CREATE AGGREGATE ks.total(int): Aggregate 'total' already exists"},
		{"aggregate if not exists", "CREATE AGGREGATE IF NOT EXISTS ks.total(int) SFUNC plus STYPE int INITCOND 0", nil, ""},
		{"aggregate replace other return type", "CREATE OR REPLACE AGGREGATE ks.total(int) SFUNC plus STYPE int INITCOND 0", schema.ErrInvalid,
			"CREATE AGGREGATE ks.total(int): Cannot replace aggregate 'total', the new return type int isn't compatible with the return type text of existing function"},
		{"aggregate replaces function", "CREATE OR REPLACE AGGREGATE ks.over(int) SFUNC plus STYPE int INITCOND 0", schema.ErrInvalid,
			"CREATE AGGREGATE ks.over(int): Aggregate 'over' cannot replace a function"},

		// DROP FUNCTION and DROP AGGREGATE.
		{"drop", "DROP FUNCTION ks.over(text)", nil, "over(text)"},
		{"drop by name", "DROP FUNCTION ks.points", schema.ErrNotFound, "DROP FUNCTION ks.points: Function 'ks.points' doesn't exist"},
		{"drop overloaded", "DROP FUNCTION ks.over", schema.ErrInvalid,
			"DROP FUNCTION ks.over: 'DROP FUNCTION over' matches multiple function definitions; specify the argument types by issuing a statement like 'DROP FUNCTION over (type, type, ...)'. You can use cqlsh 'DESCRIBE FUNCTION over' command to find all overloads"},
		{"drop missing", "DROP FUNCTION ks.nope", schema.ErrNotFound, "DROP FUNCTION ks.nope: Function 'ks.nope' doesn't exist"},
		{"drop missing overload", "DROP FUNCTION ks.over(bigint)", schema.ErrNotFound, "DROP FUNCTION ks.over: Function 'ks.over(bigint)' doesn't exist"},
		{"drop if exists", "DROP FUNCTION IF EXISTS ks.over(bigint)", nil, ""},
		{"drop missing keyspace", "DROP FUNCTION nope.f", schema.ErrNotFound, "DROP FUNCTION nope.f: Function 'nope.f' doesn't exist"},
		{"drop missing keyspace if exists", "DROP FUNCTION IF EXISTS nope.f", nil, ""},
		{"drop used", "DROP FUNCTION ks.plus", schema.ErrInvalid, "DROP FUNCTION ks.plus(int,int): Function 'ks.plus(int,int)' is still referenced by aggregates ks.total(int)"},
		{"drop used final", `DROP FUNCTION ks."Fin"(int)`, schema.ErrInvalid, "DROP FUNCTION ks.\"Fin\"(int): Function 'ks.Fin(int)' is still referenced by aggregates ks.total(int)"},
		{"drop an aggregate as a function", "DROP FUNCTION ks.total(int)", schema.ErrNotFound, "DROP FUNCTION ks.total: Function 'ks.total(int)' doesn't exist"},
		{"drop aggregate", "DROP AGGREGATE ks.total", nil, "total(int)"},
		{"drop aggregate with types", "DROP AGGREGATE ks.points(list<int>)", nil, "points(list<int>)"},
		{"drop aggregate frozen argument", "DROP AGGREGATE ks.points(frozen<list<int>>)", schema.ErrInvalid,
			"DROP AGGREGATE ks.points: Argument 'frozen<list<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<list<int>>'"},
		{"drop aggregate missing", "DROP AGGREGATE ks.over(int)", schema.ErrNotFound, "DROP AGGREGATE ks.over: Aggregate 'ks.over(int)' doesn't exist"},
		{"drop aggregate if exists", "DROP AGGREGATE IF EXISTS ks.nope", nil, ""},
		{"drop type used by a function", "DROP TYPE ks.pt", schema.ErrInvalid, "DROP TYPE ks.pt: type is still used by aggregate points(list<int>), function token(pt,list<int>)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, diff, res, err := schemakit.ApplyLast(t, base, tt.cql, schemakit.EpochEach(100), schema.Env{Epoch: 200})
			switch {
			case tt.code == nil && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.code != nil && !errors.Is(err, tt.code):
				t.Fatalf("error %v, want code %v", err, tt.code)
			case tt.code != nil:
				if err.Error() != tt.msg {
					t.Fatalf("error\n got %q\nwant %q", err, tt.msg)
				}
				if s.Digest() != base.Digest() && !strings.Contains(tt.cql, ";") {
					t.Fatal("a refused statement changed the schema")
				}
				return
			}
			if res.Applied != (tt.msg != "") || res.Name != tt.msg && tt.msg != "" {
				t.Fatalf("result %+v, want applied %v to %q", res, tt.msg != "", tt.msg)
			}
			if tt.msg == "" {
				if !diff.Empty() || s.Digest() != base.Digest() {
					t.Fatal("a no-op changed the schema")
				}
				return
			}
			if len(diff.Changes) != 1 || diff.Changes[0].Name != tt.msg {
				t.Fatalf("changes %+v", diff.Changes)
			}
			k, _ := s.Keyspace("ks")
			f, ok := k.Function(tt.msg)
			switch diff.Changes[0].Op {
			case schema.OpPutFunction:
				if !ok || diff.Changes[0].FunctionValue != f {
					t.Fatalf("put %s: in schema %v, value %v", tt.msg, ok, diff.Changes[0].FunctionValue)
				}
			case schema.OpDropFunction:
				if ok {
					t.Fatalf("dropped %s is still there", tt.msg)
				}
			default:
				t.Fatalf("op %v", diff.Changes[0].Op)
			}
			if got := schema.ComputeDigest(s); got != s.Digest() {
				t.Fatal("incremental digest differs from the computed one")
			}
			if got := schema.ComputeEncodedSize(s); got != s.EncodedSize() {
				t.Fatalf("encoded size %d, computed %d", s.EncodedSize(), got)
			}
		})
	}
}

// TestFunctionInitCondCanonical: INITCOND is kept in canonical text,
// whatever the spelling.
func TestFunctionInitCondCanonical(t *testing.T) {
	base, _ := schemakit.Exec(t, schema.Schema{}, functionBase+`
CREATE FUNCTION m(s map<text, frozen<list<int>>>, a int) CALLED ON NULL INPUT RETURNS map<text, frozen<list<int>>> LANGUAGE java AS '';
CREATE FUNCTION tu(s tuple<int, text, boolean>, a int) CALLED ON NULL INPUT RETURNS tuple<int, text, boolean> LANGUAGE java AS '';
CREATE FUNCTION b(s blob, a int) CALLED ON NULL INPUT RETURNS blob LANGUAGE java AS '';
CREATE FUNCTION d(s double, a int) CALLED ON NULL INPUT RETURNS double LANGUAGE java AS '';
CREATE FUNCTION st(s set<uuid>, a int) CALLED ON NULL INPUT RETURNS set<uuid> LANGUAGE java AS '';`)
	for _, tt := range []struct{ cql, want string }{
		{"SFUNC plus STYPE int INITCOND 007", "7"},
		{"SFUNC m STYPE map<text, frozen<list<int>>> INITCOND {'a':[1,2],$$b$$:[]}", "{'a': [1, 2], 'b': []}"},
		{"SFUNC m STYPE map<text, frozen<list<int>>> INITCOND {}", "{}"},
		{"SFUNC tu STYPE tuple<int, text, boolean> INITCOND (1, 'it''s', TRUE)", "(1, 'it''s', true)"},
		{"SFUNC tu STYPE tuple<int, text, boolean> INITCOND (1, null)", "(1, null)"},
		{"SFUNC b STYPE blob INITCOND 0xCAFE", "0xcafe"},
		{"SFUNC d STYPE double INITCOND -1.5E3", "-1.5e3"},
		{"SFUNC st STYPE set<uuid> INITCOND {5A1C395E-B41F-11E5-9F22-BA0BE0483C18}", "{5a1c395e-b41f-11e5-9f22-ba0be0483c18}"},
	} {
		s, _, res, err := schemakit.ApplyLast(t, base, "CREATE AGGREGATE ks.agg(int) "+tt.cql, schemakit.EpochEach(100), schema.Env{Epoch: 200})
		if err != nil {
			t.Fatalf("%s: %v", tt.cql, err)
		}
		k, _ := s.Keyspace("ks")
		if f, _ := k.Function(res.Name); f.InitCond != tt.want {
			t.Errorf("%s: INITCOND %q, want %q", tt.cql, f.InitCond, tt.want)
		}
	}
}

// TestFunctionDescribeRoundTrip: DESCRIBE prints the keyspace, its types,
// its functions, its aggregates, then its tables (Cassandra's order), in
// Cassandra's layout, and the text parsed and applied to an empty schema
// gives a schema that describes alike and has the same digest.
func TestFunctionDescribeRoundTrip(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, functionBase+`
CREATE TABLE t (id int PRIMARY KEY, p frozen<pt>);
CREATE FUNCTION dollars(a text) CALLED ON NULL INPUT RETURNS text LANGUAGE java AS 'return "$$" + a + "$";';`)
	text := describe.Schema(s)
	for _, want := range []string{
		"CREATE FUNCTION ks.plus(s int, a int)\n    CALLED ON NULL INPUT\n    RETURNS int\n    LANGUAGE java\n    AS $$return s + a;$$;\n",
		"CREATE FUNCTION ks.\"token\"(s pt, l list<int>)\n    RETURNS NULL ON NULL INPUT\n    RETURNS pt\n    LANGUAGE java\n    AS $$ return s; $$;\n",
		"CREATE FUNCTION ks.dollars(a text)\n    CALLED ON NULL INPUT\n    RETURNS text\n    LANGUAGE java\n    AS 'return \"$$\" + a + \"$\";';\n",
		"CREATE AGGREGATE ks.total(int)\n    SFUNC plus\n    STYPE int\n    FINALFUNC \"Fin\"\n    INITCOND 0;\n",
		"CREATE AGGREGATE ks.points(list<int>)\n    SFUNC \"token\"\n    STYPE pt\n    INITCOND {x: 1, y: -2};\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("DESCRIBE lacks\n%s\nin\n%s", want, text)
		}
	}
	typeAt, funcAt, aggAt, tableAt := strings.Index(text, "CREATE TYPE"), strings.Index(text, "CREATE FUNCTION"), strings.Index(text, "CREATE AGGREGATE"), strings.Index(text, "CREATE TABLE")
	if !(typeAt < funcAt && funcAt < aggAt && aggAt < tableAt) {
		t.Errorf("order: type %d, function %d, aggregate %d, table %d", typeAt, funcAt, aggAt, tableAt)
	}
	again, _ := schemakit.Exec(t, schema.Schema{}, text)
	if got := describe.Schema(again); got != text {
		t.Fatalf("round trip:\n%s\nwant:\n%s", got, text)
	}
	if again.Digest() != s.Digest() {
		t.Fatal("round trip changes the digest")
	}
	k, _ := s.Keyspace("ks")
	if got := describe.FunctionsNamed(k, "over"); strings.Count(got, "CREATE FUNCTION ks.over(") != 2 {
		t.Errorf("DescribeFunctionsNamed(over):\n%s", got)
	}
	if got := describe.FunctionsNamed(k, "nope"); got != "" {
		t.Errorf("DescribeFunctionsNamed(nope) = %q", got)
	}
}

// TestFunctionEncoding: every function and aggregate round-trips through
// AppendFunction and DecodeFunction, and corrupt or invalid records are
// refused with ErrInvalid, without a panic.
func TestFunctionEncoding(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, functionBase)
	k, _ := s.Keyspace("ks")
	var one []byte
	for _, f := range k.Functions() {
		b := schema.AppendFunction(nil, f)
		got, err := schema.DecodeFunction(b)
		if err != nil {
			t.Fatalf("%s: %v", f.Signature(), err)
		}
		if d := cmp.Diff(f, got); d != "" {
			t.Fatalf("%s (-want +got):\n%s", f.Signature(), d)
		}
		if !bytes.Equal(schema.AppendFunction(nil, got), b) {
			t.Fatalf("%s: encoding is not canonical", f.Signature())
		}
		if f.Name == "total" {
			one = b
		}
	}
	for i := range one {
		if _, err := schema.DecodeFunction(one[:i]); !errors.Is(err, schema.ErrInvalid) {
			t.Fatalf("prefix of %d bytes: %v", i, err)
		}
	}
	if _, err := schema.DecodeFunction(append(append([]byte(nil), one...), 0)); !errors.Is(err, schema.ErrInvalid) {
		t.Fatalf("trailing byte: %v", err)
	}
	bad := append([]byte(nil), one...)
	bad[2] = 9 // the kind
	if _, err := schema.DecodeFunction(bad); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "unknown function kind 9") {
		t.Fatalf("bad kind: %v", err)
	}
	for _, f := range []*schema.Function{
		{Keyspace: "ks", Name: "f", Kind: schema.ScalarFunction, ArgNames: []string{"a", "a"}, ArgTypes: []schema.Type{schema.TypeInt, schema.TypeInt}, ReturnType: schema.TypeInt, Language: "java"},
		{Keyspace: "ks", Name: "f", Kind: schema.ScalarFunction, ArgNames: []string{"a"}, ArgTypes: []schema.Type{schema.FrozenType{Inner: schema.ListType{Elem: schema.TypeInt}}}, ReturnType: schema.TypeInt, Language: "java"},
		{Keyspace: "ks", Name: "f", Kind: schema.ScalarFunction, ReturnType: schema.TypeInt, Language: "Java"},
		{Keyspace: "ks", Name: "f", Kind: schema.AggregateFunction, ReturnType: schema.TypeInt, StateType: schema.TypeInt, StateFunc: "s", InitCond: "'x'"},
		{Keyspace: "ks", Name: "f", Kind: schema.AggregateFunction, ReturnType: schema.TypeInt, StateType: schema.TypeInt},
		{Keyspace: "ks", Name: "", Kind: schema.ScalarFunction, ReturnType: schema.TypeInt, Language: "java"},
	} {
		if _, err := schema.DecodeFunction(schema.AppendFunction(nil, f)); !errors.Is(err, schema.ErrInvalid) {
			t.Errorf("invalid %+v decodes: %v", f, err)
		}
		if err := schema.NewBuilder(s).PutFunction(f); !errors.Is(err, schema.ErrInvalid) {
			t.Errorf("invalid %+v is put: %v", f, err)
		}
	}
}

// TestKeyspaceObjectsWithFunctions: a keyspace with functions round-trips
// through AppendKeyspaceObjects; its encoding is that of the keyspace
// without them followed by the functions section, so a keyspace without
// functions encodes (and decodes) as before they existed; a function
// whose state function is missing is refused.
func TestKeyspaceObjectsWithFunctions(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, functionBase)
	k, _ := s.Keyspace("ks")
	b := schema.AppendKeyspaceObjects(nil, k)
	got, err := schema.DecodeKeyspaceObjects(b)
	if err != nil {
		t.Fatal(err)
	}
	if schema.KeyspaceState(got) != schema.KeyspaceState(k) || describe.Keyspace(got) != describe.Keyspace(k) {
		t.Fatalf("round trip:\n%s\nwant:\n%s", schema.KeyspaceState(got), schema.KeyspaceState(k))
	}
	bare, _ := schemakit.Exec(t, schema.Schema{}, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE ks.pt (x int, y int);`)
	bk, _ := bare.Keyspace("ks")
	old := schema.AppendKeyspaceObjects(nil, bk)
	if !bytes.HasPrefix(b, old) {
		t.Fatal("the encoding with functions does not extend the one without")
	}
	dropped := s
	for _, stmt := range []string{"DROP AGGREGATE ks.total", "DROP AGGREGATE ks.points", "DROP FUNCTION ks.plus", "DROP FUNCTION ks.over(int)", "DROP FUNCTION ks.over(text)", `DROP FUNCTION ks."Fin"`, "DROP FUNCTION ks.token"} {
		dropped, _ = schemakit.Exec(t, dropped, stmt)
	}
	dk, _ := dropped.Keyspace("ks")
	if !bytes.Equal(schema.AppendKeyspaceObjects(nil, dk), old) {
		t.Fatal("a keyspace whose functions were dropped encodes unlike one that never had any")
	}
	if dropped.Digest() != bare.Digest() || schema.KeyspaceState(dk) != schema.KeyspaceState(bk) {
		t.Fatal("a keyspace whose functions were dropped differs from one that never had any")
	}
	// Loaded alone (no state function), an aggregate is refused.
	only, _ := schemakit.Exec(t, schema.Schema{}, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};`)
	agg, _ := k.Function("total(int)")
	ob := schema.NewBuilder(only)
	if err := ob.PutFunction(agg); err != nil {
		t.Fatal(err)
	}
	only = ob.Schema()
	ok, _ := only.Keyspace("ks")
	if _, err := schema.DecodeKeyspaceObjects(schema.AppendKeyspaceObjects(nil, ok)); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "function ks.plus(int,int) it uses does not exist") {
		t.Fatalf("aggregate without its state function: %v", err)
	}
}

// TestFunctionUndo: each function change, applied then undone with its
// prior (through its encoding, as the history keeps it), restores the
// schema exactly, the users index included; undoing a creation that an
// aggregate now uses is refused.
func TestFunctionUndo(t *testing.T) {
	base, _ := schemakit.Exec(t, schema.Schema{}, functionBase)
	for _, stmt := range []string{
		"CREATE FUNCTION ks.f(a pt) CALLED ON NULL INPUT RETURNS pt LANGUAGE java AS ''",
		"CREATE OR REPLACE FUNCTION ks.plus(s int, b int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return 0;'",
		"CREATE AGGREGATE ks.agg(int) SFUNC plus STYPE int",
		"CREATE OR REPLACE AGGREGATE ks.points(list<int>) SFUNC token STYPE pt INITCOND {x: 0}",
		"DROP AGGREGATE ks.total",
		"DROP FUNCTION ks.over(int)",
		"DROP KEYSPACE ks",
	} {
		parsed, err := cql.Parse(stmt)
		if err != nil {
			t.Fatal(err)
		}
		after, diff, _, err := schema.Apply(base, parsed[0].Statement, schema.Env{Epoch: 50})
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		s := after
		for i := len(diff.Changes) - 1; i >= 0; i-- {
			c := diff.Changes[i]
			prior, err := schema.DecodePrior(c.Op, schema.AppendPrior(nil, c.Op, schema.Prior(base, c)))
			if err != nil {
				t.Fatal(err)
			}
			if s, err = schema.Undo(s, c, prior); err != nil {
				t.Fatalf("undo %s: %v", stmt, err)
			}
		}
		if schema.InternalState(s) != schema.InternalState(base) {
			t.Fatalf("undo %s:\n%s\nwant:\n%s", stmt, schema.InternalState(s), schema.InternalState(base))
		}
	}
	// Undoing CREATE FUNCTION while an aggregate uses it is refused.
	withF, diff := schemakit.Exec(t, base, "CREATE FUNCTION ks.g(s int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''")
	used, _ := schemakit.Exec(t, withF, "CREATE AGGREGATE ks.a() SFUNC g STYPE int")
	if _, err := schema.Undo(used, diff.Changes[0], nil); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "function is still used by aggregate a()") {
		t.Fatalf("undo of a used function: %v", err)
	}
	// A prior of another object is refused.
	k, _ := base.Keyspace("ks")
	other, _ := k.Function("plus(int,int)")
	if _, err := schema.Undo(withF, diff.Changes[0], other); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "prior is function ks.plus(int,int)") {
		t.Fatalf("undo with another prior: %v", err)
	}
	if p := schema.Prior(base, schema.Change{Op: schema.OpDropFunction, Keyspace: "ks", Name: "nope()"}); p != nil {
		t.Fatalf("Prior of a missing function = %#v", p)
	}
}

// TestFunctionOpNames: the new ops have names.
func TestFunctionOpNames(t *testing.T) {
	if schema.OpPutFunction.String() != "PutFunction" || schema.OpDropFunction.String() != "DropFunction" {
		t.Fatal(schema.OpPutFunction, schema.OpDropFunction)
	}
}
