package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// viewBase is the schema the view tests start from: base tables of every
// kind a rule looks at (static, collection, user type and duration
// columns; a counter table; a table with gc_grace_seconds 0; frozen
// collections in a key) and a table in another keyspace.
const viewBase = `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE ks.addr (street text, zip int);
CREATE TYPE ks.span (d duration);
CREATE TABLE ks.t (k int, c int, v text, w int, s int static, m map<text, int>, fm frozen<map<text, int>>, l list<int>,
    a frozen<addr>, ua addr, du duration, fd frozen<span>, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC);
CREATE TABLE ks.plain (k int PRIMARY KEY, v text, w int);
CREATE TABLE ks.fz (k int, fl frozen<list<int>>, fm frozen<map<text, int>>, a frozen<addr>, v text, PRIMARY KEY (k, fl, fm, a));
CREATE TABLE ks.counts (k int PRIMARY KEY, n counter);
CREATE TABLE ks.nogc (k int PRIMARY KEY, v text) WITH gc_grace_seconds = 0;
CREATE MATERIALIZED VIEW ks.pv AS SELECT * FROM ks.plain WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k);
CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE other.t (k int PRIMARY KEY);`

// viewSchema is viewBase applied.
func viewSchema(t testing.TB) schema.Schema {
	s, _ := schemakit.Exec(t, schema.Schema{}, viewBase)
	return s
}

// viewEnv is the environment of the statements the view tests check.
var viewEnv = schema.Env{Epoch: 500, DefaultKeyspace: "ks"}

// mv is "CREATE MATERIALIZED VIEW ks.x AS " + rest.
func mv(rest string) string { return "CREATE MATERIALIZED VIEW ks.x AS " + rest }

// TestCreateViewRules checks each of Cassandra's rules of CREATE
// MATERIALIZED VIEW (CreateViewStatement, and StatementRestrictions for
// the WHERE clause) with its message.
func TestCreateViewRules(t *testing.T) {
	base := viewSchema(t)
	const keyNotNull = "k IS NOT NULL AND c IS NOT NULL"
	tests := []struct {
		name, cql string
		code      error
		msg       string
	}{
		{"base in another keyspace", mv("SELECT * FROM other.t WHERE k IS NOT NULL PRIMARY KEY (k)"), schema.ErrInvalid,
			"Cannot create a materialized view on a table in a different keyspace"},
		{"missing base", mv("SELECT * FROM ks.nope WHERE k IS NOT NULL PRIMARY KEY (k)"), schema.ErrNotFound, "Base table 'nope' doesn't exist"},
		{"missing keyspace", "CREATE MATERIALIZED VIEW nope.x AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k)", schema.ErrNotFound, "keyspace nope does not exist"},
		{"bad name", "CREATE MATERIALIZED VIEW ks.\"a b\" AS SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k)", schema.ErrInvalid, `table name "a b" is invalid`},
		{"name of a table", "CREATE MATERIALIZED VIEW ks.plain AS SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k)", schema.ErrAlreadyExists,
			"Cannot create materialized view 'plain' - a table with the same name already exists"},
		{"name of a table, IF NOT EXISTS", "CREATE MATERIALIZED VIEW IF NOT EXISTS ks.plain AS SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k)", schema.ErrAlreadyExists,
			"a table with the same name already exists"},
		{"existing view", "CREATE MATERIALIZED VIEW ks.pv AS SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k)", schema.ErrAlreadyExists, "materialized view already exists"},
		{"view of a view", mv("SELECT * FROM ks.pv WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (k, v)"), schema.ErrInvalid,
			"Materialized views cannot be created against other materialized views"},
		{"counter base", mv("SELECT * FROM ks.counts WHERE k IS NOT NULL PRIMARY KEY (k)"), schema.ErrInvalid, "Materialized views are not supported on counter tables"},
		{"gc_grace_seconds 0", mv("SELECT * FROM ks.nogc WHERE k IS NOT NULL PRIMARY KEY (k)"), schema.ErrInvalid,
			"Cannot create materialized view 'x' for base table 'nogc' with gc_grace_seconds of 0, since this value is used to TTL undelivered updates."},
		{"static selected", mv("SELECT k, c, s FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Cannot include static column 's' in materialized view 'x'"},
		{"static through *", mv("SELECT * FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Cannot include static column 's' in materialized view 'x'"},
		{"unknown column selected", mv("SELECT k, c, nope FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Undefined column name nope in table ks.t"},
		{"key column not selected", mv("SELECT k, c FROM ks.t WHERE " + keyNotNull + " AND v IS NOT NULL PRIMARY KEY (v, k, c)"), schema.ErrInvalid,
			"Unknown column 'v' referenced in PRIMARY KEY for materialized view 'x'"},
		{"duplicate key column", mv("SELECT k, c FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (k, c, k)"), schema.ErrInvalid,
			"Duplicate column 'k' in PRIMARY KEY clause for materialized view 'x'"},
		{"non-frozen collection in key", mv("SELECT k, c, l FROM ks.t WHERE " + keyNotNull + " AND l IS NOT NULL PRIMARY KEY (l, k, c)"), schema.ErrInvalid,
			"Invalid non-frozen collection type 'list<int>' for PRIMARY KEY column 'l'"},
		{"non-frozen user type in key", mv("SELECT k, c, ua FROM ks.t WHERE " + keyNotNull + " AND ua IS NOT NULL PRIMARY KEY (ua, k, c)"), schema.ErrInvalid,
			"Invalid non-frozen user-defined type 'addr' for PRIMARY KEY column 'ua'"},
		{"duration in key", mv("SELECT k, c, du FROM ks.t WHERE " + keyNotNull + " AND du IS NOT NULL PRIMARY KEY (du, k, c)"), schema.ErrInvalid,
			"duration type is not supported for PRIMARY KEY column 'du'"},
		{"duration in a user type in key", mv("SELECT k, c, fd FROM ks.t WHERE " + keyNotNull + " AND fd IS NOT NULL PRIMARY KEY (fd, k, c)"), schema.ErrInvalid,
			"duration type is not supported for PRIMARY KEY column 'fd'"},
		{"clustering order not the clustering columns", mv("SELECT k, c FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (c ASC)"), schema.ErrInvalid,
			"Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive"},
		{"clustering order partial", mv("SELECT k, c, v FROM ks.t WHERE " + keyNotNull + " AND v IS NOT NULL PRIMARY KEY (v, k, c) WITH CLUSTERING ORDER BY (k ASC)"), schema.ErrInvalid,
			"Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive"},
		{"clustering order twice", mv("SELECT k, c FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (k ASC) AND CLUSTERING ORDER BY (k DESC)"), schema.ErrInvalid,
			"Duplicate column 'k' in CLUSTERING ORDER BY clause for view 'x'"},
		{"base key missing", mv("SELECT k, c FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (k)"), schema.ErrInvalid,
			"Cannot create materialized view 'x' without primary key columns c from base table 't'"},
		{"base key missing, two", mv("SELECT k, c, v FROM ks.t WHERE v IS NOT NULL PRIMARY KEY (v)"), schema.ErrInvalid,
			"without primary key columns k, c from base table 't'"},
		{"two non-key columns in key", mv("SELECT k, c, v, w FROM ks.t WHERE " + keyNotNull + " AND v IS NOT NULL AND w IS NOT NULL PRIMARY KEY ((v, w), k, c)"), schema.ErrInvalid,
			"Cannot include more than one non-primary key column in materialized view primary key (got v, w)"},
		{"key column not restricted", mv("SELECT k, c, v FROM ks.t WHERE " + keyNotNull + " PRIMARY KEY (v, k, c)"), schema.ErrInvalid,
			"Primary key columns v must be restricted with 'IS NOT NULL' or otherwise"},
		{"no WHERE", mv("SELECT k, c FROM ks.t PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Primary key columns k, c must be restricted with 'IS NOT NULL' or otherwise"},
		{"non-key column restricted", mv("SELECT k, c, v FROM ks.t WHERE " + keyNotNull + " AND v IS NOT NULL AND w = 1 PRIMARY KEY (v, k, c)"), schema.ErrInvalid,
			"Non-primary key columns can only be restricted with 'IS NOT NULL' (got: w restricted illegally)"},
		{"non-key column of the view key restricted", mv("SELECT k, c, v FROM ks.t WHERE " + keyNotNull + " AND v = 'a' PRIMARY KEY (v, k, c)"), schema.ErrInvalid,
			"Non-primary key columns can only be restricted with 'IS NOT NULL' (got: v restricted illegally)"},
		{"default_time_to_live", mv("SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k) WITH default_time_to_live = 0"), schema.ErrInvalid,
			"Cannot set default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table."},
		{"bad property", mv("SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k) WITH comment = 1"), schema.ErrInvalid, "property comment: must be a string"},
		{"bad id", mv("SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k) WITH ID = 'x'"), schema.ErrInvalid, "table id x is not a UUID"},
		{"unknown column in WHERE", mv("SELECT k, c FROM ks.t WHERE " + keyNotNull + " AND nope IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Undefined column name nope in table ks.t"},
		{"LIKE", mv("SELECT k, c, v FROM ks.t WHERE " + keyNotNull + " AND v LIKE 'a%' PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"LIKE restriction is only supported on properly indexed columns. v LIKE 'a%' is not valid."},
		{"value of the wrong type", mv("SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c = 'a' PRIMARY KEY (k, c)"), schema.ErrInvalid,
			`Invalid STRING constant (a) for "c" of type int`},
		{"IN value of the wrong type", mv("SELECT k, c FROM ks.t WHERE k IN (1, 2.5) AND c IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			`Invalid FLOAT constant (2.5) for "k" of type int`},
		{"null value", mv("SELECT k, c FROM ks.t WHERE k = null AND c IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Invalid null value in condition for column k"},
		{"list literal for an int", mv("SELECT k, c FROM ks.t WHERE k = [1] AND c IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Invalid list literal for k of type int"},
		{"list literal for a frozen map", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND fl IS NOT NULL AND fm = [1] AND a IS NOT NULL PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Invalid list literal for fm of type frozen<map<text, int>>"},
		{"user type literal field", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND fl IS NOT NULL AND fm IS NOT NULL AND a = {nope: 1} PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Unknown field 'nope' in value of user defined type addr"},
		{"CONTAINS on a non-collection", mv("SELECT k, c FROM ks.t WHERE k CONTAINS 1 AND c IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Cannot use CONTAINS on non-collection column k"},
		{"CONTAINS KEY on a list", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND fl CONTAINS KEY 1 AND fm IS NOT NULL AND a IS NOT NULL PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Cannot use CONTAINS KEY on non-map column fl"},
		{"map element of a frozen map", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND fl IS NOT NULL AND fm['a'] = 1 AND a IS NOT NULL PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Map-entry equality predicates on frozen map column fm are not supported"},
		{"map element of a list", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND fl[0] = 1 AND fm IS NOT NULL AND a IS NOT NULL PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Indexes on list entries (fl[index] = value) are not currently supported."},
		{"map element of an int", mv("SELECT k, c FROM ks.t WHERE k['a'] = 1 AND c IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Column k cannot be used as a map"},
		{"tuple relation on the partition key", mv("SELECT k, c FROM ks.t WHERE (k, c) = (1, 2) PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"Multi-column relations can only be applied to clustering columns but was applied to: k"},
		{"tuple of the wrong size", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND (fl, fm) = ([1], {'a': 1}, 3) AND a IS NOT NULL PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Expected 2 elements in value tuple, but got 3"},
		{"tuple out of key order", mv("SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND (fm, fl) = ({'a': 1}, [1]) AND a IS NOT NULL PRIMARY KEY (k, fl, fm, a)"), schema.ErrInvalid,
			"Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (fm, fl)"},
		{"two equalities", mv("SELECT k, c FROM ks.t WHERE k = 1 AND k = 2 AND c IS NOT NULL PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"k cannot be restricted by more than one relation if it includes an Equal"},
		{"IN and a slice", mv("SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c > 1 AND c IN (2, 3) PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"c cannot be restricted by more than one relation if it includes a IN"},
		{"two lower bounds", mv("SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c > 1 AND c >= 2 PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"More than one restriction was found for the start bound on c"},
		{"BETWEEN and an upper bound", mv("SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c BETWEEN 1 AND 5 AND c < 9 PRIMARY KEY (k, c)"), schema.ErrInvalid,
			"More than one restriction was found for the end bound on c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, diff, res, err := schemakit.ApplyOne(t, base, tt.cql, viewEnv)
			if !errors.Is(err, tt.code) || err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v, want %v containing %q", err, tt.code, tt.msg)
			}
			if res.Applied || !diff.Empty() || s.Digest() != base.Digest() {
				t.Errorf("a refused statement changed the schema")
			}
		})
	}
}

// TestCreateView checks what CREATE MATERIALIZED VIEW makes: the columns
// in select order with the base's types, the key, the clustering order
// (given, or the base's for a base clustering column), the WHERE clause
// kept in canonical form and in order, the id, the properties, the
// result and the diff; and IF NOT EXISTS, the default keyspace and a
// column selected twice.
func TestCreateView(t *testing.T) {
	base := viewSchema(t)
	s, diff, res, err := schemakit.ApplyOne(t, base, `CREATE MATERIALIZED VIEW x AS SELECT v, w, k, c, v FROM t
		WHERE v IS NOT NULL AND k IN (1, 2) AND (c) >= (0) AND c <= 10 AND w IS NOT NULL
		PRIMARY KEY (v, k, c) WITH comment = 'by v' AND caching = {'keys': 'none'}`, viewEnv)
	if err != nil {
		t.Fatal(err)
	}
	if res != (schema.Result{Kind: "CREATE MATERIALIZED VIEW", Keyspace: "ks", Table: "x", Applied: true}) {
		t.Errorf("result %+v", res)
	}
	v, _ := s.Table("ks", "x")
	if len(diff.Changes) != 1 || diff.Changes[0].Op != schema.OpPutTable || diff.Changes[0].Table != "x" || diff.Changes[0].TableValue != v {
		t.Errorf("diff %+v", diff.Changes)
	}
	want := &schema.Table{Keyspace: "ks", Name: "x", ID: schema.TableID(500, 0),
		Columns: []schema.Column{
			{Name: "v", Type: schema.TypeText, Kind: schema.PartitionKey},
			{Name: "k", Type: schema.TypeInt, Kind: schema.Clustering},
			{Name: "c", Type: schema.TypeInt, Kind: schema.Clustering},
			{Name: "w", Type: schema.TypeInt, Kind: schema.Regular},
		},
		PartitionKey: []string{"v"},
		Clustering:   []schema.ClusteringColumn{{Name: "k", Order: schema.Asc}, {Name: "c", Order: schema.Desc}},
		Extra: &schema.TableExtra{Options: map[string]string{"comment": "'by v'", "caching": "{'keys': 'NONE'}"}, View: &schema.View{Base: "t", Where: []schema.ViewRelation{
			{Columns: []string{"v"}, Op: "IS NOT", Value: "NULL"},
			{Columns: []string{"k"}, Op: "IN", Value: "(1, 2)"},
			{Columns: []string{"c"}, Tuple: true, Op: ">=", Value: "(0)"},
			{Columns: []string{"c"}, Op: "<=", Value: "10"},
			{Columns: []string{"w"}, Op: "IS NOT", Value: "NULL"},
		}}},
	}
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("view (-want +got):\n%s", d)
	}
	if s.TableCount() != base.TableCount() || s.ViewCount() != base.ViewCount()+1 {
		t.Errorf("tables %d views %d, want %d and %d: a view is not a table", s.TableCount(), s.ViewCount(), base.TableCount(), base.ViewCount()+1)
	}
	k, _ := s.Keyspace("ks")
	if got := k.Views("t"); len(got) != 1 || got[0] != v {
		t.Errorf("views of t: %v", got)
	}
	if k.TableCount() != 5 || k.ViewCount() != 2 {
		t.Errorf("keyspace counts %d tables %d views", k.TableCount(), k.ViewCount())
	}

	// The clustering order given replaces the base's.
	s2, _, _, err := schemakit.ApplyOne(t, base, mv("SELECT k, c FROM ks.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (k DESC) AND ID = 5A1C395E-B41F-11E5-9F22-BA0BE0483C18"), viewEnv)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := s2.Table("ks", "x")
	if v2.Clustering[0] != (schema.ClusteringColumn{Name: "k", Order: schema.Desc}) || v2.ID.String() != "5a1c395e-b41f-11e5-9f22-ba0be0483c18" {
		t.Errorf("clustering %+v id %s", v2.Clustering, v2.ID)
	}

	// IF NOT EXISTS of an existing view is a no-op.
	again, diff, res, err := schemakit.ApplyOne(t, s, "CREATE MATERIALIZED VIEW IF NOT EXISTS ks.x AS SELECT * FROM ks.plain WHERE k IS NOT NULL PRIMARY KEY (k)", viewEnv)
	if err != nil || res.Applied || !diff.Empty() || again.Digest() != s.Digest() {
		t.Errorf("IF NOT EXISTS: %v %+v %+v", err, res, diff)
	}

	// The WHERE forms Cassandra takes on key columns.
	for _, where := range []string{
		"k = 1 AND fl CONTAINS 2 AND fm CONTAINS KEY 'a' AND fm CONTAINS 3 AND a = {street: 'x', zip: 1}",
		"k IN () AND (fl, fm) IN (([1], {'a': 1}), ([2], {})) AND a IS NOT NULL",
		"k != 1 AND fl NOT CONTAINS 1 AND fm NOT CONTAINS KEY 'b' AND a IS NOT NULL",
		"k NOT IN (1) AND (fl) BETWEEN ([1]) AND ([2]) AND fm = {'a': 1} AND a IS NOT NULL",
		"k IS NOT NULL AND fl > [1] AND fl < [9] AND fm IS NOT NULL AND a IS NOT NULL",
	} {
		text := mv("SELECT k, fl, fm, a FROM ks.fz WHERE " + where + " PRIMARY KEY (k, fl, fm, a)")
		if _, _, _, err := schemakit.ApplyOne(t, base, text, viewEnv); err != nil {
			t.Errorf("%s: %v", where, err)
		}
	}
}

// TestViewsOnTableStatements checks the rules of the other statements on
// views and base tables: ALTER and DROP TABLE refuse a view, DROP TABLE a
// base with views (naming them), ALTER TABLE DROP any column of a base
// with views and gc_grace_seconds = 0 on it; CREATE INDEX, CREATE TRIGGER
// and CREATE TABLE LIKE refuse a view; a table and a view cannot share a
// name; DROP TYPE names a view that uses the type.
func TestViewsOnTableStatements(t *testing.T) {
	s, _ := schemakit.Exec(t, viewSchema(t), `CREATE MATERIALIZED VIEW ks.pw AS SELECT k, w FROM ks.plain WHERE w IS NOT NULL AND k IS NOT NULL PRIMARY KEY (w, k);
CREATE MATERIALIZED VIEW ks.fa AS SELECT k, fl, fm, a FROM ks.fz WHERE k IS NOT NULL AND fl IS NOT NULL AND fm IS NOT NULL AND a IS NOT NULL PRIMARY KEY (a, k, fl, fm)`)
	tests := []struct {
		cql  string
		code error
		msg  string
	}{
		{"ALTER TABLE ks.pv WITH comment = 'x'", schema.ErrInvalid, "ALTER TABLE ks.pv: Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead"},
		{"ALTER TABLE IF EXISTS ks.pv ADD z int", schema.ErrInvalid, "Cannot use ALTER TABLE on a materialized view"},
		{"DROP TABLE ks.pv", schema.ErrInvalid, "DROP TABLE ks.pv: Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead."},
		{"DROP TABLE IF EXISTS ks.pv", schema.ErrInvalid, "Please use DROP MATERIALIZED VIEW instead."},
		{"DROP TABLE ks.plain", schema.ErrInvalid, "DROP TABLE ks.plain: Cannot drop a table when materialized views still depend on it (pv, pw)"},
		{"ALTER TABLE ks.plain DROP v", schema.ErrInvalid, "ALTER TABLE ks.plain: Cannot drop column v on base table plain with materialized views"},
		{"ALTER TABLE ks.fz DROP v", schema.ErrInvalid, "Cannot drop column v on base table fz with materialized views"},
		{"ALTER TABLE ks.plain WITH gc_grace_seconds = 0", schema.ErrInvalid,
			"Cannot alter gc_grace_seconds of the base table of a materialized view to 0, since this value is used to TTL undelivered updates."},
		{"CREATE INDEX ON ks.pv (w)", schema.ErrInvalid, "Secondary indexes are not supported on materialized views"},
		{"CREATE CUSTOM INDEX i ON ks.pv (w) USING 'sai'", schema.ErrInvalid, "Secondary indexes are not supported on materialized views"},
		{"CREATE TRIGGER tr ON ks.pv USING 'C'", schema.ErrInvalid, "CREATE TRIGGER tr ON ks.pv: Cannot CREATE TRIGGER for a materialized view"},
		{"CREATE TABLE ks.copy LIKE ks.pv", schema.ErrInvalid, "Cannot use CREATE TABLE LIKE on a materialized view 'ks.pv'."},
		{"CREATE TABLE ks.pv (k int PRIMARY KEY)", schema.ErrAlreadyExists, "Cannot create table 'pv' - a materialized view with the same name already exists"},
		{"CREATE TABLE IF NOT EXISTS ks.pv (k int PRIMARY KEY)", schema.ErrAlreadyExists, "a materialized view with the same name already exists"},
		{"DROP TRIGGER IF EXISTS tr ON ks.pv", nil, ""},
		{"DROP TYPE ks.addr", schema.ErrInvalid, "type is still used by materialized view fa, table fz, table t"},
	}
	for _, tt := range tests {
		ns, diff, _, err := schemakit.ApplyOne(t, s, tt.cql, viewEnv)
		if tt.code == nil {
			if err != nil || !diff.Empty() {
				t.Errorf("%s: %v %+v", tt.cql, err, diff)
			}
			continue
		}
		if !errors.Is(err, tt.code) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want %v containing %q", tt.cql, err, tt.code, tt.msg)
		}
		if ns.Digest() != s.Digest() {
			t.Errorf("%s changed the schema", tt.cql)
		}
	}
	// Other table changes of a base with views go through.
	for _, text := range []string{"ALTER TABLE ks.plain WITH gc_grace_seconds = 5", "CREATE INDEX ON ks.plain (v)", "CREATE TRIGGER tr ON ks.plain USING 'C'"} {
		if _, _, _, err := schemakit.ApplyOne(t, s, text, viewEnv); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
}

// TestBaseColumnChangesReachViews checks that ALTER TABLE ADD adds a
// regular column to the SELECT * views of the base (not to the others;
// a static column is refused while the base has one, and goes to the base
// alone otherwise), and that RENAME of a key column renames
// it in every view of the base, in its columns, key and WHERE clause; the
// views' changes come before the base's in the diff.
func TestBaseColumnChangesReachViews(t *testing.T) {
	s, _ := schemakit.Exec(t, viewSchema(t), `CREATE MATERIALIZED VIEW ks.pw AS SELECT k, w FROM ks.plain WHERE w IS NOT NULL AND k IS NOT NULL AND k > 0 PRIMARY KEY (w, k);
CREATE TABLE ks.wide (k int, c int, v text, PRIMARY KEY (k, c));
CREATE MATERIALIZED VIEW ks.wv AS SELECT * FROM ks.wide WHERE k IS NOT NULL AND c IS NOT NULL AND v IS NOT NULL PRIMARY KEY (v, c, k)`)
	s, diff := schemakit.Exec(t, s, "ALTER TABLE ks.plain ADD (a int, zz text)")
	if ops := changeTables(diff); ops != "pv plain" {
		t.Errorf("ADD changes %s, want pv then plain", ops)
	}
	pv, _ := s.Table("ks", "pv")
	if names := columnNames(pv); names != "v k a w zz" {
		t.Errorf("SELECT * view columns %s", names)
	}
	if pw, _ := s.Table("ks", "pw"); columnNames(pw) != "w k" {
		t.Errorf("view pw gained columns: %s", columnNames(pw))
	}
	// A static column cannot go to a SELECT * view, whose DESCRIBE would
	// then no longer apply: metalog refuses it where Cassandra adds it to
	// the base alone. With only views of listed columns it is the base's.
	if _, _, _, err := schemakit.ApplyOne(t, s, "ALTER TABLE ks.wide ADD st int static", viewEnv); err == nil || !strings.Contains(err.Error(), "cannot add static column st: materialized view wv selects every column of the table (SELECT *)") {
		t.Errorf("ADD static with a SELECT * view: %v", err)
	}
	s, _ = schemakit.Exec(t, s, "CREATE TABLE ks.wide2 (k int, c int, PRIMARY KEY (k, c)); CREATE MATERIALIZED VIEW ks.w2 AS SELECT k, c FROM ks.wide2 WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)")
	s, diff = schemakit.Exec(t, s, "ALTER TABLE ks.wide2 ADD st int static")
	if ops := changeTables(diff); ops != "wide2" {
		t.Errorf("ADD static changes %s, want wide2 alone", ops)
	}
	s, diff = schemakit.Exec(t, s, "ALTER TABLE ks.plain RENAME k TO id")
	if ops := changeTables(diff); ops != "pv pw plain" {
		t.Errorf("RENAME changes %s, want pv, pw then plain", ops)
	}
	pw, _ := s.Table("ks", "pw")
	if columnNames(pw) != "w id" || pw.Clustering[0].Name != "id" || schema.WhereText(pw.View().Where) != "w IS NOT NULL AND id IS NOT NULL AND id > 0" {
		t.Errorf("renamed view: %s %+v %s", columnNames(pw), pw.Clustering, schema.WhereText(pw.View().Where))
	}
	s, _ = schemakit.Exec(t, s, "ALTER TABLE ks.wide RENAME k TO \"K\" AND c TO cc")
	wv, _ := s.Table("ks", "wv")
	if describe.View(wv) != `CREATE MATERIALIZED VIEW ks.wv AS
    SELECT *
    FROM ks.wide
    WHERE "K" IS NOT NULL AND cc IS NOT NULL AND v IS NOT NULL
    PRIMARY KEY (v, cc, "K")
 WITH ID = `+wv.ID.String()+`
    AND CLUSTERING ORDER BY (cc ASC, "K" ASC);
` {
		t.Errorf("renamed view:\n%s", describe.View(wv))
	}
	if schema.ComputeDigest(s) != s.Digest() {
		t.Errorf("maintained digest differs")
	}
}

// changeTables lists the tables a diff changes, in order.
func changeTables(d schema.Diff) string {
	var names []string
	for _, c := range d.Changes {
		names = append(names, c.Table)
	}
	return strings.Join(names, " ")
}

// columnNames lists t's columns, in order.
func columnNames(t *schema.Table) string {
	var names []string
	for _, c := range t.Columns {
		names = append(names, c.Name)
	}
	return strings.Join(names, " ")
}

// TestAlterDropView checks ALTER and DROP MATERIALIZED VIEW: properties
// merged and checked as a table's, gc_grace_seconds 0 and a positive
// default_time_to_live refused with Cassandra's messages (0, the only
// value a view takes, is not kept), IF EXISTS, a missing view, and a
// table named where a view is wanted.
func TestAlterDropView(t *testing.T) {
	s := viewSchema(t)
	s2, diff, res, err := schemakit.ApplyOne(t, s, "ALTER MATERIALIZED VIEW pv WITH comment = 'x' AND gc_grace_seconds = 60", viewEnv)
	if err != nil || !res.Applied || res.Kind != "ALTER MATERIALIZED VIEW" || res.Table != "pv" || len(diff.Changes) != 1 || diff.Changes[0].Op != schema.OpPutTable {
		t.Fatalf("alter: %v %+v %+v", err, res, diff)
	}
	pv, _ := s2.Table("ks", "pv")
	if pv.Options()["comment"] != "'x'" || pv.Options()["gc_grace_seconds"] != "60" || pv.View() == nil || pv.View().Base != "plain" {
		t.Errorf("altered view %+v", pv)
	}
	s3, _, _, err := schemakit.ApplyOne(t, s2, "ALTER MATERIALIZED VIEW ks.pv WITH default_time_to_live = 0 AND comment = 'y'", viewEnv)
	if pv3, _ := s3.Table("ks", "pv"); err != nil || pv3.Options()["comment"] != "'y'" {
		t.Fatalf("default_time_to_live = 0: %v", err)
	} else if _, kept := pv3.Options()["default_time_to_live"]; kept {
		t.Errorf("default_time_to_live = 0 kept: %v", pv3.Options())
	}
	tests := []struct {
		cql  string
		code error
		msg  string
	}{
		{"ALTER MATERIALIZED VIEW ks.pv WITH gc_grace_seconds = 0", schema.ErrInvalid,
			"Cannot alter gc_grace_seconds of a materialized view to 0, since this value is used to TTL undelivered updates."},
		{"ALTER MATERIALIZED VIEW ks.pv WITH default_time_to_live = 10", schema.ErrInvalid,
			"Forbidden default_time_to_live detected for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table. default_time_to_live must be set to zero, see CASSANDRA-12868 for more information"},
		{"ALTER MATERIALIZED VIEW ks.pv WITH comment = 1", schema.ErrInvalid, "property comment: must be a string"},
		{"ALTER MATERIALIZED VIEW ks.nope WITH comment = 'x'", schema.ErrNotFound, "ALTER MATERIALIZED VIEW ks.nope: materialized view does not exist"},
		{"ALTER MATERIALIZED VIEW ks.plain WITH comment = 'x'", schema.ErrNotFound, "materialized view does not exist: ks.plain is a table (use ALTER TABLE)"},
		{"ALTER MATERIALIZED VIEW nope.pv WITH comment = 'x'", schema.ErrNotFound, "keyspace nope does not exist"},
		{"DROP MATERIALIZED VIEW ks.nope", schema.ErrNotFound, "DROP MATERIALIZED VIEW ks.nope: materialized view does not exist"},
		{"DROP MATERIALIZED VIEW ks.plain", schema.ErrNotFound, "materialized view does not exist: ks.plain is a table (use DROP TABLE)"},
		{"ALTER MATERIALIZED VIEW IF EXISTS ks.nope WITH comment = 'x'", nil, ""},
		{"ALTER MATERIALIZED VIEW IF EXISTS ks.plain WITH comment = 'x'", nil, ""},
		{"DROP MATERIALIZED VIEW IF EXISTS ks.nope", nil, ""},
		{"DROP MATERIALIZED VIEW IF EXISTS nope.nope", nil, ""},
	}
	for _, tt := range tests {
		ns, diff, res, err := schemakit.ApplyOne(t, s2, tt.cql, viewEnv)
		if tt.code == nil {
			if err != nil || res.Applied || !diff.Empty() {
				t.Errorf("%s: %v %+v", tt.cql, err, res)
			}
			continue
		}
		if !errors.Is(err, tt.code) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want %v containing %q", tt.cql, err, tt.code, tt.msg)
		}
		if ns.Digest() != s2.Digest() {
			t.Errorf("%s changed the schema", tt.cql)
		}
	}
	dropped, diff, res, err := schemakit.ApplyOne(t, s2, "DROP MATERIALIZED VIEW ks.pv", viewEnv)
	if err != nil || !res.Applied || len(diff.Changes) != 1 || diff.Changes[0] != (schema.Change{Op: schema.OpDropTable, Keyspace: "ks", Table: "pv"}) {
		t.Fatalf("drop: %v %+v", err, diff)
	}
	if _, ok := dropped.Table("ks", "pv"); ok || dropped.ViewCount() != 0 || dropped.TableCount() != s.TableCount() {
		t.Errorf("view still there, or counts off: %d views %d tables", dropped.ViewCount(), dropped.TableCount())
	}
	// The base can go once its views have.
	if _, _, _, err := schemakit.ApplyOne(t, dropped, "DROP TABLE ks.plain", viewEnv); err != nil {
		t.Errorf("DROP TABLE after its views: %v", err)
	}
	if _, _, _, err := schemakit.ApplyOne(t, dropped, "ALTER TABLE ks.plain DROP v", viewEnv); err != nil {
		t.Errorf("ALTER TABLE DROP after its views: %v", err)
	}
}

// TestDropKeyspaceDropsViews checks that DROP KEYSPACE drops the views
// with the keyspace (one change), and the counts follow.
func TestDropKeyspaceDropsViews(t *testing.T) {
	s := viewSchema(t)
	ns, diff, _, err := schemakit.ApplyOne(t, s, "DROP KEYSPACE ks", viewEnv)
	if err != nil || len(diff.Changes) != 1 || diff.Changes[0].Op != schema.OpDropKeyspace {
		t.Fatalf("%v %+v", err, diff)
	}
	if ns.ViewCount() != 0 || ns.TableCount() != 1 || schema.ComputeDigest(ns) != ns.Digest() {
		t.Errorf("after DROP KEYSPACE: %d views %d tables", ns.ViewCount(), ns.TableCount())
	}
}

// TestViewDescribe checks DESCRIBE of views, in the layout of Cassandra's
// ViewMetadata (with the id first, as metalog's tables have it): after
// their base table, its indexes and triggers, in name order; quoted
// names; SELECT * or the columns in select order; and that describe.Table
// of a view is its describe.View.
func TestViewDescribe(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks."Base" (k int, "C" int, v text, PRIMARY KEY (k, "C"));
CREATE INDEX by_v ON ks."Base" (v);
CREATE TRIGGER tr ON ks."Base" USING 'C';
CREATE MATERIALIZED VIEW ks.zz AS SELECT * FROM ks."Base" WHERE k IS NOT NULL AND "C" IS NOT NULL PRIMARY KEY ("C", k);
CREATE MATERIALIZED VIEW ks."select" AS SELECT v, "C", k FROM ks."Base" WHERE v IS NOT NULL AND k IS NOT NULL AND "C" IN (1, 2) PRIMARY KEY ((v, k), "C") WITH CLUSTERING ORDER BY ("C" DESC) AND comment = 'it''s';
CREATE TABLE ks.after (k int PRIMARY KEY)`)
	k, _ := s.Keyspace("ks")
	got := describe.Keyspace(k)
	want := `CREATE INDEX by_v ON ks."Base" (v);
CREATE TRIGGER tr ON ks."Base" USING 'C';

CREATE MATERIALIZED VIEW ks."select" AS
    SELECT v, k, "C"
    FROM ks."Base"
    WHERE v IS NOT NULL AND k IS NOT NULL AND "C" IN (1, 2)
    PRIMARY KEY ((v, k), "C")
 WITH ID = 00000000-0000-8000-866d-6c6700000000
    AND CLUSTERING ORDER BY ("C" DESC)
    AND comment = 'it''s';

CREATE MATERIALIZED VIEW ks.zz AS
    SELECT *
    FROM ks."Base"
    WHERE k IS NOT NULL AND "C" IS NOT NULL
    PRIMARY KEY ("C", k)
 WITH ID = 00000000-0000-8000-856d-6c6700000000
    AND CLUSTERING ORDER BY (k ASC);

CREATE TABLE ks.after (`
	if !strings.Contains(got, want) {
		t.Errorf("DESCRIBE KEYSPACE:\n%s\nwant it to hold:\n%s", got, want)
	}
	v, _ := k.Table("select")
	if describe.Table(v) != describe.View(v) || !strings.HasPrefix(describe.View(v), `CREATE MATERIALIZED VIEW ks."select" AS`) {
		t.Errorf("DescribeTable of a view:\n%s", describe.Table(v))
	}
	if without := (describe.Options{OmitID: true}).Table(v); strings.Contains(without, "ID =") || !strings.Contains(without, "\n WITH CLUSTERING ORDER BY") {
		t.Errorf("without id:\n%s", without)
	}
	one, _ := schemakit.Exec(t, schema.Schema{}, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.t (k int PRIMARY KEY, v int);
CREATE MATERIALIZED VIEW ks.v AS SELECT k, v FROM ks.t WHERE k IS NOT NULL AND v IS NOT NULL PRIMARY KEY ((v, k))`)
	ov, _ := one.Table("ks", "v")
	if got := (describe.Options{OmitID: true}).Table(ov); got != "CREATE MATERIALIZED VIEW ks.v AS\n    SELECT v, k\n    FROM ks.t\n    WHERE k IS NOT NULL AND v IS NOT NULL\n    PRIMARY KEY ((v, k));\n" {
		t.Errorf("a view without properties or id:\n%q", got)
	}
}

// TestViewDescribeRoundTrip checks that the DESCRIBE of a schema with
// views (every relation form, quoted names, a view of a user type column)
// parses and applies to a fresh schema with the same DESCRIBE, whose own
// round trip keeps its digest.
func TestViewDescribeRoundTrip(t *testing.T) {
	s, _ := schemakit.Exec(t, viewSchema(t), `CREATE MATERIALIZED VIEW ks."Fz" AS SELECT k, fl, fm, a, v FROM ks.fz
  WHERE k IN (1, -2) AND fl CONTAINS 2 AND fm CONTAINS KEY 'it''s' AND a = {street: 'x', zip: 1} AND (fl, fm) IN (([1], {'a': 1})) AND v IS NOT NULL
  PRIMARY KEY ((a, k), fl, fm, v) WITH CLUSTERING ORDER BY (fl DESC, fm ASC, v DESC) AND comment = 'x';
CREATE MATERIALIZED VIEW ks.tv AS SELECT k, c, w, a FROM ks.t WHERE k IS NOT NULL AND c BETWEEN 1 AND 9 AND w IS NOT NULL PRIMARY KEY (w, c, k);
ALTER MATERIALIZED VIEW ks.pv WITH gc_grace_seconds = 100`)
	desc := describe.Schema(s)
	var fresh schema.Schema
	parsed, err := cql.Parse(desc)
	if err != nil {
		t.Fatalf("DESCRIBE does not parse: %v\n%s", err, desc)
	}
	for i, p := range parsed {
		if fresh, _, _, err = schema.Apply(fresh, p.Statement, schema.Env{Epoch: uint64(1000 + i)}); err != nil {
			t.Fatalf("%s: %v", p.Text, err)
		}
	}
	if got := describe.Schema(fresh); got != desc {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, desc)
	}
	// The base tables list their columns in DESCRIBE order after the
	// round trip; a second one changes nothing, digest included.
	if twice := schemakit.DescribeRoundTrip(t, fresh); twice.Digest() != fresh.Digest() {
		t.Errorf("a second round trip changes the digest")
	}
}
