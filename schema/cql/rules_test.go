package cql

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
)

// rulesBase is the schema every rule case starts from.
const rulesBase = `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE ks.addr (street text, zip int);
CREATE TYPE ks.person (name text, home frozen<addr>);
CREATE TYPE ks.bag (items list<text>);
CREATE TYPE ks.span (d duration);
CREATE TYPE ks.wrap (inner frozen<span>);
CREATE TABLE ks.t (k int, c int, v text, s int static, m map<text, int>, l list<int>, f frozen<set<int>>, PRIMARY KEY (k, c));
CREATE TABLE ks.simple (id int PRIMARY KEY, v text, a frozen<addr>);
CREATE TABLE ks.cnt (id int PRIMARY KEY, n counter);
CREATE INDEX t_v_idx ON ks.t (v);`

func mustParseApply(t *testing.T, s schema.Schema, text string, epoch uint64) schema.Schema {
	t.Helper()
	return mustParseApplyRules(t, s, text, epoch, schema.RulesOriginal)
}

// mustParseApplyRules is mustParseApply with the rules version of the log
// entries (schema.Env.Rules).
func mustParseApplyRules(t *testing.T, s schema.Schema, text string, epoch, rules uint64) schema.Schema {
	t.Helper()
	parsed, err := Parse(text)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	for i, p := range parsed {
		ns, _, _, err := schema.Apply(s, p.Statement, schema.Env{Epoch: epoch + uint64(i), Rules: rules})
		if err != nil {
			t.Fatalf("apply %q: %v", p.Text, err)
		}
		s = ns
	}
	return s
}

// TestRules checks every validation rule with its own message: each case
// is one statement applied to rulesBase.
func TestRules(t *testing.T) {
	base := mustParseApply(t, schema.Schema{}, rulesBase, 1)
	tests := []struct {
		stmt string
		code error  // nil: success
		want string // substring of the error
	}{
		// Keyspaces.
		{"CREATE KEYSPACE system_auth2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", schema.ErrInvalid, "reserved for system keyspaces"},
		{"CREATE KEYSPACE System WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", schema.ErrInvalid, "reserved"},
		{"CREATE KEYSPACE systems WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", nil, ""},
		{"CREATE KEYSPACE " + strings.Repeat("k", 49) + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", schema.ErrInvalid, "1 to 48 characters"},
		{`CREATE KEYSPACE "a b" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, schema.ErrInvalid, "1 to 48 characters of [A-Za-z0-9_]"},
		{"ALTER KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}", nil, ""},
		{"ALTER KEYSPACE ks WITH durable_writes = false", nil, ""},
		{"ALTER KEYSPACE ks WITH replication = {'replication_factor': 3}", schema.ErrInvalid, "missing replication strategy class"},
		{"ALTER KEYSPACE nope WITH durable_writes = false", schema.ErrNotFound, "keyspace does not exist"},
		{"ALTER KEYSPACE IF EXISTS nope WITH durable_writes = false", nil, ""},
		{"USE nope", schema.ErrNotFound, "does not exist"},
		// Tables: column rules.
		{"CREATE TABLE ks.x (k int PRIMARY KEY, n counter, v text)", schema.ErrInvalid, "cannot mix counter and non-counter columns"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, n counter static)", schema.ErrInvalid, "static columns are only allowed in tables with clustering columns"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, s int static)", schema.ErrInvalid, "static columns are only allowed in tables with clustering columns"},
		{"CREATE TABLE ks.x (k list<int> PRIMARY KEY)", schema.ErrInvalid, "non-frozen collection column k cannot be part of the PRIMARY KEY"},
		{"CREATE TABLE ks.x (k counter PRIMARY KEY)", schema.ErrInvalid, "counter column k cannot be part of the PRIMARY KEY"},
		{"CREATE TABLE ks.x (k int, c duration, PRIMARY KEY (k, c))", schema.ErrInvalid, "duration column c cannot be part of the PRIMARY KEY"},
		{"CREATE TABLE ks.x (k addr PRIMARY KEY)", schema.ErrInvalid, "non-frozen user type column k cannot be part of the PRIMARY KEY"},
		{"CREATE TABLE ks.x (k frozen<addr> PRIMARY KEY, p person)", nil, ""},
		{"CREATE TABLE ks.x (k frozen<span> PRIMARY KEY)", schema.ErrInvalid, "column k cannot be part of the PRIMARY KEY: its user type holds a duration"},
		{"CREATE TABLE ks.x (k int, c frozen<list<frozen<wrap>>>, PRIMARY KEY (k, c))", schema.ErrInvalid, "its user type holds a duration"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, s frozen<wrap>)", nil, ""},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, b bag)", schema.ErrInvalid, "non-frozen user type bag has a non-frozen collection field items"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, k text)", schema.ErrInvalid, "duplicate column name k"},
		{"CREATE TABLE ks.x (k int, c int, d int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (d DESC)", schema.ErrInvalid, "must list the clustering columns in key order: expected c, found d"},
		{"CREATE TABLE ks.x (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (k DESC)", schema.ErrInvalid, "names k, which is not a clustering column"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, a nope)", schema.ErrInvalid, "unknown type ks.nope"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, a frozen<other.addr>)", schema.ErrInvalid, "user types can only be used in the keyspace they are defined in"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, a frozen<ks.addr>, b list<frozen<addr>>)", nil, ""},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, a list<addr>)", schema.ErrInvalid, "non-frozen user types are not allowed inside collections"},
		{"CREATE TABLE ks." + strings.Repeat("t", 49) + " (k int PRIMARY KEY)", schema.ErrInvalid, "1 to 48 characters"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY, v frozen<list<list<int>>>, w tuple<int, list<int>>)", nil, ""},
		// Table properties.
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH gc_grace_seconds = -1", schema.ErrInvalid, "property gc_grace_seconds: must be between 0 and 2147483647, not -1"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH default_time_to_live = 630720001", schema.ErrInvalid, "property default_time_to_live: must be between 0 and 630720000"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 0", schema.ErrInvalid, "must be greater than 0 and at most 1"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH crc_check_chance = 1.5", schema.ErrInvalid, "must be between 0 and 1"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH caching = 'ALL'", schema.ErrInvalid, "property caching: must be a map"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH caching = {'keys': 'SOME'}", schema.ErrInvalid, "caching keys must be 'ALL' or 'NONE'"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH caching = {'rows': 'ALL'}", schema.ErrInvalid, "unknown caching option 'rows'"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH compaction = {'min_threshold': 4}", schema.ErrInvalid, "property compaction: missing sub-option 'class'"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 3}", schema.ErrInvalid, "chunk_length_in_kb must be a positive power of 2"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH comment = 3", schema.ErrInvalid, "property comment: must be a string"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH speculative_retry = 'sometimes'", schema.ErrInvalid, "invalid speculative retry policy 'sometimes'"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH read_repair = 'MAYBE'", schema.ErrInvalid, "must be one of BLOCKING, NONE"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH cdc = 'yes'", schema.ErrInvalid, "property cdc: must be true or false"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH extensions = {'a': 'b'}", schema.ErrInvalid, "must be a map of strings to blobs"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH max_index_interval = 100", schema.ErrInvalid, "max_index_interval (100) must be greater than or equal to min_index_interval (128)"},
		{"CREATE TABLE ks.x (k int PRIMARY KEY) WITH memtable_flush_period_in_ms = 'x'", schema.ErrInvalid, "must be an integer"},
		// ALTER TABLE.
		{"ALTER TABLE ks.t ADD x int", nil, ""},
		{"ALTER TABLE ks.t ADD x int, y text static", nil, ""},
		{"ALTER TABLE ks.t ADD (x int, y frozen<addr>)", nil, ""},
		{"ALTER TABLE ks.t ADD v int", schema.ErrInvalid, "column v already exists"},
		{"ALTER TABLE ks.simple ADD s int static", schema.ErrInvalid, "static columns are only allowed in tables with clustering columns"},
		{"ALTER TABLE ks.simple ADD n counter", schema.ErrInvalid, "cannot add counter column n to a non-counter table"},
		{"ALTER TABLE ks.cnt ADD v text", schema.ErrInvalid, "cannot add non-counter column v to a counter table"},
		{"ALTER TABLE ks.cnt ADD n2 counter", nil, ""},
		{"ALTER TABLE ks.t ADD x nope", schema.ErrInvalid, "unknown type ks.nope"},
		{"ALTER TABLE ks.t DROP v", schema.ErrInvalid, "cannot drop column v: index t_v_idx depends on it"},
		{"ALTER TABLE ks.t DROP m, l", nil, ""},
		{"ALTER TABLE ks.t DROP (m)", nil, ""},
		{"ALTER TABLE ks.t DROP k", schema.ErrInvalid, "cannot drop PRIMARY KEY column k"},
		{"ALTER TABLE ks.t DROP nope", schema.ErrInvalid, "column nope does not exist"},
		{"ALTER TABLE ks.t RENAME k TO kk AND c TO cc", nil, ""},
		{"ALTER TABLE ks.t RENAME v TO w", schema.ErrInvalid, "cannot rename non PRIMARY KEY column v"},
		{"ALTER TABLE ks.t RENAME k TO c", schema.ErrInvalid, "a column of that name exists"},
		{"ALTER TABLE ks.t WITH comment = 'x' AND gc_grace_seconds = 10", nil, ""},
		{"ALTER TABLE ks.t WITH gc_grace_seconds = 1.5", schema.ErrInvalid, "must be an integer"},
		{"ALTER TABLE ks.nope ADD x int", schema.ErrNotFound, "table does not exist"},
		{"ALTER TABLE IF EXISTS ks.nope ADD x int", nil, ""},
		// Types.
		{"CREATE TYPE ks.addr (a int)", schema.ErrAlreadyExists, "type already exists"},
		{"CREATE TYPE IF NOT EXISTS ks.addr (a int)", nil, ""},
		{"CREATE TYPE ks.x (a int, a text)", schema.ErrInvalid, "duplicate field name a"},
		{"CREATE TYPE ks.x (a counter)", schema.ErrInvalid, "a user type cannot contain counters"},
		{"CREATE TYPE ks.x (a addr)", schema.ErrInvalid, "a user type cannot contain non-frozen user types"},
		{"CREATE TYPE ks.x (a frozen<x>)", schema.ErrInvalid, "unknown type ks.x"},
		{`CREATE TYPE ks."int" (a int)`, schema.ErrInvalid, "type name int is reserved"},
		{"CREATE TYPE ks.x (a list<int>, b frozen<map<text, frozen<addr>>>)", nil, ""},
		{"CREATE TYPE nope.x (a int)", schema.ErrNotFound, "keyspace nope does not exist"},
		{"ALTER TYPE ks.addr ADD country text", nil, ""},
		{"ALTER TYPE ks.addr ADD zip text", schema.ErrInvalid, "field zip already exists"},
		{"ALTER TYPE ks.addr ADD p frozen<person>", schema.ErrInvalid, "refer to itself"},
		{"ALTER TYPE ks.addr RENAME zip TO code AND street TO s", nil, ""},
		{"ALTER TYPE ks.addr RENAME nope TO x", schema.ErrInvalid, "unknown field nope"},
		{"ALTER TYPE ks.addr RENAME zip TO street", schema.ErrInvalid, "a field of that name exists"},
		{"ALTER TYPE ks.nope ADD x int", schema.ErrNotFound, "type does not exist"},
		{"DROP TYPE ks.addr", schema.ErrInvalid, "type is still used by table simple, type person"},
		{"DROP TYPE ks.bag", nil, ""},
		{"DROP TYPE ks.nope", schema.ErrNotFound, "type does not exist"},
		{"DROP TYPE IF EXISTS ks.nope", nil, ""},
		// Indexes.
		{"CREATE INDEX ON ks.t (v)", schema.ErrInvalid, "is a duplicate of existing index t_v_idx"},
		{"CREATE INDEX IF NOT EXISTS ON ks.t (v)", nil, ""},
		{"CREATE INDEX t_v_idx ON ks.simple (v)", schema.ErrAlreadyExists, "index already exists"},
		{"CREATE INDEX ON ks.t (keys(m))", nil, ""},
		{"CREATE INDEX ON ks.t (entries(m))", nil, ""},
		{"CREATE INDEX ON ks.t (values(l))", nil, ""},
		{"CREATE INDEX ON ks.t (l)", nil, ""},
		{"CREATE INDEX ON ks.t (full(f))", nil, ""},
		{"CREATE INDEX ON ks.t (f)", schema.ErrInvalid, "except with full(f)"},
		{"CREATE INDEX ON ks.t (keys(l))", schema.ErrInvalid, "keys() indexes are only supported on non-frozen maps"},
		{"CREATE INDEX ON ks.t (values(v))", schema.ErrInvalid, "values() indexes are only supported on non-frozen collections"},
		{"CREATE INDEX ON ks.t (full(m))", schema.ErrInvalid, "full() indexes are only supported on frozen collections"},
		{"CREATE INDEX ON ks.simple (id)", schema.ErrInvalid, "cannot create a secondary index on the only partition key column id"},
		{"CREATE INDEX ON ks.t (k)", schema.ErrInvalid, "cannot create a secondary index on the only partition key column k"},
		{"CREATE INDEX ON ks.t (c)", nil, ""},
		{"CREATE INDEX ON ks.t (s)", nil, ""},
		{"CREATE INDEX ON ks.cnt (n)", schema.ErrInvalid, "not supported on counter tables"},
		{"CREATE INDEX ON ks.t (nope)", schema.ErrInvalid, "column nope does not exist"},
		{"CREATE INDEX ON ks.nope (v)", schema.ErrNotFound, "table ks.nope does not exist"},
		{"CREATE CUSTOM INDEX ON ks.t (s) USING 'sai' WITH OPTIONS = {'case_sensitive': 'false'}", nil, ""},
		{"DROP INDEX ks.t_v_idx", nil, ""},
		{"DROP INDEX ks.nope", schema.ErrNotFound, "index does not exist"},
		{"DROP INDEX IF EXISTS ks.nope", nil, ""},
	}
	for _, tt := range tests {
		parsed, err := Parse(tt.stmt)
		if err != nil {
			t.Errorf("%s: parse: %v", tt.stmt, err)
			continue
		}
		_, _, _, err = schema.Apply(base, parsed[0].Statement, schema.Env{Epoch: 100})
		switch {
		case tt.code == nil && err != nil:
			t.Errorf("%s: %v", tt.stmt, err)
		case tt.code != nil && (!errors.Is(err, tt.code) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s:\n got %v\nwant %v containing %q", tt.stmt, err, tt.code, tt.want)
		}
	}
}

// TestDroppedColumns checks that dropped columns are remembered with their
// epoch and expanded type, and that re-adding one needs a compatible type.
func TestDroppedColumns(t *testing.T) {
	s := mustParseApply(t, schema.Schema{}, rulesBase, 1)
	s = mustParseApply(t, s, "ALTER TABLE ks.simple DROP v; ALTER TABLE ks.simple DROP a USING TIMESTAMP 77", 20)
	tbl, _ := s.Table("ks", "simple")
	want := []schema.DroppedColumn{
		{Name: "v", Type: schema.TypeText, Epoch: 20},
		{Name: "a", Type: schema.TupleType{Elems: []schema.Type{schema.TypeText, schema.TypeInt}}, Epoch: 77},
	}
	if len(tbl.DroppedColumns()) != 2 || tbl.DroppedColumns()[0] != want[0] || tbl.DroppedColumns()[1].Epoch != 77 || !schema.TypesEqual(tbl.DroppedColumns()[1].Type, want[1].Type) {
		t.Fatalf("dropped columns = %+v, want %+v", tbl.DroppedColumns(), want)
	}
	// The dropped record no longer uses the type, so it can be dropped
	// once the other user is gone.
	s = mustParseApply(t, s, "DROP TYPE ks.bag", 30)
	for _, tt := range []struct {
		stmt, want string
	}{
		{"ALTER TABLE ks.simple ADD v int", "cannot re-add previously dropped column v of type int, incompatible with previous type text"},
		{"ALTER TABLE ks.simple ADD a text", "incompatible with previous type tuple<text, int>"},
		{"ALTER TABLE ks.simple ADD v text", ""},
		{"ALTER TABLE ks.simple ADD v blob", ""},
		{"ALTER TABLE ks.simple ADD a frozen<addr>", ""},
	} {
		parsed, _ := Parse(tt.stmt)
		_, _, _, err := schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: 40})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: err %v, want %q", tt.stmt, err, tt.want)
		}
	}
	// The record survives encoding.
	b := schema.AppendTable(nil, tbl)
	got, err := schema.DecodeTable(b)
	if err != nil || len(got.DroppedColumns()) != 2 || got.DroppedColumns()[1].Epoch != 77 {
		t.Fatalf("decode: %v %+v", err, got)
	}
}

// TestUse checks that USE qualifies the later statements of the same text
// and that Apply of USE changes nothing.
func TestUse(t *testing.T) {
	parsed, err := Parse(`CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE a; CREATE TABLE t (k int PRIMARY KEY, v text); CREATE TYPE u (x int); CREATE INDEX ON t (v);
ALTER TABLE t ADD w int; DROP INDEX t_v_idx; DROP TABLE other.t; USE "B"; DROP TYPE u`)
	if err != nil {
		t.Fatal(err)
	}
	var objects []string
	for _, p := range parsed {
		objects = append(objects, p.Statement.Kind()+" "+p.Statement.Object())
	}
	want := "CREATE KEYSPACE a|USE a|CREATE TABLE a.t|CREATE TYPE a.u|CREATE INDEX on a.t|ALTER TABLE a.t|DROP INDEX a.t_v_idx|DROP TABLE other.t|USE \"B\"|DROP TYPE \"B\".u"
	if got := strings.Join(objects, "|"); got != want {
		t.Fatalf("objects:\n got %s\nwant %s", got, want)
	}
	s, _, _, _ := schema.Apply(schema.Schema{}, parsed[0].Statement, schema.Env{Epoch: 1})
	ns, diff, res, err := schema.Apply(s, parsed[1].Statement, schema.Env{Epoch: 2})
	if err != nil || !diff.Empty() || res != (schema.Result{Kind: "USE", Keyspace: "a"}) || ns.Digest() != s.Digest() {
		t.Fatalf("USE: %v %+v %+v", err, diff, res)
	}
}

// TestDefaultIndexNames checks Cassandra's derived index names.
func TestDefaultIndexNames(t *testing.T) {
	s := mustParseApply(t, schema.Schema{}, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.t (k int, c int, v text, m map<text, int>, PRIMARY KEY (k, c));
CREATE TABLE ks.t_v (k int PRIMARY KEY, idx text);
CREATE INDEX ON ks.t (v);
CREATE INDEX t_v_idx_1 ON ks.t (c);
CREATE INDEX ON ks.t (keys(m));
CREATE INDEX ON ks.t (values(m));`, 1)
	k, _ := s.Keyspace("ks")
	var names []string
	for _, ix := range k.Indexes() {
		names = append(names, ix.Name+"="+ix.Target.String())
	}
	if got, want := strings.Join(names, " "), "t_m_idx=keys(m) t_m_idx_1=values(m) t_v_idx=v t_v_idx_1=c"; got != want {
		t.Fatalf("indexes %s, want %s", got, want)
	}
	ps, _ := Parse("CREATE INDEX ON ks.t_v (idx)")
	_, diff, res, err := schema.Apply(s, ps[0].Statement, schema.Env{Epoch: 9})
	if err != nil || res.Name != "t_v_idx_idx" || diff.Changes[0].Name != "t_v_idx_idx" || diff.Changes[0].Table != "t_v" {
		t.Fatalf("derived name: %v %+v %+v", err, res, diff)
	}
	// DROP TABLE drops its indexes first, in the diff too.
	ps, _ = Parse("DROP TABLE ks.t")
	ns, diff, _, err := schema.Apply(s, ps[0].Statement, schema.Env{Epoch: 10})
	if err != nil || len(diff.Changes) != 5 || diff.Changes[0].Op != schema.OpDropIndex || diff.Changes[4].Op != schema.OpDropTable {
		t.Fatalf("drop table: %v %+v", err, diff)
	}
	if k, _ := ns.Keyspace("ks"); len(k.Indexes()) != 0 || ns.Digest() != schema.ComputeDigest(ns) {
		t.Fatalf("indexes left after DROP TABLE: %v", k.Indexes())
	}
}
