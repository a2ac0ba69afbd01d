package cql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// isNotNull is the relation "col IS NOT NULL".
func isNotNull(col string) schema.ViewRelation {
	return schema.ViewRelation{Columns: []string{col}, Op: schema.RelIsNot, Value: "NULL"}
}

// TestParseView checks the forms of the materialized view statements:
// IF [NOT] EXISTS, quoted and unqualified names (USE qualifies the view
// only: its base is in the view's keyspace), SELECT * and a column list,
// every relation of Parser.g's relation rule (comparisons, IN, NOT IN,
// CONTAINS [KEY], NOT CONTAINS [KEY], BETWEEN, LIKE, IS NOT NULL, map
// elements, tuples, relations in parentheses), terms in canonical text,
// composite keys, and the view properties (CLUSTERING ORDER BY, ID and
// table properties, several CLUSTERING ORDER BY extending the order).
func TestParseView(t *testing.T) {
	tests := []struct {
		in   string
		want []schema.Statement
	}{
		{"CREATE MATERIALIZED VIEW ks.v AS SELECT * FROM ks.t WHERE k IS NOT NULL PRIMARY KEY (k)",
			[]schema.Statement{&schema.CreateView{Keyspace: "ks", Name: "v", BaseKeyspace: "ks", Base: "t", AllColumns: true,
				Where: []schema.ViewRelation{isNotNull("k")}, PartitionKey: []string{"k"}}}},
		{`create materialized view if not exists "V" as select A, "B", a from T where a is not null and "B" IS NOT NULL primary key ((a, "B")) with comment = 'x'`,
			[]schema.Statement{&schema.CreateView{Name: "V", IfNotExists: true, Base: "t", Columns: []string{"a", "B", "a"},
				Where: []schema.ViewRelation{isNotNull("a"), isNotNull("B")}, PartitionKey: []string{"a", "B"}, Options: map[string]string{"comment": "'x'"}}}},
		{"CREATE MATERIALIZED VIEW v AS SELECT a FROM t PRIMARY KEY (a, b, c) WITH CLUSTERING ORDER BY (b DESC) AND ID = 5A1C395E-B41F-11E5-9F22-BA0BE0483C18 AND CLUSTERING ORDER BY (c ASC)",
			[]schema.Statement{&schema.CreateView{Name: "v", Base: "t", Columns: []string{"a"}, PartitionKey: []string{"a"}, Clustering: []string{"b", "c"},
				ClusteringOrder: []schema.ClusteringColumn{{Name: "b", Order: schema.Desc}, {Name: "c", Order: schema.Asc}}, ID: "5a1c395e-b41f-11e5-9f22-ba0be0483c18"}}},
		{`CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE a = 'it''s' AND b < -1 AND b<=2 AND c > 1.5e3 AND c>=0x0A AND d != true AND e IN (1, $$x$$) AND e NOT IN ()
			AND f CONTAINS 5A1C395E-B41F-11E5-9F22-BA0BE0483C18 AND f CONTAINS KEY null AND g NOT CONTAINS [1, [2]] AND g NOT CONTAINS KEY {1, 2} AND h BETWEEN {'a': 1} AND {}
			AND i LIKE 'a%' AND m['k'] = {x: 1, "Y": (1, 'b')} AND (a, b) = (1, 2) AND (a) IN ((1), (2)) AND (a, b) NOT IN () AND (a, b) BETWEEN (1, 2) AND (3, 4)
			AND ((a IS NOT NULL)) PRIMARY KEY (a)`,
			[]schema.Statement{&schema.CreateView{Name: "v", Base: "t", AllColumns: true, PartitionKey: []string{"a"}, Where: []schema.ViewRelation{
				{Columns: []string{"a"}, Op: "=", Value: "'it''s'"},
				{Columns: []string{"b"}, Op: "<", Value: "-1"},
				{Columns: []string{"b"}, Op: "<=", Value: "2"},
				{Columns: []string{"c"}, Op: ">", Value: "1.5e3"},
				{Columns: []string{"c"}, Op: ">=", Value: "0x0a"},
				{Columns: []string{"d"}, Op: "!=", Value: "true"},
				{Columns: []string{"e"}, Op: "IN", Value: "(1, 'x')"},
				{Columns: []string{"e"}, Op: "NOT IN", Value: "()"},
				{Columns: []string{"f"}, Op: "CONTAINS", Value: "5a1c395e-b41f-11e5-9f22-ba0be0483c18"},
				{Columns: []string{"f"}, Op: "CONTAINS KEY", Value: "null"},
				{Columns: []string{"g"}, Op: "NOT CONTAINS", Value: "[1, [2]]"},
				{Columns: []string{"g"}, Op: "NOT CONTAINS KEY", Value: "{1, 2}"},
				{Columns: []string{"h"}, Op: "BETWEEN", Value: "{'a': 1} AND {}"},
				{Columns: []string{"i"}, Op: "LIKE", Value: "'a%'"},
				{Columns: []string{"m"}, Key: "'k'", Op: "=", Value: `{x: 1, "Y": (1, 'b')}`},
				{Columns: []string{"a", "b"}, Tuple: true, Op: "=", Value: "(1, 2)"},
				{Columns: []string{"a"}, Tuple: true, Op: "IN", Value: "((1), (2))"},
				{Columns: []string{"a", "b"}, Tuple: true, Op: "NOT IN", Value: "()"},
				{Columns: []string{"a", "b"}, Tuple: true, Op: "BETWEEN", Value: "(1, 2) AND (3, 4)"},
				isNotNull("a"),
			}}}},
		{"USE ks; CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k); CREATE MATERIALIZED VIEW o.v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k)", []schema.Statement{
			&schema.Use{Keyspace: "ks"},
			&schema.CreateView{Keyspace: "ks", Name: "v", Base: "t", AllColumns: true, Where: []schema.ViewRelation{isNotNull("k")}, PartitionKey: []string{"k"}},
			&schema.CreateView{Keyspace: "o", Name: "v", Base: "t", AllColumns: true, Where: []schema.ViewRelation{isNotNull("k")}, PartitionKey: []string{"k"}},
		}},
		{`ALTER MATERIALIZED VIEW ks.v WITH comment = 'x' AND "gc_grace_seconds" = 10`,
			[]schema.Statement{&schema.AlterView{Keyspace: "ks", Name: "v", Options: map[string]string{"comment": "'x'", "gc_grace_seconds": "10"}}}},
		{"alter materialized view if exists V with comment = 'x'",
			[]schema.Statement{&schema.AlterView{Name: "v", IfExists: true, Options: map[string]string{"comment": "'x'"}}}},
		{"USE ks; DROP MATERIALIZED VIEW v; DROP MATERIALIZED VIEW IF EXISTS \"O\".\"V\"", []schema.Statement{
			&schema.Use{Keyspace: "ks"},
			&schema.DropView{Keyspace: "ks", Name: "v"},
			&schema.DropView{Keyspace: "O", Name: "V", IfExists: true},
		}},
		// Unreserved keywords name columns, as Cassandra's sident takes them.
		{"CREATE MATERIALIZED VIEW v AS SELECT as, key, like FROM t WHERE key IS NOT NULL AND like = 1 PRIMARY KEY (key)",
			[]schema.Statement{&schema.CreateView{Name: "v", Base: "t", Columns: []string{"as", "key", "like"}, PartitionKey: []string{"key"},
				Where: []schema.ViewRelation{isNotNull("key"), {Columns: []string{"like"}, Op: "=", Value: "1"}}}}},
	}
	for _, tt := range tests {
		parsed, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		var got []schema.Statement
		for _, p := range parsed {
			got = append(got, p.Statement)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

// TestViewSyntaxErrors checks the errors of malformed view statements,
// each at the token that is wrong, and the refusals Cassandra makes of
// the statement's text alone (aliases, expressions, token relations,
// custom index expressions, bind variables), in its words.
func TestViewSyntaxErrors(t *testing.T) {
	const head = "CREATE MATERIALIZED VIEW v AS SELECT "
	tests := []struct{ in, want string }{
		{"CREATE MATERIALIZED v", `line 1:8: unexpected "MATERIALIZED", expected KEYSPACE, TABLE, TYPE, INDEX, CUSTOM INDEX, TRIGGER, FUNCTION, AGGREGATE or MATERIALIZED VIEW`},
		{"CREATE MATERIALIZED VIEW v SELECT", `line 1:28: unexpected "SELECT", expected AS`},
		{"CREATE MATERIALIZED VIEW v AS * FROM t", `line 1:31: unexpected "*", expected SELECT`},
		{head + "FROM t", `line 1:38: unexpected "FROM", expected a column name or *`},
		{head + "a b FROM t", `line 1:40: unexpected "b", expected FROM`},
		{head + "a AS b FROM t PRIMARY KEY (a)", `line 1:38: Cannot use aliases when defining a materialized view (got a AS b)`},
		{head + "f(a) FROM t PRIMARY KEY (a)", `line 1:38: Can only select columns by name when defining a materialized view (got f(...)`},
		{head + "a.b FROM t PRIMARY KEY (a)", `line 1:38: Can only select columns by name when defining a materialized view (got a....)`},
		{head + "1 FROM t PRIMARY KEY (a)", `line 1:38: Can only select columns by name when defining a materialized view (got 1)`},
		{head + "* FROM t", `line 1:46: unexpected end of input, expected WHERE or PRIMARY KEY`},
		{head + "* FROM t WHERE a IS NOT NULL", `line 1:66: unexpected end of input, expected AND or PRIMARY KEY`},
		{head + "* FROM t WHERE a IS NULL PRIMARY KEY (a)", `line 1:58: unexpected "NULL", expected NOT`},
		{head + "* FROM t WHERE a < = 1 PRIMARY KEY (a)", `line 1:57: unexpected "=", expected a constant, a collection, a tuple, a user type literal, a function call or a type hint`},
		{head + "* FROM t WHERE a ! = 1 PRIMARY KEY (a)", `line 1:55: unexpected character "!"`},
		{head + "* FROM t WHERE a == 1 PRIMARY KEY (a)", `line 1:56: unexpected "=", expected a constant, a collection, a tuple, a user type literal, a function call or a type hint`},
		{head + "* FROM t WHERE a NOT LIKE 'x' PRIMARY KEY (a)", `line 1:59: unexpected "LIKE", expected IN or CONTAINS`},
		{head + "* FROM t WHERE a PRIMARY KEY (a)", `line 1:55: unexpected "PRIMARY", expected an operator (=, <, <=, >, >=, !=, IN, NOT IN, CONTAINS, BETWEEN, LIKE or IS NOT NULL)`},
		{head + "* FROM t WHERE token(a) > 1 PRIMARY KEY (a)", `line 1:53: Cannot use token relation when defining a materialized view`},
		{head + "* FROM t WHERE expr(i, 'x') PRIMARY KEY (a)", `line 1:53: WHERE clause for materialized view 'v' cannot contain custom index expressions`},
		{head + "* FROM t WHERE a = :x PRIMARY KEY (a)", `line 1:57: Bind variables are not allowed in CREATE MATERIALIZED VIEW statements`},
		{head + "* FROM t WHERE a IN :x PRIMARY KEY (a)", `line 1:58: Bind variables are not allowed in CREATE MATERIALIZED VIEW statements`},
		{head + "* FROM t WHERE a = ? PRIMARY KEY (a)", `line 1:57: Bind variables are not allowed in CREATE MATERIALIZED VIEW statements`},
		{head + "* FROM t WHERE a IN ? PRIMARY KEY (a)", `line 1:58: Bind variables are not allowed in CREATE MATERIALIZED VIEW statements`},
		{head + "* FROM t WHERE (a, b) = ? PRIMARY KEY (a)", `line 1:62: Bind variables are not allowed in CREATE MATERIALIZED VIEW statements`},
		{head + "* FROM t WHERE a = abs(?) PRIMARY KEY (a)", `line 1:61: Bind variables are not allowed in CREATE MATERIALIZED VIEW statements`},
		{head + "* FROM t WHERE a = cast(1 AS int) PRIMARY KEY (a)", `line 1:57: CAST(... AS type) in the WHERE clause of a materialized view is not supported; use a type hint, (type) term`},
		{head + "* FROM t WHERE a = 1 + PRIMARY KEY (a)", `line 1:61: unexpected "PRIMARY", expected a constant, a collection, a tuple, a user type literal, a function call or a type hint`},
		{head + "* FROM t WHERE a = abs(1 PRIMARY KEY (a)", `line 1:63: unexpected "PRIMARY", expected ',' or ')'`},
		{head + "* FROM t WHERE a = (int) PRIMARY KEY (a)", `line 1:63: unexpected "PRIMARY", expected a constant, a collection, a tuple, a user type literal, a function call or a type hint`},
		{head + "* FROM t WHERE a BETWEEN 1 PRIMARY KEY (a)", `line 1:65: unexpected "PRIMARY", expected AND`},
		{head + "* FROM t WHERE a IN 1 PRIMARY KEY (a)", `line 1:58: unexpected "1", expected "("`},
		{head + "* FROM t WHERE (a, b) IS NOT NULL PRIMARY KEY (a)", `line 1:60: unexpected "IS", expected =, <, <=, >, >=, !=, IN or BETWEEN`},
		{head + "* FROM t WHERE (a, b) = 1 PRIMARY KEY (a)", `line 1:62: unexpected "1", expected a tuple of values`},
		{head + "* FROM t WHERE m[1] CONTAINS 1 PRIMARY KEY (a)", `line 1:58: unexpected "CONTAINS", expected =, <, <=, >, >= or !=`},
		{head + "* FROM t WHERE a = {x: 1, 2} PRIMARY KEY (a)", `line 1:64: unexpected "2", expected a field name and ':'`},
		{head + "* FROM t WHERE a = {1: 1, 2} PRIMARY KEY (a)", `line 1:65: unexpected "}", expected ":"`},
		{head + "* FROM t WHERE a = () PRIMARY KEY (a)", `line 1:58: unexpected ")", expected a constant, a collection, a tuple, a user type literal, a function call or a type hint`},
		{head + "* FROM t WHERE a IS NOT NULL PRIMARY (a)", `line 1:75: unexpected "(", expected KEY`},
		{head + "* FROM t WHERE a IS NOT NULL PRIMARY KEY ()", `line 1:80: unexpected ")", expected a partition key column or '('`},
		{head + "* FROM t WHERE a IS NOT NULL PRIMARY KEY (a) WITH CLUSTERING ORDER BY (b)", `line 1:110: unexpected ")", expected ASC or DESC`},
		{head + "* FROM t WHERE a IS NOT NULL PRIMARY KEY (a) WITH COMPACT STORAGE", `line 1:88: COMPACT STORAGE tables are not allowed starting with version 4.0`},
		{head + "* FROM t WHERE a IS NOT NULL PRIMARY KEY (a) WITH nope = 1", `line 1:88: unknown table property "nope"`},
		{head + "* FROM t WHERE a IS NOT NULL PRIMARY KEY (a) WITH ID = 1", `line 1:93: unexpected "1", expected a UUID`},
		{"ALTER MATERIALIZED VIEW v", `line 1:26: unexpected end of input, expected WITH`},
		{"ALTER MATERIALIZED VIEW v WITH CLUSTERING ORDER BY (a ASC)", `line 1:32: the clustering order of a view cannot be changed`},
		{"ALTER MATERIALIZED VIEW v WITH id = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", `line 1:32: the view id cannot be changed`},
		{"ALTER MATERIALIZED VIEW v WITH nope = 1", `line 1:32: unknown table property "nope"`},
		{"ALTER MATERIALIZED VIEW IF NOT EXISTS v WITH comment = 'x'", `line 1:28: unexpected "NOT", expected EXISTS`},
		{"ALTER MATERIALIZED TABLE v", `line 1:7: unexpected "MATERIALIZED", expected KEYSPACE, TABLE, TYPE or MATERIALIZED VIEW`},
		{"DROP MATERIALIZED VIEW", `line 1:23: unexpected end of input, expected a view name`},
		{"DROP MATERIALIZED VIEW a.b.c", `line 1:27: unexpected ".", expected ';' or end of input`},
		{"DROP MATERIALIZED VIEWS v", `line 1:6: unexpected "MATERIALIZED", expected KEYSPACE, TABLE, TYPE, INDEX, TRIGGER, FUNCTION, AGGREGATE or MATERIALIZED VIEW`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q)\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

// TestViewDescribeRoundTrip checks that the DESCRIBE output of a schema
// with views (SELECT * and lists, quoted names, every relation form a
// view takes, composite keys, properties) parses and applies to the same
// tables and views, up to the order of a base table's columns, with the
// same DESCRIBE text; its own round trip keeps the digest.
func TestViewDescribeRoundTrip(t *testing.T) {
	parsed, err := Parse(fuzzBase + `
CREATE TABLE ks."Base" (k int, "C" frozen<list<int>>, m frozen<map<text, int>>, a frozen<addr>, v text, w int, PRIMARY KEY ((k, a), "C", m));
CREATE MATERIALIZED VIEW ks.t_by_v AS SELECT * FROM ks.t WHERE v IS NOT NULL AND a IS NOT NULL AND b IS NOT NULL PRIMARY KEY (v, a, b) WITH comment = 'by v';
CREATE MATERIALIZED VIEW ks."select" AS SELECT v, "C", k, a, m FROM ks."Base"
  WHERE k IN (1, -2) AND "C" CONTAINS 3 AND m CONTAINS KEY 'it''s' AND a = {street: 'x', zip: 1} AND ("C", m) >= ([1], {'a': 1}) AND v IS NOT NULL
  PRIMARY KEY ((v, k, a), m, "C") WITH CLUSTERING ORDER BY (m DESC, "C" ASC) AND gc_grace_seconds = 10;
ALTER MATERIALIZED VIEW ks.t_by_v WITH caching = {'keys': 'NONE'} AND default_time_to_live = 0`)
	if err != nil {
		t.Fatal(err)
	}
	s := applyAll(t, schema.Schema{}, parsed, 1)
	if s.ViewCount() != 2 {
		t.Fatalf("%d views", s.ViewCount())
	}
	s2, desc := reapplyDescribe(t, s, 500)
	checkDigestFixed(t, s2)
	_, tables, _, _ := flatten(s)
	_, tables2, _, _ := flatten(s2)
	if d := cmp.Diff(tables, tables2, anyColumnOrder); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if desc2 := describe.Schema(s2); desc2 != desc {
		t.Errorf("DESCRIBE differs after the round trip:\n%s\nwant:\n%s", desc2, desc)
	}
}
