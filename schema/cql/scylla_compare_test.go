package cql

import (
	"os"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

// The ScyllaDB comparison runs the schema behaviours that ScyllaDB's CQL
// conformance files (scylladb/scylladb test/cql/*.cql with their expected
// *.result) check, one case per behaviour, through metalog as a server
// applies a new request: cql.Parse, schema.Admit, schema.Apply,
// schema.AdmitChange and guardrails.Check with scyllaGuardrails.
// Statements are written anew here (other names, the same CQL form); the
// comment above each case names the ScyllaDB file it comes from.
// docs/scylla.md has the table of cases and why the outcomes differ where
// they do.

// Why metalog's outcome differs from ScyllaDB's (scyllaCase.why).
const (
	// whyCassandra: metalog follows Cassandra, which decides otherwise
	// than ScyllaDB.
	whyCassandra = "cassandra"
	// whyScyllaOnly: the form is a ScyllaDB extension Cassandra does not
	// have (a property, an option value, a table ScyllaDB makes itself);
	// metalog takes Cassandra's form.
	whyScyllaOnly = "scylla-only"
	// whyStricter: metalog refuses what both ScyllaDB and Cassandra take.
	whyStricter = "stricter"
	// whyGap: ScyllaDB refuses on a safety rule that metalog does not
	// check; the case has gap set and asserts today's behaviour.
	whyGap = "gap"
)

// scyllaCase is one schema behaviour of ScyllaDB's files.
type scyllaCase struct {
	name string
	// setup runs first, on a schema holding keyspace sc (SimpleStrategy,
	// factor 1) and with USE sc, as ScyllaDB's harness gives every file;
	// a setup with its own USE moves the statement to that keyspace. Every
	// setup statement must apply.
	setup string
	// stmt is the statement whose outcome is compared.
	stmt string
	// scylla is ScyllaDB's outcome: accept, or its error message.
	scylla string
	// want is metalog's outcome: accept, or a substring of its error.
	want string
	// why says why the outcomes differ; empty when both accept or both
	// refuse.
	why string
	// gap marks a ScyllaDB refusal metalog should learn (why is whyGap).
	gap bool
}

var scyllaCases = []scyllaCase{
	// cassandra_batch_test
	{name: "SimpleStrategy keyspace, USE, unqualified table",
		setup: "CREATE KEYSPACE b1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE b1",
		stmt:  "CREATE TABLE users (id text PRIMARY KEY, name text, secret text)", scylla: accept, want: accept},
	// cassandra_batch_test
	{name: "table dropped and created again under the same name",
		setup: "CREATE TABLE t (k int PRIMARY KEY, l list<int>); DROP TABLE t",
		stmt:  "CREATE TABLE t (k int, v int, PRIMARY KEY (k, v))", scylla: accept, want: accept},
	// cassandra_batch_test
	{name: "mixed-case unquoted column names",
		stmt:   "CREATE TABLE t (partKey int, clust_1 int, val int, PRIMARY KEY (partKey, clust_1))",
		scylla: accept, want: accept},
	// cassandra_batch_test
	{name: "DROP KEYSPACE holding tables",
		setup: "CREATE KEYSPACE b2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE TABLE b2.t1 (k int PRIMARY KEY); CREATE TABLE b2.t2 (k int PRIMARY KEY)",
		stmt:  "DROP KEYSPACE b2", scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "CREATE KEYSPACE with DURABLE_WRITES",
		stmt:   "CREATE KEYSPACE c1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND DURABLE_WRITES = true",
		scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "ALTER KEYSPACE from SimpleStrategy to NetworkTopologyStrategy",
		setup: "CREATE KEYSPACE c2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		stmt:  "ALTER KEYSPACE c2 WITH replication = { 'class' : 'NetworkTopologyStrategy', 'datacenter1' : 1 }", scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "ALTER TABLE ADD",
		setup: "CREATE TABLE t (k int PRIMARY KEY, a int)",
		stmt:  "ALTER TABLE t ADD b int", scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "WITH COMPACT STORAGE",
		stmt:   "CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c)) WITH COMPACT STORAGE",
		scylla: accept, want: "COMPACT STORAGE is not supported", why: whyCassandra},
	// cassandra_cql_test
	{name: "named index on a regular column",
		setup: "CREATE TABLE t (k int PRIMARY KEY, a int, b int)",
		stmt:  "CREATE INDEX t_a ON t (a)", scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "ALTER TYPE ADD of a type used in a regular column",
		setup: "CREATE TYPE place (road text, town text, code int); CREATE TABLE t (id int PRIMARY KEY, p frozen<place>)",
		stmt:  "ALTER TYPE place ADD phones set<text>", scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "DROP TYPE once the table using it is dropped",
		setup: "CREATE TYPE place (road text); CREATE TABLE t (id int PRIMARY KEY, p frozen<place>); DROP TABLE t",
		stmt:  "DROP TYPE place", scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "type name as a column name",
		stmt:   "CREATE TABLE t (kind text, time int, v int, PRIMARY KEY (kind, time))",
		scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "CREATE TABLE IF NOT EXISTS with a composite partition key",
		stmt:   "CREATE TABLE IF NOT EXISTS t (k1 int, k2 int, c int, v int, PRIMARY KEY ((k1, k2), c))",
		scylla: accept, want: accept},
	// cassandra_cql_test
	{name: "two static columns, a 47-character table name",
		stmt:   "CREATE TABLE " + strings.Repeat("s", 47) + " (a int, b int, s1 int static, s2 int static, v int, PRIMARY KEY (a, b))",
		scylla: accept, want: accept},
	// cdc_allow_dropping_manually_created_log_test
	{name: "a table named like a CDC log table, created and dropped by hand",
		setup: "CREATE TABLE sc.orders_scylla_cdc_log (pk int PRIMARY KEY)",
		stmt:  "DROP TABLE sc.orders_scylla_cdc_log", scylla: accept, want: accept},
	// cdc_batch_delete_postimage_test (and lwt_list_test, vs*_test)
	{name: "keyspace property tablets",
		stmt:   "CREATE KEYSPACE c3 WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1} AND tablets = {'enabled': false}",
		scylla: accept, want: `unknown keyspace property "tablets"`, why: whyScyllaOnly},
	// cdc_batch_delete_postimage_test (and cdc_batch_delete_postimage, the
	// same file before its rename, cdc_static_and_clustered_rows_test,
	// cdc_too_short_stream_id_test, cdc_with_lwt_test)
	{name: "cdc given as ScyllaDB's option map",
		stmt:   "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck)) WITH cdc = {'enabled': true, 'preimage': true, 'postimage': true}",
		scylla: accept, want: "property cdc: must be true or false", why: whyScyllaOnly},
	// cdc_batch_delete_postimage_test: the same table with Cassandra's
	// boolean cdc.
	{name: "cdc given as Cassandra's boolean",
		stmt:   "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck)) WITH cdc = true",
		scylla: accept, want: accept},
	// cdc_with_lwt_test_full_preimage
	{name: "cdc map with preimage full",
		stmt:   "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck)) WITH cdc = {'enabled': true, 'preimage': 'full'}",
		scylla: accept, want: "property cdc: must be true or false", why: whyScyllaOnly},
	// cdc_compact_storage_test
	{name: "COMPACT STORAGE without regular columns, with cdc",
		stmt:   "CREATE TABLE t (pk int, ck int, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE AND cdc = {'enabled': true}",
		scylla: accept, want: "COMPACT STORAGE is not supported", why: whyCassandra},
	// cdc_delta_modes_test: ScyllaDB refuses the map for another reason
	// (no image and no delta).
	{name: "cdc map with every image and the delta off",
		stmt:   "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck)) WITH cdc = {'enabled': true, 'preimage': false, 'postimage': false, 'delta': 'off'}",
		scylla: "Invalid combination of CDC options: neither of {preimage, postimage, delta} is enabled",
		want:   "property cdc: must be true or false"},
	// cdc_delta_modes_test
	{name: "ALTER TABLE WITH a cdc map",
		setup: "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck))",
		stmt:  "ALTER TABLE t WITH cdc = {'enabled': true, 'preimage': true, 'postimage': true, 'delta': 'keys'}", scylla: accept,
		want: "property cdc: must be true or false", why: whyScyllaOnly},
	// cdc_enable_disable_test, with Cassandra's boolean.
	{name: "cdc turned off and on again by ALTER TABLE",
		setup: "CREATE TABLE t (pk int, ck int, v int, PRIMARY KEY (pk, ck)) WITH cdc = true; ALTER TABLE t WITH cdc = false; ALTER TABLE t ADD v2 text",
		stmt:  "ALTER TABLE t WITH cdc = true", scylla: accept, want: accept},
	// cdc_enable_disable_test
	{name: "ALTER TABLE DROP of a regular column",
		setup: "CREATE TABLE t (pk int, ck int, v int, v2 text, PRIMARY KEY (pk, ck))",
		stmt:  "ALTER TABLE t DROP v", scylla: accept, want: accept},
	// cdc_disallow_cdc_for_counters_test: both refuse, metalog for the
	// map form.
	{name: "counter table WITH a cdc map",
		stmt:   "CREATE TABLE t (pk int PRIMARY KEY, n counter) WITH cdc = {'enabled': true}",
		scylla: "Cannot create CDC log for table sc.t. Counter support not implemented",
		want:   "property cdc: must be true or false"},
	// cdc_disallow_cdc_for_counters_test, with Cassandra's boolean:
	// Cassandra has no such rule, and ScyllaDB has since dropped it
	// (cdc_with_counters_test).
	{name: "counter table WITH cdc = true",
		stmt:   "CREATE TABLE t (pk int PRIMARY KEY, n counter) WITH cdc = true",
		scylla: "Cannot create CDC log for table sc.t. Counter support not implemented",
		want:   accept, why: whyCassandra},
	// cdc_disallow_cdc_for_counters_test, with Cassandra's boolean.
	{name: "ALTER TABLE WITH cdc = true on a counter table",
		setup: "CREATE TABLE t (pk int PRIMARY KEY, n counter)",
		stmt:  "ALTER TABLE t WITH cdc = true", scylla: "Cannot create CDC log for table sc.t. Counter support not implemented",
		want: accept, why: whyCassandra},
	// cdc_with_counters_test, with Cassandra's boolean.
	{name: "static and regular counters WITH cdc = true",
		stmt:   "CREATE TABLE t (pk int, ck int, cs counter static, c counter, PRIMARY KEY (pk, ck)) WITH cdc = true",
		scylla: accept, want: accept},
	// cdc_disallow_cdc_for_counters_test (and counters_disallow_ttl_test)
	{name: "ALTER TABLE ADD (counter) to a non-counter table",
		setup: "CREATE TABLE t (pk int PRIMARY KEY) WITH cdc = true",
		stmt:  "ALTER TABLE t ADD (n counter)", scylla: "Cannot add a counter column (n) in a non counter column family",
		want: "cannot add counter column n to a non-counter table"},
	// cdc_disallow_materialized_view_for_cdc_log_test
	{name: "materialized view on a CDC log table",
		setup:  "CREATE TABLE t (pk int PRIMARY KEY, v int)",
		stmt:   "CREATE MATERIALIZED VIEW t_mv AS SELECT * FROM t_scylla_cdc_log WHERE v IS NOT NULL PRIMARY KEY (v)",
		scylla: "Materialized views cannot be created on CDC Log tables",
		want:   "Base table 't_scylla_cdc_log' doesn't exist"},
	// cdc_disallow_nested_cdc_logs_test, with Cassandra's boolean: in
	// Cassandra (and metalog) no table is a CDC log, so the name is an
	// ordinary one.
	{name: "cdc on a table named like a CDC log table",
		setup:  "CREATE TABLE events (pk int PRIMARY KEY) WITH cdc = true; CREATE TABLE events_scylla_cdc_log (pk int PRIMARY KEY)",
		stmt:   "ALTER TABLE events_scylla_cdc_log WITH cdc = true",
		scylla: "Cannot create a CDC log for a table sc.events_scylla_cdc_log, because creating nested CDC logs is not allowed",
		want:   accept, why: whyScyllaOnly},
	// counters_test (and lwt_batch_test, lwt_test)
	{name: "counter table",
		stmt:   "CREATE TABLE t (pk int PRIMARY KEY, c1 counter)",
		scylla: accept, want: accept},
	// counters_disallow_ttl_test
	{name: "counter table WITH default_time_to_live",
		stmt:   "CREATE TABLE t (pk int PRIMARY KEY, n counter) WITH default_time_to_live = 100",
		scylla: "Cannot set default_time_to_live on a table with counters",
		want:   "cannot set default_time_to_live on a table with counters"},
	// counters_disallow_ttl_test
	{name: "ALTER TABLE WITH default_time_to_live on a counter table",
		setup: "CREATE TABLE t (pk int PRIMARY KEY, n counter)",
		stmt:  "ALTER TABLE t WITH default_time_to_live = 100", scylla: "Cannot set default_time_to_live on a table with counters",
		want: "cannot set default_time_to_live on a table with counters"},
	// counters_disallow_ttl_test
	{name: "non-counter table WITH default_time_to_live",
		stmt:   "CREATE TABLE t (pk int PRIMARY KEY) WITH default_time_to_live = 100",
		scylla: accept, want: accept},
	// counters_disallow_ttl_test
	{name: "ALTER TABLE ADD (counter) to a table with a TTL",
		setup: "CREATE TABLE t (pk int PRIMARY KEY) WITH default_time_to_live = 100",
		stmt:  "ALTER TABLE t ADD (n counter)", scylla: "Cannot add a counter column (n) in a non counter column family",
		want: "cannot add counter column n to a non-counter table"},
	// counters_disallow_ttl_test
	{name: "static counter only, WITH default_time_to_live",
		stmt:   "CREATE TABLE t (pk int, ck int, cs counter static, PRIMARY KEY (pk, ck)) WITH default_time_to_live = 100",
		scylla: "Cannot set default_time_to_live on a table with counters",
		want:   "cannot set default_time_to_live on a table with counters"},
	// error_injection_api_test
	{name: "ascii columns, a column named name",
		stmt:   "CREATE TABLE t (name ascii PRIMARY KEY, once ascii)",
		scylla: accept, want: accept},
	// forbid_adding_to_udt_used_in_partkey_test
	{name: "ALTER TYPE ADD of a type that is the partition key",
		setup: "CREATE TYPE u (a int); CREATE TABLE t (pk frozen<u> PRIMARY KEY)",
		stmt:  "ALTER TYPE u ADD b int", scylla: "Cannot add new field to type sc.u because it is used in the partition key column pk of table sc.t",
		want: "the type is used in the partition key column pk of table sc.t"},
	// forbid_adding_to_udt_used_in_partkey_test
	{name: "ALTER TYPE ADD once the key table is dropped",
		setup: "CREATE TYPE u (a int); CREATE TABLE t (pk frozen<u> PRIMARY KEY); DROP TABLE t",
		stmt:  "ALTER TYPE u ADD c int", scylla: accept, want: accept},
	// forbid_adding_to_udt_used_in_partkey_test
	{name: "ALTER TYPE ADD of a type inside a frozen list partition key",
		setup: "CREATE TYPE u (a int); CREATE TABLE t2 (pk frozen<list<frozen<u>>> PRIMARY KEY)",
		stmt:  "ALTER TYPE u ADD d int", scylla: "Cannot add new field to type sc.u because it is used in the partition key column pk of table sc.t2",
		want: "the type is used in the partition key column pk of table sc.t2"},
	// list_test (and lwt_list_test)
	{name: "type names in upper case",
		stmt:   "CREATE TABLE t (pk INT PRIMARY KEY, l LIST<INT>)",
		scylla: accept, want: accept},
	// locator_test: Cassandra refuses it too (same message). metalog does
	// not know the cluster's data centres.
	{name: "NetworkTopologyStrategy naming an unknown data centre",
		stmt:   "CREATE KEYSPACE l1 WITH REPLICATION = { 'class' : 'NetworkTopologyStrategy', 'nodc' : 3 } AND DURABLE_WRITES = true",
		scylla: "Unrecognized strategy option {nodc} passed to org.apache.cassandra.locator.NetworkTopologyStrategy for keyspace l1",
		want:   accept, why: whyGap, gap: true},
	// locator_test
	{name: "NetworkTopologyStrategy with a factor per data centre",
		stmt:   "CREATE KEYSPACE l1 WITH REPLICATION = { 'class' : 'NetworkTopologyStrategy', 'datacenter1' : 3 } AND DURABLE_WRITES = true",
		scylla: accept, want: accept},
	// locator_test: Cassandra takes 0 too (a keyspace without replicas).
	{name: "SimpleStrategy with replication_factor 0",
		stmt:   "CREATE KEYSPACE l2 WITH REPLICATION = { 'class' : 'SimpleStrategy', 'replication_factor' : 0 } AND DURABLE_WRITES = true",
		scylla: accept, want: accept},
	// locator_test
	{name: "index named like its column",
		setup: "CREATE TABLE t (a int PRIMARY KEY, b int)",
		stmt:  "CREATE INDEX b ON t (b)", scylla: accept, want: accept},
	// locator_test
	{name: "materialized view restricting a regular column",
		setup: "CREATE TABLE t (a int PRIMARY KEY, b int)",
		stmt:  "CREATE MATERIALIZED VIEW mv AS SELECT a, b FROM t WHERE b > 1 PRIMARY KEY (b, a)", scylla: accept,
		want: "Primary key columns a must be restricted with 'IS NOT NULL' or otherwise", why: whyCassandra},
	// locator_test
	{name: "DROP MATERIALIZED VIEW",
		stmt:   "DROP MATERIALIZED VIEW sc.mv",
		scylla: accept, want: "materialized view does not exist", why: whyCassandra},
	// lua_test
	{name: "a column named key",
		stmt:   "CREATE TABLE t (key int PRIMARY KEY)",
		scylla: accept, want: accept},
	// lua_test: Cassandra has no lua (Java only).
	{name: "CREATE FUNCTION in lua",
		stmt:   "CREATE FUNCTION sc.f(val int) CALLED ON NULL INPUT RETURNS list<varint> LANGUAGE lua AS 'return {1,2,3}'",
		scylla: accept, want: "Currently only Java UDFs are available in Cassandra", why: whyScyllaOnly},
	// lua_test: the function it drops is the lua one, which only
	// ScyllaDB created.
	{name: "DROP FUNCTION without argument types",
		stmt:   "DROP FUNCTION sc.f",
		scylla: accept, want: "Function 'sc.f' doesn't exist", why: whyScyllaOnly},
	// lwt_batch_test (and lwt_test)
	{name: "static non-frozen list",
		stmt:   "CREATE TABLE t (a int, b int, c list<text>, d list<text> static, PRIMARY KEY (a, b))",
		scylla: accept, want: accept},
	// lwt_batch_test
	{name: "parenthesised single partition key column",
		stmt:   "CREATE TABLE t (key bigint, ck int, cv set<text>, PRIMARY KEY ((key), ck))",
		scylla: accept, want: accept},
	// lwt_batch_validation_test
	{name: "table of only a primary key column",
		stmt:   "CREATE TABLE t (userid int PRIMARY KEY)",
		scylla: accept, want: accept},
	// lwt_like_test
	{name: "blob and map columns",
		stmt:   "CREATE TABLE t (pk int PRIMARY KEY, b blob, m map<int, text>)",
		scylla: accept, want: accept},
	// lwt_test
	{name: "uuid clustering column named uuid",
		stmt:   "CREATE TABLE t (id bigint, uuid uuid, stc text static, value text, PRIMARY KEY (id, uuid))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "frozen map clustering column",
		stmt:   "CREATE TABLE t (a int, b frozen<map<int, int>>, c int, PRIMARY KEY (a, b))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "frozen collections inside non-frozen ones",
		stmt:   "CREATE TABLE t (a int, b int, s set<frozen<set<int>>>, m map<int, frozen<set<int>>>, l list<frozen<set<int>>>, PRIMARY KEY (a, b))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "non-frozen collection inside a collection",
		stmt:   "CREATE TABLE t (a int, b set<map<int,int>>, c list<set<int>>, PRIMARY KEY (a))",
		scylla: "Non-frozen user types or collections are not allowed inside collections: list<set<int>>",
		want:   "non-frozen collections are not allowed inside collections"},
	// lwt_test
	{name: "static non-frozen set and map",
		stmt:   "CREATE TABLE t (a int, b int, l list<int>, ss set<text> static, sm map<text, int> static, PRIMARY KEY (a, b))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "static frozen set, frozen list",
		stmt:   "CREATE TABLE t (a int, b int, c frozen<list<int>>, d frozen<set<int>> static, PRIMARY KEY (a, b))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "static column with two clustering columns",
		stmt:   "CREATE TABLE t (a int, b int, c int, d int static, PRIMARY KEY (a, b, c))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "non-frozen set as a clustering column",
		stmt:   "CREATE TABLE t (a int, b int, c set<int>, PRIMARY KEY (a, b, c))",
		scylla: "Invalid non-frozen collection type for PRIMARY KEY component c",
		want:   "non-frozen collection column c cannot be part of the PRIMARY KEY"},
	// lwt_test
	{name: "non-frozen list as the partition key",
		stmt:   "CREATE TABLE t (a list<int>, b int, c int, PRIMARY KEY (a, b, c))",
		scylla: "Invalid non-frozen collection type for PRIMARY KEY component a",
		want:   "non-frozen collection column a cannot be part of the PRIMARY KEY"},
	// lwt_test
	{name: "frozen list as a clustering column",
		stmt:   "CREATE TABLE t (a int, b int, c frozen<list<int>>, PRIMARY KEY (a, b, c))",
		scylla: accept, want: accept},
	// lwt_test
	{name: "native types of every kind",
		stmt:   "CREATE TABLE t (a int, b boolean, d decimal, f double, i int, s text, t timestamp, m map<boolean, boolean>, PRIMARY KEY (a))",
		scylla: accept, want: accept},
	// mv_si_local_updates_test
	{name: "materialized view keeping the base partition key",
		setup:  "CREATE TABLE t (p1 int, p2 int, c int, v int, PRIMARY KEY ((p1, p2), c))",
		stmt:   "CREATE MATERIALIZED VIEW tv AS SELECT * FROM t WHERE p1 IS NOT NULL AND p2 IS NOT NULL AND c IS NOT NULL AND v IS NOT NULL PRIMARY KEY ((p1, p2), v, c)",
		scylla: accept, want: accept},
	// mv_si_local_updates_test
	{name: "unnamed index on a table with a composite partition key",
		setup: "CREATE TABLE t (p1 int, p2 int, c int, v int, PRIMARY KEY ((p1, p2), c))",
		stmt:  "CREATE INDEX ON t(v)", scylla: accept, want: accept},
	// query_bounds_test
	{name: "CLUSTERING ORDER BY with DESC and ASC",
		stmt:   "CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY (b DESC, c ASC)",
		scylla: accept, want: accept},
	// sstable_compression_attribute_test: Cassandra 4.0 and later take only
	// 'class'.
	{name: "compression given by sstable_compression",
		stmt:   "CREATE TABLE t (id int PRIMARY KEY) WITH compression = {'sstable_compression': 'LZ4Compressor'}",
		scylla: accept, want: "property compression: missing sub-option 'class'", why: whyCassandra},
	// token_from_null_test (and lua_test, cdc_*_test)
	{name: "NetworkTopologyStrategy with replication_factor",
		stmt:   "CREATE KEYSPACE r1 WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}",
		scylla: accept, want: accept},
	// varchar_as_table_name_test
	{name: "tables named varchar and text",
		setup: "CREATE TABLE sc.varchar (pk int, ck int, PRIMARY KEY (pk, ck))",
		stmt:  "CREATE TABLE sc.text (pk int, ck int, PRIMARY KEY (pk, ck))", scylla: accept, want: accept},
	// vs_cdc_enable_disable_test (and vsc_autoenable_test, vsc_enable_disable_test)
	{name: "vector column",
		stmt:   "CREATE TABLE t (pk int, ck int, v vector<float, 3>, PRIMARY KEY (pk, ck))",
		scylla: accept, want: accept},
	// vs_cdc_enable_disable_test: metalog takes any index class name; it
	// cannot know the classes the servers have.
	{name: "index USING 'vector_index'",
		setup: "CREATE TABLE t (pk int, ck int, v vector<float, 3>, PRIMARY KEY (pk, ck))",
		stmt:  "CREATE INDEX ON t (v) USING 'vector_index'", scylla: accept, want: accept},
	// vs_cdc_enable_disable_test (and vsc_enable_disable_test)
	{name: "DROP INDEX by its derived name, then the index again",
		setup: "CREATE TABLE t (pk int, ck int, v vector<float, 3>, PRIMARY KEY (pk, ck)); CREATE INDEX ON t (v) USING 'vector_index'; DROP INDEX sc.t_v_idx",
		stmt:  "CREATE INDEX ON t (v) USING 'vector_index'", scylla: accept, want: accept},
}

// scyllaBase is what ScyllaDB's harness gives every file: a keyspace, in
// use.
const scyllaBase = "CREATE KEYSPACE sc WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; USE sc"

// scyllaGuardrails are the default guardrails with materialized views,
// user-defined functions and column masks allowed, as an operator who
// uses them sets (ScyllaDB takes views by default), so that the cases
// compare the statements' own rules.
var scyllaGuardrails = func() guardrails.Settings {
	s := guardrails.Defaults()
	s.MaterializedViewsEnabled, s.UserDefinedFunctionsEnabled, s.DynamicDataMaskingEnabled = true, true, true
	return s
}()

// scyllaExec runs text on s as a server admits a new request, statement by
// statement: cql.Parse (after USE use, when use is set), schema.Admit,
// schema.Apply, schema.AdmitChange and scyllaGuardrails. It returns
// the schema after the statements that applied, the keyspace a USE among
// them chose (or use), and the first error.
func scyllaExec(s schema.Schema, use, text string, epoch *uint64) (schema.Schema, string, error) {
	if use != "" {
		text = "USE " + use + ";\n" + text
	}
	parsed, err := Parse(text)
	if err != nil {
		return s, use, err
	}
	for _, p := range parsed {
		st := p.Statement
		if err := schema.Admit(st); err != nil {
			return s, use, err
		}
		*epoch++
		ns, _, res, err := schema.Apply(s, st, schema.Env{Epoch: *epoch})
		if err == nil {
			err = schema.AdmitChange(s, ns, st, res)
		}
		if err == nil {
			_, err = guardrails.Check(scyllaGuardrails, guardrails.Input{Statement: st, Result: res, Before: s, After: ns})
		}
		if err != nil {
			return s, use, err
		}
		if u, ok := st.(*schema.Use); ok {
			use = u.Keyspace
		}
		s = ns
	}
	return s, use, nil
}

// TestScyllaCompare checks metalog's outcome of every behaviour of
// ScyllaDB's conformance files, and that each case's why agrees with the
// outcomes it records.
func TestScyllaCompare(t *testing.T) {
	var epoch uint64
	base, use, err := scyllaExec(schema.Schema{}, "", scyllaBase, &epoch)
	if err != nil {
		t.Fatalf("base: %v", err)
	}
	names := map[string]bool{}
	for _, tc := range scyllaCases {
		t.Run(tc.name, func(t *testing.T) {
			if names[tc.name] {
				t.Fatalf("case name %q used twice", tc.name)
			}
			names[tc.name] = true
			differ := (tc.scylla == accept) != (tc.want == accept)
			switch {
			case differ && tc.why == "":
				t.Fatalf("ScyllaDB and metalog differ but why is empty")
			case !differ && tc.why != "":
				t.Fatalf("why is %q but the outcomes agree", tc.why)
			case tc.gap != (tc.why == whyGap):
				t.Fatalf("gap is %v but why is %q", tc.gap, tc.why)
			}
			s, u, e := base, use, epoch
			if tc.setup != "" {
				var err error
				if s, u, err = scyllaExec(s, u, tc.setup, &e); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			after, _, err := scyllaExec(s, u, tc.stmt, &e)
			switch {
			case tc.want == accept && err != nil:
				t.Fatalf("metalog refuses %q: %v", tc.stmt, err)
			case tc.want != accept && err == nil:
				t.Fatalf("metalog accepts %q, want an error containing %q", tc.stmt, tc.want)
			case tc.want != accept && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("metalog's error for %q is %q, want it to contain %q", tc.stmt, err, tc.want)
			case err != nil && after.Digest() != s.Digest():
				t.Fatalf("refused %q changed the schema", tc.stmt)
			}
		})
	}
}

// TestScyllaCompareDoc checks that docs/scylla.md has one row per case in
// its table of behaviours, and a gap entry per gap case, so that the page
// changes with the cases.
func TestScyllaCompareDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scylla.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Behaviours")
	if !ok {
		t.Fatal("docs/scylla.md has no Behaviours section")
	}
	table, gaps, _ := strings.Cut(table, "\n## ")
	rows, gapRows := 0, 0
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| file ") {
			rows++
			if strings.Contains(line, "**gap**") {
				gapRows++
			}
		}
	}
	gapCases := 0
	for _, tc := range scyllaCases {
		if tc.gap {
			gapCases++
		}
	}
	if rows != len(scyllaCases) {
		t.Errorf("docs/scylla.md has %d behaviour rows, want one per case (%d)", rows, len(scyllaCases))
	}
	if gapRows != gapCases || strings.Count(gaps, "\n- **") != gapCases {
		t.Errorf("docs/scylla.md marks %d rows gap and lists %d gaps, want %d (the gap cases)", gapRows, strings.Count(gaps, "\n- **"), gapCases)
	}
}
