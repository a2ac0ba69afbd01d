package cql

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

func TestLexer(t *testing.T) {
	tests := []struct {
		in   string
		want []string // kind:val
	}{
		{`CREATE Foo "Bar""Baz" 'it''s' $$a'b$$`, []string{"ident:create", "ident:foo", `quoted:Bar"Baz`, "string:it's", "string:a'b"}},
		{`1 -2 3.5 1e5 -1.5E-3 0xCAFE`, []string{"int:1", "int:-2", "float:3.5", "float:1e5", "float:-1.5E-3", "blob:0xcafe"}},
		{`5A1C395E-B41F-11E5-9F22-BA0BE0483C18 deadbeef`, []string{"uuid:5a1c395e-b41f-11e5-9f22-ba0be0483c18", "ident:deadbeef"}},
		{"a -- c\n/* x\n*/ b // d\nc", []string{"ident:a", "ident:b", "ident:c"}},
		{`(),;.={}:<>[]+*`, []string{"(", ")", ",", ";", ".", "=", "{", "}", ":", "<", ">", "[", "]", "+", "*"}},
		{`map<text,frozen<list<int>>>`, []string{"ident:map", "<", "ident:text", ",", "ident:frozen", "<", "ident:list", "<", "ident:int", ">", ">", ">"}},
	}
	names := map[tokenKind]string{tokIdent: "ident", tokQuoted: "quoted", tokString: "string", tokInt: "int", tokFloat: "float", tokUUID: "uuid", tokBlob: "blob"}
	for _, tt := range tests {
		toks, err := lex(tt.in)
		if err != nil {
			t.Errorf("lex(%q): %v", tt.in, err)
			continue
		}
		var got []string
		for _, tok := range toks[:len(toks)-1] {
			if tok.kind == tokPunct {
				got = append(got, tok.val)
			} else {
				got = append(got, names[tok.kind]+":"+tok.val)
			}
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("lex(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestLexerPositions(t *testing.T) {
	toks, err := lex("a\n  \"bé\" c\n\td")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{1, 1}, {2, 3}, {2, 8}, {3, 2}}
	for i, w := range want {
		if toks[i].line != w[0] || toks[i].col != w[1] {
			t.Errorf("token %q at %d:%d, want %d:%d", toks[i].val, toks[i].line, toks[i].col, w[0], w[1])
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", ""},
		{"FROBNICATE t", `line 1:1: unexpected "FROBNICATE", expected a statement (CREATE, ALTER, DROP or USE)`},
		{"CREATE VIEW v", `line 1:8: unexpected "VIEW", expected KEYSPACE, TABLE, TYPE, INDEX, CUSTOM INDEX, TRIGGER, FUNCTION, AGGREGATE or MATERIALIZED VIEW`},
		{"CREATE TABLE t (id int PRIMRY KEY)", `line 1:24: unexpected "PRIMRY", expected STATIC, MASKED WITH, PRIMARY KEY, ',' or ')'`},
		{"CREATE TABLE t (id int, PRIMARY (id))", `line 1:33: unexpected "(", expected KEY`},
		{"CREATE TABLE t (id int, PRIMARY KEY (id), PRIMARY KEY (id))", `line 1:43: PRIMARY KEY clause given twice`},
		{"CREATE TABLE t (id map<int>)", `line 1:27: unexpected ">", expected ","`},
		{"CREATE TABLE t (id vector<float, x>)", `line 1:34: unexpected "x", expected a vector dimension`},
		{"CREATE TABLE t (id int) WITH comment = 'a' AND comment = 'b'", `line 1:48: property comment given twice`},
		{"CREATE TABLE t (id int) WITH a = 1", `line 1:30: unknown table property "a"`},
		{"CREATE TABLE t (id int) WITH ID = 1", `line 1:35: unexpected "1", expected a UUID`},
		{"CREATE TABLE t (id int) WITH comment = ", `line 1:40: unexpected end of input, expected a constant or a map`},
		{"CREATE TABLE t (id int) WITH CLUSTERING ORDER BY (c UP)", `line 1:53: unexpected "UP", expected ASC, DESC, ',' or ')'`},
		{"CREATE KEYSPACE k WITH replication = 'x'", `line 1:38: replication must be a map like {'class': 'SimpleStrategy', 'replication_factor': 1}`},
		{"CREATE KEYSPACE k WITH replication = {'class': 'S'} AND durable_writes = 3", `line 1:74: durable_writes must be true or false`},
		{"CREATE KEYSPACE IF EXISTS k", `line 1:20: unexpected "EXISTS", expected NOT`},
		{"DROP TABLE IF NOT EXISTS t", `line 1:15: unexpected "NOT", expected EXISTS`},
		{"DROP TABLE a.b.c", `line 1:15: unexpected ".", expected ';' or end of input`},
		{"DROP TABLE \"\"", `line 1:12: empty quoted identifier`},
		{"DROP TABLE 'x", `line 1:12: unterminated string`},
		{"DROP TABLE \"x", `line 1:12: unterminated quoted identifier`},
		{"DROP /* x", `line 1:6: unterminated comment`},
		{"DROP TABLE t ?", `line 1:14: unexpected character "?"`},
		{"DROP TABLE 12abc", `line 1:12: malformed number "12abc"`},
		{"  \n  DROP\n TABLE\n", `line 4:1: unexpected end of input, expected a table name`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if tt.want == "" {
			if err != nil {
				t.Errorf("Parse(%q): %v", tt.in, err)
			}
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", tt.in, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestParseStatements(t *testing.T) {
	in := `create keyspace IF NOT EXISTS Shop with replication = {'class': 'SimpleStrategy', 'replication_factor': 2} and DURABLE_WRITES = 'false';
  -- comment
  CREATE TABLE shop."Orders" (
    id uuid,
    at timestamp,
    "Note" text static,
    PRIMARY KEY ((id), at)
  ) WITH CLUSTERING ORDER BY (at desc) AND comment = $$x$$ AND caching = {'keys': 'ALL'};;
DROP TABLE IF EXISTS t; drop keyspace shop`
	got, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Parsed{
		{Statement: &schema.CreateKeyspace{Name: "shop", IfNotExists: true, Replication: schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "2"}}}, Line: 1, Column: 1,
			Text: `create keyspace IF NOT EXISTS Shop with replication = {'class': 'SimpleStrategy', 'replication_factor': 2} and DURABLE_WRITES = 'false'`},
		{Statement: &schema.CreateTable{Keyspace: "shop", Name: "Orders",
			Columns:         []schema.ColumnDef{{Name: "id", Type: schema.TypeUUID}, {Name: "at", Type: schema.TypeTimestamp}, {Name: "Note", Type: schema.TypeText, Static: true}},
			PartitionKey:    []string{"id"},
			Clustering:      []string{"at"},
			ClusteringOrder: []schema.ClusteringColumn{{Name: "at", Order: schema.Desc}},
			Options:         map[string]string{"comment": "'x'", "caching": "{'keys': 'ALL'}"},
		}, Line: 3, Column: 3, Text: in[strings.Index(in, "CREATE TABLE"):strings.Index(in, ";;")]},
		{Statement: &schema.DropTable{Name: "t", IfExists: true}, Line: 9, Column: 1, Text: "DROP TABLE IF EXISTS t"},
		{Statement: &schema.DropKeyspace{Name: "shop"}, Line: 9, Column: 25, Text: "drop keyspace shop"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
}

func TestParseTypes(t *testing.T) {
	for _, typ := range []string{
		"int", "text", "list<int>", "set<frozen<list<text>>>", "map<text, frozen<map<int, blob>>>",
		"frozen<list<int>>", "tuple<int, text, frozen<set<uuid>>>", "vector<float, 1536>",
	} {
		ps, err := Parse("CREATE TABLE t (c " + typ + ")")
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		got := ps[0].Statement.(*schema.CreateTable).Columns[0].Type.String()
		if got != typ {
			t.Errorf("type %q parsed as %q", typ, got)
		}
	}
	ps, _ := Parse("CREATE TABLE t (c VARCHAR, d Map < Text , Int >)")
	cols := ps[0].Statement.(*schema.CreateTable).Columns
	if cols[0].Type != schema.TypeText || cols[1].Type.String() != "map<text, int>" {
		t.Errorf("got %v %v", cols[0].Type, cols[1].Type)
	}
}

// fuzzBase is the schema fuzzed statements apply to, so that table, type
// and index statements can succeed.
const fuzzBase = `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE ks.addr (street text, zip int);
CREATE TYPE ks.other (a frozen<addr>, tags set<text>);
CREATE TABLE ks.t (a int, b text, v text, m map<text, int>, l list<int>, f frozen<set<int>>, PRIMARY KEY (a, b));`

func applyAll(t *testing.T, s schema.Schema, parsed []Parsed, epoch uint64) schema.Schema {
	for i, p := range parsed {
		if ns, _, _, err := schema.Apply(s, p.Statement, schema.Env{DefaultKeyspace: "ks", Epoch: epoch + uint64(i)}); err == nil {
			s = ns
		}
	}
	return s
}

// FuzzParse checks that no input makes Parse panic or return a malformed
// error, and that whatever applies describes to CQL that re-parses to the
// same schema, with a digest equal to one computed from scratch. The seed
// corpus in testdata/fuzz/FuzzParse covers every statement form.
func FuzzParse(f *testing.F) {
	f.Add("CREATE TABLE ks.x (id int PRIMARY KEY, v text)")
	// Statements refused by name (refused.go).
	for _, s := range []string{"INSERT INTO ks.t (id) VALUES (1)", "BEGIN BATCH UPDATE ks.t SET v = 1 WHERE id = 1 APPLY BATCH",
		"GRANT ALL ON KEYSPACE ks TO r", "CREATE ROLE r", "ADD IDENTITY 'x' TO ROLE r", "SOURCE 'f.cql'", "DESC KEYSPACES",
		"CREATE TABLE ks.y LIKE ks.x WITH comment = 'copy'", "ALTER TABLE ks.x ADD IF NOT EXISTS (v text, w int,)",
		"ALTER TABLE ks.x DROP IF EXISTS (v, gone)", "ALTER TYPE ks.u RENAME IF EXISTS a TO b", "CREATE OR REPLACE FUNCTION ks.f() RETURNS int",
		// Column masks and LIKE ... WITH INDEXES.
		"CREATE TABLE ks.m (id int MASKED WITH mask_replace(-1) PRIMARY KEY, s text, v text MASKED WITH mask_inner(1, null, '#'), b blob MASKED WITH system.mask_hash('SHA-512'))",
		"CREATE TABLE ks.m (id int, c text MASKED WITH DEFAULT, s int STATIC MASKED WITH mask_null(), l list<int> MASKED WITH mask_replace([1, 2]), PRIMARY KEY (id, c))",
		"ALTER TABLE ks.t ALTER v MASKED WITH mask_outer(2, 1); ALTER TABLE ks.t ALTER a MASKED WITH DEFAULT", "ALTER TABLE ks.t ALTER IF EXISTS v DROP MASKED",
		"ALTER TABLE ks.t ADD (w text MASKED WITH DEFAULT, z blob MASKED WITH mask_hash())",
		"CREATE INDEX ON ks.t (v); CREATE INDEX ON ks.t (keys(m)); CREATE TABLE ks.y LIKE ks.t WITH INDEXES AND comment = 'copy'",
		// Constants and bare keywords as property values.
		"CREATE TABLE ks.c (id int PRIMARY KEY, d duration MASKED WITH mask_replace(-1h30m), f double MASKED WITH mask_replace(- Infinity), g float MASKED WITH mask_replace(1.)) WITH comment = static",
		"ALTER TABLE ks.t WITH comment = P1DT2H AND crc_check_chance = NaN", "CREATE TABLE ks.p (P1Dx int PRIMARY KEY, p int) WITH memtable = default",
		// Materialized views: every relation form, SELECT * and a list, the
		// base's changes that reach its views, and the refusals.
		"CREATE MATERIALIZED VIEW ks.v AS SELECT * FROM ks.t WHERE v IS NOT NULL AND a IS NOT NULL AND b IS NOT NULL PRIMARY KEY (v, a, b) WITH comment = 'x'",
		"CREATE MATERIALIZED VIEW ks.w AS SELECT a, b, v FROM ks.t WHERE a IN (1, 2) AND (b) >= ('a') AND b <= 'z' AND v IS NOT NULL PRIMARY KEY ((v, a), b) WITH CLUSTERING ORDER BY (b DESC); ALTER TABLE ks.t RENAME a TO aa; ALTER TABLE ks.t ADD z int",
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a, b FROM ks.t WHERE a IS NOT NULL AND b BETWEEN 'a' AND 'b' AND f CONTAINS 1 AND m['k'] = 2 PRIMARY KEY (b, a); ALTER MATERIALIZED VIEW ks.v WITH default_time_to_live = 0 AND caching = {'keys': 'NONE'}",
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a FROM ks.t WHERE token(a) > 1 PRIMARY KEY (a); DROP MATERIALIZED VIEW IF EXISTS ks.v; DROP TABLE ks.t",
		// The terms of a view's WHERE clause: arithmetic, negation,
		// function calls, type hints, durations, bind markers.
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a, b FROM ks.t WHERE a IN (1 + 2 * 3 - 10 % 4 / 2, - 1, -abs(-2), (int) 3) AND b IN ('x' + 'y', (text) 'z') PRIMARY KEY (a, b)",
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a, b FROM ks.t WHERE a = system.abs(-1) AND b = blobastext(textasblob('b')) PRIMARY KEY (a, b)",
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a, b FROM ks.t WHERE a = (frozen<list<int>>) [1, \"Abs\"(2)] AND b = P1DT2H + 1h30m PRIMARY KEY (a, b)",
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a, b FROM ks.t WHERE (a, b) > ((ks.addr) {zip: 1}, P1DT2H) AND a = ? AND b IN ? PRIMARY KEY (a, b)",
		"CREATE MATERIALIZED VIEW ks.v AS SELECT a FROM ks.t WHERE a = cast(1 AS int) AND a = - - 1h AND a = (int) PRIMARY KEY (a)"} {
		f.Add(s)
	}
	// Functions and aggregates, every clause.
	for _, s := range []string{
		"CREATE FUNCTION ks.f(a int, b addr) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS $$return a;$$",
		`CREATE OR REPLACE FUNCTION IF NOT EXISTS ks."F"(a tuple<int, text>) RETURNS NULL ON NULL INPUT RETURNS map<text, int> LANGUAGE JAVA AS 'it''s'`,
		"USE ks; CREATE FUNCTION token() CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''; DROP FUNCTION token()",
		"CREATE FUNCTION ks.s(s list<int>, a int) RETURNS NULL ON NULL INPUT RETURNS list<int> LANGUAGE java AS ''; CREATE AGGREGATE ks.agg(int) SFUNC s STYPE list<int> INITCOND [1, -2]",
		"CREATE FUNCTION ks.u(s addr, a int) CALLED ON NULL INPUT RETURNS addr LANGUAGE java AS ''; CREATE FUNCTION ks.g(s addr) CALLED ON NULL INPUT RETURNS text LANGUAGE java AS ''; CREATE OR REPLACE AGGREGATE ks.ua(int) SFUNC u STYPE addr FINALFUNC g INITCOND {street: 'x', zip: 1}",
		"CREATE FUNCTION ks.m(s map<text, frozen<set<int>>>) CALLED ON NULL INPUT RETURNS map<text, frozen<set<int>>> LANGUAGE java AS ''; CREATE AGGREGATE IF NOT EXISTS ks.ma() SFUNC m STYPE map<text, frozen<set<int>>> INITCOND {'a': {1, 2}, 'b': {}}",
		"DROP FUNCTION IF EXISTS ks.f(int, frozen<list<int>>)", "DROP AGGREGATE ks.agg", "DROP AGGREGATE IF EXISTS ks.agg(int)", "DROP FUNCTION ks.f",
	} {
		f.Add(s)
	}
	base, err := Parse(fuzzBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parsed, err := Parse(text)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		for _, p := range parsed {
			if !strings.Contains(text, p.Text) {
				t.Fatalf("Text %q not in input", p.Text)
			}
		}
		s := applyAll(t, schema.Schema{}, base, 1)
		s = applyAll(t, s, parsed, 100)
		if schema.ComputeDigest(s) != s.Digest() {
			t.Fatalf("incremental digest differs from the computed one")
		}
		s2, desc := reapplyDescribe(t, s, 5000)
		if d2 := describe.Schema(s2); d2 != desc {
			t.Fatalf("DESCRIBE round trip differs:\n%s\n---\n%s", desc, d2)
		}
	})
}

// reapplyDescribe parses the DESCRIBE output of s and applies it, from
// epoch on, to an empty schema, failing t if it does not parse or apply;
// it returns that schema and the DESCRIBE text.
func reapplyDescribe(t testingT, s schema.Schema, epoch uint64) (schema.Schema, string) {
	t.Helper()
	desc := describe.Schema(s)
	again, err := Parse(desc)
	if err != nil {
		t.Fatalf("DESCRIBE output does not parse: %v\n%s", err, desc)
	}
	var s2 schema.Schema
	for i, p := range again {
		if s2, _, _, err = schema.Apply(s2, p.Statement, schema.Env{Epoch: epoch + uint64(i)}); err != nil {
			t.Fatalf("DESCRIBE output does not apply: %q: %v\n%s", p.Text, err, desc)
		}
	}
	return s2, desc
}

// testingT is what the round-trip helpers need of a test: *testing.T and
// *rapid.T both have it.
type testingT interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// anyColumnOrder compares tables' columns whatever their order: DESCRIBE
// lists them in Cassandra's order, not the model's, so a round trip
// keeps the columns but may reorder them.
var anyColumnOrder = cmpopts.SortSlices(func(a, b schema.Column) bool { return a.Name < b.Name })

// checkDigestFixed checks that the round trip of s2, itself the round
// trip of a schema, keeps its digest: the first round trip may reorder
// columns (see anyColumnOrder), which the digest sees, but not the second.
func checkDigestFixed(t testingT, s2 schema.Schema) {
	t.Helper()
	if s3, _ := reapplyDescribe(t, s2, 9000); s3.Digest() != s2.Digest() {
		t.Errorf("a second round trip changes the digest")
	}
}

func BenchmarkParse(b *testing.B) {
	const text = `CREATE TABLE shop.events (
    tenant text,
    day date,
    at timestamp,
    seq int,
    owner text STATIC,
    payload map<text, frozen<list<int>>>,
    PRIMARY KEY ((tenant, day), at, seq)
) WITH CLUSTERING ORDER BY (at DESC) AND comment = 'events' AND gc_grace_seconds = 3600;`
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseMinimal(b *testing.B) {
	const text = `CREATE TABLE ks.t_1 (id int PRIMARY KEY, v text)`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}
