package cql

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
)

// cassandraRulesBase is the schema every case of cassandraRules starts
// from, beyond rulesBase.
const cassandraRulesBase = `
CREATE TABLE ks.dropped (k int, c int, v int, s int static, PRIMARY KEY (k, c));
ALTER TABLE ks.dropped DROP v;
ALTER TABLE ks.dropped DROP s;
CREATE TABLE ks.counts (k int PRIMARY KEY, n counter, m counter);
ALTER TABLE ks.counts DROP m;
CREATE TABLE ks.wide (k int, k2 int, c int, v int, fl frozen<list<int>>, d duration, sp frozen<span>, loose addr, PRIMARY KEY ((k, k2), c));
CREATE INDEX wide_k2 ON ks.wide (k2);
CREATE TABLE ks.keyed (k frozen<addr>, c int, PRIMARY KEY (k, c));
CREATE TABLE ks.durations (k int PRIMARY KEY, ld list<duration>, td tuple<int, duration>)`

// cassandraRules lists the validation rules of Cassandra's schema
// statement classes (org.apache.cassandra.cql3.statements.schema, trunk),
// each with Cassandra's message and a statement that breaks it, and what
// metalog answers: a substring of its error, or "" for accepted. note says
// how metalog differs, when it does. docs/rules.md is made from this list
// (go test ./schema/cql -run TestCassandraRules -update).
var cassandraRules = []struct {
	class, cassandra, stmt, want, note string
}{
	// CreateKeyspaceStatement, AlterKeyspaceStatement, DropKeyspaceStatement.
	{"CreateKeyspaceStatement", "Keyspace '%s' already exists", "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", "keyspace already exists", ""},
	{"CreateKeyspaceStatement", "Unrecognized strategy option {%s} passed to SimpleStrategy", "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1, 'dc1': 2}", `unrecognized strategy option "dc1" for SimpleStrategy`, ""},
	{"CreateKeyspaceStatement", "Unable to use given strategy class: LocalStrategy is reserved for internal use.", "CREATE KEYSPACE k2 WITH replication = {'class': 'LocalStrategy'}", `unknown replication strategy class "LocalStrategy"`, ""},
	{"CreateKeyspaceStatement", "(4.1+: default_keyspace_rf applies when replication_factor is missing)", "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy'}", "SimpleStrategy requires the replication_factor option", "refused, as ScyllaDB does: a metadata log has no default_keyspace_rf to fill in"},
	{"CreateKeyspaceStatement", "(transient replication, when enabled in cassandra.yaml)", "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '3/1'}", "replication_factor must be a non-negative integer", "refused: transient replication is experimental and off by default in Cassandra"},
	{"CreateKeyspaceStatement", "Keyspace names must be ... alphanumeric characters and underscores", `CREATE KEYSPACE "a b" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, "1 to 48 characters of [A-Za-z0-9_]", ""},
	{"AlterKeyspaceStatement", "Keyspace '%s' doesn't exist", "ALTER KEYSPACE nope WITH durable_writes = false", "keyspace does not exist", ""},
	{"DropKeyspaceStatement", "Keyspace '%s' doesn't exist", "DROP KEYSPACE nope", "keyspace does not exist", ""},

	// CreateTableStatement.
	{"CreateTableStatement", "Keyspace '%s' doesn't exist", "CREATE TABLE nope.t (k int PRIMARY KEY)", "keyspace nope does not exist", ""},
	{"CreateTableStatement", "Table %s.%s already exists", "CREATE TABLE ks.t (k int PRIMARY KEY)", "table already exists", ""},
	{"CreateTableStatement", "Non-frozen UDTs with nested non-frozen collections are not supported", "CREATE TABLE ks.n (k int PRIMARY KEY, b bag)", "non-frozen user type bag has a non-frozen collection field items", ""},
	{"CreateTableStatement", "Unknown column '%s' referenced in PRIMARY KEY for table '%s'", "CREATE TABLE ks.n (k int, PRIMARY KEY (k, z))", "unknown column z in PRIMARY KEY", ""},
	{"CreateTableStatement", "Duplicate column '%s' in PRIMARY KEY clause for table '%s'", "CREATE TABLE ks.n (k int, PRIMARY KEY (k, k))", "column k appears twice in the PRIMARY KEY", ""},
	{"CreateTableStatement", "Invalid non-frozen collection type %s for PRIMARY KEY column '%s'", "CREATE TABLE ks.n (k list<int> PRIMARY KEY)", "non-frozen collection column k cannot be part of the PRIMARY KEY", ""},
	{"CreateTableStatement", "Invalid non-frozen user-defined type %s for PRIMARY KEY column '%s'", "CREATE TABLE ks.n (k addr PRIMARY KEY)", "non-frozen user type column k cannot be part of the PRIMARY KEY", ""},
	{"CreateTableStatement", "counter type is not supported for PRIMARY KEY column '%s'", "CREATE TABLE ks.n (k counter PRIMARY KEY)", "counter column k cannot be part of the PRIMARY KEY", ""},
	{"CreateTableStatement", "duration type is not supported for PRIMARY KEY column '%s'", "CREATE TABLE ks.n (k duration PRIMARY KEY)", "duration column k cannot be part of the PRIMARY KEY", ""},
	{"CreateTableStatement", "duration type is not supported for PRIMARY KEY column '%s' (inside a user type)", "CREATE TABLE ks.n (k frozen<span> PRIMARY KEY)", "its user type holds a duration", ""},
	{"CreateTableStatement", "Static column '%s' cannot be part of the PRIMARY KEY", "CREATE TABLE ks.n (k int, c int static, PRIMARY KEY (k, c))", "static column c cannot be part of the PRIMARY KEY", ""},
	{"CreateTableStatement", "Only clustering columns can be defined in CLUSTERING ORDER directive", "CREATE TABLE ks.n (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (v DESC)", "names v, which is not a clustering column", ""},
	{"CreateTableStatement", "The order of columns in the CLUSTERING ORDER directive must match that of the clustering columns", "CREATE TABLE ks.n (k int, c int, d int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (d DESC, c ASC)", "must list the clustering columns in key order", ""},
	{"CreateTableStatement", "Missing CLUSTERING ORDER for column %s", "CREATE TABLE ks.n (k int, c int, d int, PRIMARY KEY (k, c, d)) WITH CLUSTERING ORDER BY (d DESC)", "must list the clustering columns in key order: expected c, found d", ""},
	{"CreateTableStatement", "Static columns are only useful (and thus allowed) if the table has at least one clustering column", "CREATE TABLE ks.n (k int PRIMARY KEY, s int static)", "static columns are only allowed in tables with clustering columns", ""},
	{"CreateTableStatement", "Cannot mix counter and non counter columns in the same table", "CREATE TABLE ks.n (k int PRIMARY KEY, n counter, v int)", "cannot mix counter and non-counter columns", ""},
	{"CreateTableStatement", "Cannot set default_time_to_live on a table with counters", "CREATE TABLE ks.n (k int PRIMARY KEY, n counter) WITH default_time_to_live = 5", "cannot set default_time_to_live on a table with counters", ""},
	{"CreateTableStatement", "Compact tables are not allowed in Cassandra starting with 4.0 version", "CREATE TABLE ks.n (k int PRIMARY KEY, v int) WITH COMPACT STORAGE", "COMPACT STORAGE is not supported", ""},
	{"TableParams", "default_time_to_live must be less than or equal to %d (got %s)", "CREATE TABLE ks.n (k int PRIMARY KEY) WITH default_time_to_live = 630720001", "must be between 0 and 630720000", ""},
	{"TableParams", "gc_grace_seconds must be greater than or equal to 0 (got %s)", "CREATE TABLE ks.n (k int PRIMARY KEY) WITH gc_grace_seconds = -1", "must be between 0 and 2147483647", ""},
	{"TableParams", "bloom_filter_fp_chance must be larger than %s and less than or equal to 1.0 (got %s)", "CREATE TABLE ks.n (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 0", "must be greater than 0 and at most 1", ""},
	{"TableParams", "crc_check_chance must be larger than 0.0 and less than or equal to 1.0 (got %s)", "CREATE TABLE ks.n (k int PRIMARY KEY) WITH crc_check_chance = 2", "must be between 0 and 1", ""},
	{"TableParams", "max_index_interval must be greater than or equal to min_index_interval", "CREATE TABLE ks.n (k int PRIMARY KEY) WITH min_index_interval = 256 AND max_index_interval = 128", "max_index_interval (128) must be greater than or equal to min_index_interval (256)", ""},
	{"CompactionParams", "min_threshold must be at least 2", "CREATE TABLE ks.n (k int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'min_threshold': 1}", "min_threshold must be an integer of at least 2", ""},
	{"CreateTableStatement (types)", "Counters are not allowed inside collections", "CREATE TABLE ks.n (k int PRIMARY KEY, v list<counter>)", "counters are not allowed inside collections, tuples or vectors", ""},
	{"CreateTableStatement (types)", "Durations are not allowed inside sets / as map keys", "CREATE TABLE ks.n (k int PRIMARY KEY, v set<duration>)", "durations are not allowed in set elements", ""},
	{"CreateTableStatement (types)", "Non-frozen collections are not allowed inside collections", "CREATE TABLE ks.n (k int PRIMARY KEY, v list<list<int>>)", "non-frozen collections are not allowed inside collections", ""},
	{"CreateTableStatement (types)", "frozen<> is only allowed on collections, tuples, and user-defined types", "CREATE TABLE ks.n (k int PRIMARY KEY, v frozen<int>)", "frozen<> is only allowed on collections, tuples and user types", ""},
	{"CreateTableStatement (types)", "Statement on keyspace %s cannot refer to a user type in keyspace %s", "CREATE TABLE ks.n (k int PRIMARY KEY, v other.addr)", "user types can only be used in the keyspace they are defined in", ""},

	// AlterTableStatement.
	{"AlterTableStatement", "Table '%s.%s' doesn't exist", "ALTER TABLE ks.nope ADD x int", "table does not exist", ""},
	{"AlterTableStatement.AlterColumn", "Altering column types is no longer supported", "ALTER TABLE ks.t ALTER v TYPE blob", "ALTER TABLE ... ALTER column TYPE is not supported", ""},
	{"AlterTableStatement.AddColumns", "Column with name '%s' already exists", "ALTER TABLE ks.t ADD v int", "column v already exists", ""},
	{"AlterTableStatement.AddColumns", "Static columns are only useful (and thus allowed) if the table has at least one clustering column", "ALTER TABLE ks.simple ADD s int static", "static columns are only allowed in tables with clustering columns", ""},
	{"AlterTableStatement.AddColumns", "Non-frozen UDTs with nested non-frozen collections are not supported for column %s", "ALTER TABLE ks.t ADD nb bag", "non-frozen user type bag has a non-frozen collection field items", ""},
	{"AlterTableStatement.AddColumns", "Cannot re-add previously dropped column '%s' of type %s, incompatible with previous type %s", "ALTER TABLE ks.dropped ADD v text", "cannot re-add previously dropped column v of type text, incompatible with previous type int", ""},
	{"AlterTableStatement.AddColumns", "Cannot re-add previously dropped column '%s' of kind %s, incompatible with previous kind %s", "ALTER TABLE ks.dropped ADD v int static", "cannot re-add previously dropped column v of kind STATIC, incompatible with previous kind REGULAR", ""},
	{"AlterTableStatement.AddColumns", "Cannot re-add previously dropped column '%s' of kind %s, incompatible with previous kind %s", "ALTER TABLE ks.dropped ADD s int", "cannot re-add previously dropped column s of kind REGULAR, incompatible with previous kind STATIC", "a column dropped before metalog kept kinds (by an entry without a rules version) is accepted as either kind"},
	{"AlterTableStatement.AddColumns", "Cannot re-add previously dropped counter column %s", "ALTER TABLE ks.counts ADD m counter", "cannot re-add previously dropped counter column m", ""},
	{"AlterTableStatement.DropColumns", "Column %s was not found in table '%s'", "ALTER TABLE ks.t DROP zz", "column zz does not exist", ""},
	{"AlterTableStatement.DropColumns", "Cannot drop PRIMARY KEY column %s", "ALTER TABLE ks.t DROP k", "cannot drop PRIMARY KEY column k", ""},
	{"AlterTableStatement.DropColumns", "Cannot drop non-frozen column %s of user type %s", "ALTER TABLE ks.wide DROP loose", "cannot drop non-frozen column loose of user type addr", ""},
	{"AlterTableStatement.DropColumns", "Cannot drop column %s because it has dependent secondary indexes (%s)", "ALTER TABLE ks.t DROP v", "cannot drop column v: index t_v_idx depends on it", ""},
	{"AlterTableStatement.RenameColumns", "Column %s was not found in table %s", "ALTER TABLE ks.t RENAME zz TO w", "column zz does not exist", ""},
	{"AlterTableStatement.RenameColumns", "Cannot rename non PRIMARY KEY column %s", "ALTER TABLE ks.t RENAME v TO w", "cannot rename non PRIMARY KEY column v", ""},
	{"AlterTableStatement.RenameColumns", "Cannot rename column %s to %s in table '%s'; another column with that name already exists", "ALTER TABLE ks.t RENAME k TO c", "cannot rename column k to c: a column of that name exists", ""},
	{"AlterTableStatement.RenameColumns", "Cannot rename column %s because it has dependent secondary indexes (%s)", "ALTER TABLE ks.wide RENAME k2 TO kk", "cannot rename column k2: index wide_k2 depends on it", ""},
	{"AlterTableStatement.AlterOptions", "Cannot set default_time_to_live on a table with counters", "ALTER TABLE ks.cnt WITH default_time_to_live = 4", "cannot set default_time_to_live on a table with counters", ""},
	{"AlterTableStatement.DropCompactStorage", "Cannot DROP COMPACT STORAGE on table without COMPACT STORAGE", "ALTER TABLE ks.t DROP COMPACT STORAGE", "DROP COMPACT STORAGE is not supported", "refused for every table: metalog has no COMPACT STORAGE tables"},
	{"DropTableStatement", "Table '%s.%s' doesn't exist", "DROP TABLE ks.nope", "table does not exist", ""},

	// CreateTypeStatement, AlterTypeStatement, DropTypeStatement.
	{"CreateTypeStatement", "Keyspace '%s' doesn't exist", "CREATE TYPE nope.x (a int)", "keyspace nope does not exist", ""},
	{"CreateTypeStatement", "A user type with name '%s' already exists", "CREATE TYPE ks.addr (a int)", "type already exists", ""},
	{"CreateTypeStatement", "Duplicate field name '%s' in type '%s'", "CREATE TYPE ks.x (a int, a text)", "duplicate field name a", ""},
	{"CreateTypeStatement", "A user type cannot contain counters", "CREATE TYPE ks.x (a counter)", "a user type cannot contain counters", ""},
	{"CreateTypeStatement", "A user type cannot contain non-frozen UDTs", "CREATE TYPE ks.x (a addr)", "a user type cannot contain non-frozen user types", ""},
	{"CreateTypeStatement", "Unknown type %s", "CREATE TYPE ks.x (a int, b frozen<nosuch>)", "unknown type ks.nosuch", ""},
	{"AlterTypeStatement", "Type %s.%s doesn't exist", "ALTER TYPE ks.nope ADD b int", "type does not exist", ""},
	{"AlterTypeStatement.AddField", "Cannot add field %s to type %s: a field with name %s already exists", "ALTER TYPE ks.addr ADD zip int", "field zip already exists", ""},
	{"AlterTypeStatement.AddField", "Cannot add new field %s of type %s to user type %s as it would create a circular reference", "ALTER TYPE ks.addr ADD me frozen<person>", "it would make type addr refer to itself", ""},
	{"AlterTypeStatement.AddField", "Cannot add new field %s of type %s to user type %s as the type is being used in partition key by the following tables: %s", "ALTER TYPE ks.addr ADD country text", "the type is used in the partition key column k of table ks.keyed", ""},
	{"AlterTypeStatement.RenameFields", "Unkown field %s in user type %s", "ALTER TYPE ks.addr RENAME nope TO x", "unknown field nope", ""},
	{"AlterTypeStatement.RenameFields", "Duplicate field name %s in type %s", "ALTER TYPE ks.addr RENAME street TO zip", "cannot rename field street to zip: a field of that name exists", ""},
	{"AlterTypeStatement.RenameFields", "(a rename of a field of a type in a partition key is allowed)", "ALTER TYPE ks.addr RENAME street TO road", "", ""},
	{"AlterTypeStatement.AlterField", "Altering field types is no longer supported", "ALTER TYPE ks.addr ALTER zip TYPE text", "ALTER TYPE ... ALTER field TYPE is not supported", ""},
	{"DropTypeStatement", "Type '%s.%s' doesn't exist", "DROP TYPE ks.nope", "type does not exist", ""},
	{"DropTypeStatement", "Cannot drop user type '%s.%s' as it is still used by user types %s", "DROP TYPE ks.addr", "type is still used by", ""},
	{"DropTypeStatement", "Cannot drop user type '%s.%s' as it is still used by tables %s", "DROP TYPE ks.bag", "", "accepted: no table uses bag"},

	// CreateIndexStatement, DropIndexStatement.
	{"CreateIndexStatement", "Table '%s.%s' doesn't exist", "CREATE INDEX ON ks.nope (v)", "table ks.nope does not exist", ""},
	{"CreateIndexStatement", "Column '%s' doesn't exist", "CREATE INDEX ON ks.wide (zz)", "column zz does not exist", ""},
	{"CreateIndexStatement", "Secondary indexes are not supported on counter tables", "CREATE INDEX ON ks.cnt (n)", "secondary indexes are not supported on counter tables", ""},
	{"CreateIndexStatement", "Only CUSTOM indexes support multiple columns", "CREATE INDEX ON ks.wide (c, v)", "indexes on several columns are not supported", "refused for custom indexes too"},
	{"CreateIndexStatement", "Secondary indexes are not supported on duration columns", "CREATE INDEX ON ks.wide (d)", "secondary indexes are not supported on duration columns", ""},
	{"CreateIndexStatement", "Secondary indexes are not supported on collections containing durations", "CREATE INDEX ON ks.durations (ld)", "secondary indexes are not supported on collections containing durations", ""},
	{"CreateIndexStatement", "Secondary indexes are not supported on tuples containing durations", "CREATE INDEX ON ks.durations (td)", "secondary indexes are not supported on tuples containing durations", ""},
	{"CreateIndexStatement", "Secondary indexes are not supported on UDTs containing durations", "CREATE INDEX ON ks.wide (sp)", "secondary indexes are not supported on UDTs containing durations (column sp)", ""},
	{"CreateIndexStatement", "Cannot create secondary index on the only partition key column %s", "CREATE INDEX ON ks.simple (id)", "cannot create a secondary index on the only partition key column id", ""},
	{"CreateIndexStatement", "Cannot create %s() index on frozen column %s. Frozen collections are immutable and must be fully indexed by using the 'full(%s)' modifier", "CREATE INDEX ON ks.wide (fl)", "cannot create an index on frozen collection fl except with full(fl)", ""},
	{"CreateIndexStatement", "full() indexes can only be created on frozen collections", "CREATE INDEX ON ks.wide (full(v))", "full() indexes are only supported on frozen collections", ""},
	{"CreateIndexStatement", "Cannot create index on %s of column %s with non-map type", "CREATE INDEX ON ks.t (keys(l))", "keys() indexes are only supported on non-frozen maps", ""},
	{"CreateIndexStatement", "Cannot create index on non-frozen UDT column %s", "CREATE INDEX ON ks.wide (loose)", "secondary indexes are not supported on non-frozen user types: loose", ""},
	{"CreateIndexStatement", "Index %s is a duplicate of existing index %s", "CREATE INDEX dup ON ks.t (v)", "is a duplicate of existing index t_v_idx", ""},
	{"CreateIndexStatement", "Index '%s' already exists", "CREATE INDEX t_v_idx ON ks.simple (v)", "index already exists", ""},
	{"DropIndexStatement", "Index '%s.%s' doesn't exist", "DROP INDEX ks.nope", "index does not exist", ""},
}

// TestCassandraRules runs every case of cassandraRules as the server takes a
// new request (parse, schema.Admit, schema.Apply, schema.AdmitChange) and
// checks metalog's answer, then that docs/rules.md lists them all.
func TestCassandraRules(t *testing.T) {
	base := mustParseApplyRules(t, schema.Schema{}, rulesBase+";"+cassandraRulesBase, 1, schema.CurrentRules)
	for _, tc := range cassandraRules {
		err := admitAndApply(base, tc.stmt)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %s: refused (%v), want it accepted", tc.class, tc.stmt, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %s: %v, want an error with %q", tc.class, tc.stmt, err, tc.want)
		}
	}
	text := rulesDoc()
	const path = "../../docs/rules.md"
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != text {
		t.Errorf("docs/rules.md is not what cassandraRules makes: run go test ./schema/cql -run TestCassandraRules -update")
	}
}

// admitAndApply takes the one statement text as the server takes a new
// request on s, and returns its error.
func admitAndApply(s schema.Schema, text string) error {
	parsed, err := Parse(text)
	if err != nil {
		return err
	}
	st := parsed[0].Statement
	if err := schema.Admit(st); err != nil {
		return err
	}
	ns, _, res, err := schema.Apply(s, st, schema.Env{Epoch: 1000, Rules: schema.CurrentRules})
	if err != nil {
		return err
	}
	return schema.AdmitChange(s, ns, st, res)
}

// rulesDoc renders cassandraRules as docs/rules.md.
func rulesDoc() string {
	var b strings.Builder
	b.WriteString(`# Cassandra's schema rules in metalog

Each row is a validation rule of one of Cassandra's schema statement
classes (` + "`org.apache.cassandra.cql3.statements.schema`" + `, trunk), with
Cassandra's message, a statement that breaks it, and what metalog answers.
The rows are made from the cases of ` + "`schema/cql/cassandra_rules_test.go`" + `, which
runs each statement as the server takes a new request; a change to a rule
fails that test until this page is made again (` + "`go test ./schema/cql -run\nTestCassandraRules -update`" + `). Grammar rules are in [cql.md](cql.md);
rules that only guardrails enforce are in the README's guardrails section.

| Cassandra class | Cassandra's message | Statement | metalog | Differs |
| --- | --- | --- | --- | --- |
`)
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, tc := range cassandraRules {
		answer := "accepted"
		if tc.want != "" {
			answer = "`" + esc(tc.want) + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s |\n", tc.class, esc(tc.cassandra), esc(tc.stmt), answer, esc(tc.note))
	}
	return b.String()
}
