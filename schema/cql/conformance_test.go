package cql

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
)

// The conformance table measures metalog's CQL parser against the rules of
// Cassandra's grammar (src/antlr/Parser.g and Lexer.g) that schema
// statements use. Each case is an edge form of one rule and asserts what
// metalog does today, whether or not Cassandra agrees: where they differ
// the case is marked gap and docs/cql.md says what Cassandra does, so that
// closing a gap shows up here as a failing case to flip. docs/cql.md has
// one row per rule; TestConformanceDocCoversRules keeps the two in step.

// accept is the want of a case metalog accepts.
const accept = "<accept>"

// conformanceBase is the schema the cases with apply set start from.
const conformanceBase = `CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE k.addr (street text, zip int);
CREATE TABLE k.t (id int, ck int, v text, s int static, m map<text, int>, l list<int>, st set<int>, fl frozen<list<int>>, a frozen<addr>, PRIMARY KEY (id, ck));
CREATE INDEX t_v ON k.t (v);`

// conformanceCase is one example of one grammar rule.
type conformanceCase struct {
	// rule is the name of the rule in Cassandra's grammar.
	rule string
	// cql is the example text.
	cql string
	// want is accept, or a substring of the error metalog gives.
	want string
	// apply applies the statements to conformanceBase after parsing, for
	// rules whose acceptance depends on meaning, not syntax alone.
	apply bool
	// gap marks a case where metalog differs from Cassandra.
	gap bool
}

var conformanceCases = []conformanceCase{
	// Lexer: comments, case, names, strings, numbers.
	{rule: "COMMENT", cql: "-- a comment\nUSE k", want: accept},
	{rule: "COMMENT", cql: "// a comment\nUSE k", want: accept},
	{rule: "COMMENT", cql: "USE k -- at the end, no newline", want: accept},
	{rule: "COMMENT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = '-- kept /* too */'", want: accept, apply: true},
	{rule: "MULTILINE_COMMENT", cql: "/* one\n two */ USE /* mid */ k", want: accept},
	{rule: "MULTILINE_COMMENT", cql: "/* /* not nested */ USE k", want: accept},
	{rule: "MULTILINE_COMMENT", cql: "/* open USE k", want: "unterminated comment"},
	{rule: "case rules", cql: "CrEaTe TaBlE K.T2 (Id INT PRIMARY KEY, V TeXt) WiTh CoMmEnT = 'x'", want: accept, apply: true},
	{rule: "case rules", cql: `CREATE TABLE k."T" ("Id" int PRIMARY KEY)`, want: accept},
	{rule: "IDENT", cql: "CREATE TABLE k.t_1 (a1_b int PRIMARY KEY)", want: accept},
	{rule: "IDENT", cql: "CREATE TABLE k._t (id int PRIMARY KEY)", want: `unexpected character "_"`},
	{rule: "IDENT", cql: "CREATE TABLE k.1t (id int PRIMARY KEY)", want: "malformed number"},
	{rule: "QUOTED_NAME", cql: `CREATE TABLE k.t ("say ""hi""" int PRIMARY KEY)`, want: accept},
	{rule: "QUOTED_NAME", cql: `CREATE TABLE k.t ("naïve col" int PRIMARY KEY)`, want: accept},
	{rule: "QUOTED_NAME", cql: `CREATE TABLE k.t ("select" int PRIMARY KEY)`, want: accept},
	{rule: "QUOTED_NAME", cql: `CREATE TABLE k.t ("open int PRIMARY KEY)`, want: "unterminated quoted identifier"},
	{rule: "EMPTY_QUOTED_NAME", cql: `CREATE TABLE k.t ("" int PRIMARY KEY)`, want: "empty quoted identifier"},
	{rule: "STRING_LITERAL", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 'it''s'", want: accept, apply: true},
	{rule: "STRING_LITERAL", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = ''", want: accept, apply: true},
	{rule: "STRING_LITERAL", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = $$it's $ \"raw\"$$", want: accept, apply: true},
	{rule: "STRING_LITERAL", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = $$two\nlines$$", want: accept, apply: true},
	{rule: "STRING_LITERAL", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 'open", want: "unterminated string"},
	{rule: "STRING_LITERAL", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = $$open", want: "unterminated $$ string"},
	{rule: "INTEGER", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH gc_grace_seconds = 864000", want: accept, apply: true},
	{rule: "INTEGER", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH gc_grace_seconds = -1", want: "gc_grace_seconds", apply: true},
	{rule: "INTEGER", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH gc_grace_seconds = +1", want: `unexpected "+", expected a constant or a map`, gap: true},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH bloom_filter_fp_chance = 0.01", want: accept, apply: true},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH bloom_filter_fp_chance = 1e-2", want: accept, apply: true},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH bloom_filter_fp_chance = 1.5E-3", want: accept, apply: true},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH crc_check_chance = 1.", want: accept, apply: true},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH bloom_filter_fp_chance = 1.e-2", want: accept, apply: true},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH crc_check_chance = 1.x", want: "malformed number"},
	{rule: "FLOAT", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH crc_check_chance = .5", want: `unexpected "."`},
	{rule: "HEXNUMBER", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 0xCAFE", want: accept},
	{rule: "HEXNUMBER", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 0x", want: accept},
	{rule: "HEXNUMBER", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 0xZZ", want: "malformed blob constant"},
	{rule: "UUID", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH id = 5A1C395E-B41F-11E5-9F22-BA0BE0483C18", want: accept, apply: true},
	{rule: "UUID", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH id = '5a1c395e-b41f-11e5-9f22-ba0be0483c18'", want: accept, apply: true},
	{rule: "BOOLEAN", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH cdc = TRUE", want: accept, apply: true},
	{rule: "BOOLEAN", cql: "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = False", want: accept, apply: true},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 1h30m", want: accept},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 1h30m", want: `property comment: invalid value "1h30m"`, apply: true},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = -2MO10US", want: accept},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 1µs", want: accept},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = P1DT2H", want: accept},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = -P2W", want: accept},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = P0001-02-03T04:05:06", want: accept},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = p1d", want: "expected a constant or a map"},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 1h30", want: "malformed duration"},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (P int PRIMARY KEY)", want: accept, apply: true},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (P1D int PRIMARY KEY, Px int, P1Dx int)", want: accept, apply: true},
	{rule: "DURATION", cql: "CREATE TABLE k.P1D (id int PRIMARY KEY) WITH comment = P1D", want: `property comment: invalid value "P1D"`, apply: true},
	{rule: "DURATION", cql: "CREATE TABLE k.t2 (Px int PRIMARY KEY, P1Dx int, p int)", want: accept, apply: true},
	{rule: "K_POSITIVE_NAN", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = NaN", want: accept},
	{rule: "K_POSITIVE_NAN", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH bloom_filter_fp_chance = nan", want: "bloom_filter_fp_chance", apply: true},
	{rule: "K_POSITIVE_NAN", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = Infinity", want: accept},
	{rule: "K_NEGATIVE_INFINITY", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = - NaN", want: accept},
	{rule: "K_NEGATIVE_INFINITY", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = -Infinity", want: accept},
	{rule: "K_NEGATIVE_INFINITY", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = -x", want: `unexpected "-", expected a constant or a map`},
	{rule: "WS", cql: "USE\tk\r\n;\f", want: accept},

	// constant and property values.
	{rule: "constant", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH default_time_to_live = 0", want: accept, apply: true},
	{rule: "constant", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH default_time_to_live = '60'", want: accept, apply: true},
	{rule: "properties", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 'a' AND gc_grace_seconds = 1 AND cdc = false", want: accept, apply: true},
	{rule: "properties", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 'a' AND comment = 'b'", want: "property comment given twice"},
	{rule: "property", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH no_such_option = 1", want: `unknown table property "no_such_option"`},
	{rule: "property", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH COMMENT = 'x'", want: accept, apply: true},
	{rule: "property", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH \"comment\" = 'x'", want: accept, apply: true},
	{rule: "property", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH \"Comment\" = 'x'", want: `unknown table property "Comment"`},
	{rule: "property", cql: "ALTER TABLE k.t WITH \"gc_grace_seconds\" = 10", want: accept, apply: true},
	{rule: "property", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH READ_REPAIR_CHANCE = 0.1", want: "property read_repair_chance was removed in Cassandra 4.0", apply: true},
	{rule: "property", cql: "ALTER TABLE k.t WITH dclocal_read_repair_chance = 0", want: "property dclocal_read_repair_chance was removed in Cassandra 4.0", apply: true},
	{rule: "property", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH index_interval = 128", want: "property index_interval was removed in Cassandra 3.0", apply: true},
	{rule: "propertyValue", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = static", want: accept, apply: true},
	{rule: "propertyValue", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = STATIC AND speculative_retry = ALL", want: "speculative_retry", apply: true},
	{rule: "propertyValue", cql: "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = key", want: "durable_writes must be true or false"},
	{rule: "propertyValue", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = foo", want: `unexpected "foo", expected a constant or a map`},
	{rule: "propertyValue", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = select", want: `unexpected "select", expected a constant or a map`},
	{rule: "propertyValue", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH read_repair = 'NONE'", want: accept, apply: true},
	{rule: "fullMapLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}", want: accept, apply: true},
	{rule: "fullMapLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}", want: accept, apply: true},
	{rule: "fullMapLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH extensions = {}", want: accept, apply: true},
	{rule: "fullMapLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', 'x': {'nested': 1}}", want: "compaction", apply: true},
	{rule: "fullMapLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH compaction = {'class': 'SizeTieredCompactionStrategy',}", want: "expected a constant or a map"},
	{rule: "setLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = {'a', 'b'}", want: accept},
	{rule: "setLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = {'a', 'b'}", want: "must be a string", apply: true},
	{rule: "listLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = ['a', 'b']", want: accept},
	{rule: "listLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = []", want: "must be a string", apply: true},
	{rule: "mapLiteral", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = {'a': 1}", want: "must be a string", apply: true},

	// Keyspaces.
	{rule: "createKeyspaceStatement", cql: "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}", want: accept, apply: true},
	{rule: "createKeyspaceStatement", cql: "CREATE KEYSPACE IF NOT EXISTS k WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': '2'}", want: accept, apply: true},
	{rule: "createKeyspaceStatement", cql: "CREATE SCHEMA k2 WITH REPLICATION = {'class': 'SimpleStrategy', 'replication_factor': 1} AND DURABLE_WRITES = true", want: accept, apply: true},
	{rule: "createKeyspaceStatement", cql: "CREATE KEYSPACE k2", want: "expected WITH"},
	{rule: "createKeyspaceStatement", cql: "CREATE KEYSPACE k2 WITH durable_writes = true", want: "expected AND replication"},
	{rule: "createKeyspaceStatement", cql: "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND graph_engine = 'Core'", want: `unknown keyspace property "graph_engine"`},
	{rule: "createKeyspaceStatement", cql: "CREATE KEYSPACE k.k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", want: `unexpected "."`},
	{rule: "alterKeyspaceStatement", cql: "ALTER KEYSPACE k WITH durable_writes = false", want: accept, apply: true},
	{rule: "alterKeyspaceStatement", cql: "ALTER KEYSPACE IF EXISTS nope WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}", want: accept, apply: true},
	{rule: "alterKeyspaceStatement", cql: "ALTER SCHEMA k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}", want: accept, apply: true},
	{rule: "dropKeyspaceStatement", cql: "DROP KEYSPACE k", want: accept, apply: true},
	{rule: "dropKeyspaceStatement", cql: "DROP KEYSPACE IF EXISTS nope", want: accept, apply: true},
	{rule: "dropKeyspaceStatement", cql: "DROP SCHEMA IF EXISTS nope", want: accept},

	// Tables.
	{rule: "createTableStatement", cql: "CREATE TABLE IF NOT EXISTS k.t2 (id int PRIMARY KEY)", want: accept, apply: true},
	{rule: "createTableStatement", cql: "CREATE COLUMNFAMILY k.t2 (id int PRIMARY KEY)", want: accept, apply: true},
	{rule: "createTableStatement", cql: "USE k; CREATE TABLE t2 (id int PRIMARY KEY)", want: accept, apply: true},
	{rule: "createTableStatement", cql: "CREATE TABLE k.t2", want: "expected '(' or LIKE"},
	{rule: "tableDefinition (cfamDefinition)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v text,)", want: accept, apply: true},
	{rule: "tableDefinition (cfamDefinition)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY,, v text)", want: accept, apply: true},
	{rule: "tableDefinition (cfamDefinition)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH comment = 'a' AND CLUSTERING ORDER BY (x ASC)", want: "clustering", apply: true},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int, ck int, s text STATIC, PRIMARY KEY (id, ck))", want: accept, apply: true},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int STATIC PRIMARY KEY)", want: "static", apply: true},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, PRIMARY KEY (id))", want: accept},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, PRIMARY KEY (id))", want: "multiple PRIMARY KEY definitions", apply: true},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int PRIMARY KEY)", want: "multiple PRIMARY KEY definitions", apply: true},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int CHECK v > 0)", want: "CHECK column constraints (Cassandra trunk, after 5.0) are not supported yet"},
	{rule: "tableColumns (cfamColumns)", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY CHECK id > 0)", want: "CHECK column constraints (Cassandra trunk, after 5.0) are not supported yet"},
	{rule: "tablePartitionKey (pkDef)", cql: "CREATE TABLE k.t2 (a int, b int, c int, d int, PRIMARY KEY ((a, b), c, d))", want: accept, apply: true},
	{rule: "tablePartitionKey (pkDef)", cql: "CREATE TABLE k.t2 (a int, b int, PRIMARY KEY ((a), b))", want: accept, apply: true},
	{rule: "tablePartitionKey (pkDef)", cql: "CREATE TABLE k.t2 (a int, PRIMARY KEY (a))", want: accept, apply: true},
	{rule: "tablePartitionKey (pkDef)", cql: "CREATE TABLE k.t2 (a int, PRIMARY KEY ())", want: "expected a partition key column"},
	{rule: "tablePartitionKey (pkDef)", cql: "CREATE TABLE k.t2 (a int, PRIMARY KEY ((a,)))", want: "expected a partition key column"},
	{rule: "tableProperty (cfamProperty)", cql: "CREATE TABLE k.t2 (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC) AND comment = 'x'", want: accept, apply: true},
	{rule: "tableProperty (cfamProperty)", cql: "CREATE TABLE k.t2 (a int PRIMARY KEY) WITH COMPACT STORAGE", want: "COMPACT STORAGE is not supported"},
	{rule: "tableProperty (cfamProperty)", cql: "CREATE TABLE k.t2 (a int PRIMARY KEY) WITH id = 5a1c395e-b41f-11e5-9f22-ba0be0483c18 AND id = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", want: "property id given twice"},
	{rule: "tableClusteringOrder (cfamOrdering)", cql: "CREATE TABLE k.t2 (a int, b int, c int, PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY (b ASC, c DESC)", want: accept, apply: true},
	{rule: "tableClusteringOrder (cfamOrdering)", cql: "CREATE TABLE k.t2 (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b)", want: accept, apply: true, gap: true},
	{rule: "tableClusteringOrder (cfamOrdering)", cql: "CREATE TABLE k.t2 (a int, b int, c int, PRIMARY KEY (a, b, c)) WITH CLUSTERING ORDER BY (c DESC, b ASC)", want: "clustering", apply: true},
	{rule: "tableClusteringOrder (cfamOrdering)", cql: "CREATE TABLE k.t2 (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC) AND CLUSTERING ORDER BY (b DESC)", want: "CLUSTERING ORDER BY given twice"},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v text MASKED WITH DEFAULT)", want: accept, apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v text MASKED WITH mask_inner(1, null))", want: accept, apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int MASKED WITH mask_replace(-1) PRIMARY KEY, s int STATIC MASKED WITH system.mask_null(), ck int MASKED WITH DEFAULT, b blob MASKED WITH mask_hash('SHA-512'), l list<int> MASKED WITH mask_replace([1, 2]), PRIMARY KEY (id, ck))", want: "multiple PRIMARY KEY definitions", apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int, s int STATIC MASKED WITH system.mask_null(), ck int MASKED WITH DEFAULT, b blob MASKED WITH mask_hash('SHA-512'), l list<int> MASKED WITH mask_replace([1, 2]), v text MASKED WITH mask_outer(2, 1, '#'), PRIMARY KEY (id, ck))", want: accept, apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int MASKED WITH mask_replace(0) PRIMARY KEY)", want: accept, apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY MASKED WITH DEFAULT)", want: `unexpected "MASKED", expected ',' or ')'`},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int MASKED WITH DEFAULT STATIC)", want: `unexpected "STATIC", expected PRIMARY KEY, ',' or ')'`},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int MASKED DEFAULT)", want: `unexpected "DEFAULT", expected WITH`},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int MASKED WITH mask_null)", want: `unexpected ")", expected "("`},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int MASKED WITH mask_default(1))", want: "Invalid number of arguments for function system.mask_default(any)", apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v text MASKED WITH mask_inner('a', 'b'))", want: "Function system.mask_inner requires an argument of type int, but found argument 'a' of type ascii", apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int MASKED WITH mask_missing())", want: "Unable to find masking function for v, no declared function matches the signature mask_missing()", apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v text MASKED WITH tojson())", want: "Not-masking function tojson() cannot be used for masking table columns", apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v text MASKED WITH k.redact())", want: "masking with a user-defined function is not supported: k.redact()", apply: true},
	{rule: "columnMask", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v int MASKED WITH mask_hash())", want: "Masking function mask_hash() return type is blob", apply: true},
	{rule: "columnMask", cql: "ALTER TABLE k.t ADD (w text MASKED WITH DEFAULT, x int static MASKED WITH mask_null())", want: accept, apply: true},
	{rule: "columnMask", cql: "ALTER TABLE k.t ALTER v MASKED WITH DEFAULT", want: accept, apply: true},
	{rule: "columnMask", cql: "ALTER TABLE k.t ALTER id MASKED WITH mask_replace(-1)", want: accept, apply: true},
	{rule: "columnMask", cql: "ALTER TABLE k.t ALTER v DROP MASKED", want: accept, apply: true},
	{rule: "columnMask", cql: "ALTER TABLE IF EXISTS k.t ALTER IF EXISTS nope MASKED WITH DEFAULT", want: accept, apply: true},
	{rule: "columnMask", cql: "ALTER TABLE k.t ALTER nope DROP MASKED", want: "Column with name 'nope' doesn't exist on table 't'", apply: true},
	{rule: "columnMask", cql: "ALTER TABLE k.t ALTER v MASKED", want: `expected WITH`},
	{rule: "columnMask", cql: "ALTER TABLE k.t ALTER v TYPE int", want: "ALTER column TYPE is not supported"},
	{rule: "columnConstraints", cql: "ALTER TABLE k.t ALTER v DROP CHECK", want: "ALTER column CHECK (column constraints) is not supported yet"},

	// CREATE TABLE ... LIKE.
	{rule: "copyTableStatement", cql: "CREATE TABLE k.t2 LIKE k.t", want: accept, apply: true},
	{rule: "copyTableStatement", cql: "CREATE TABLE IF NOT EXISTS k.t2 LIKE t WITH comment = 'copy' AND gc_grace_seconds = 10", want: accept},
	{rule: "copyTableStatement", cql: "CREATE TABLE k.t2 LIKE k.t WITH CLUSTERING ORDER BY (ck DESC)", want: "CLUSTERING ORDER BY cannot follow LIKE"},
	{rule: "tableLikeSingleOption", cql: "CREATE TABLE k.t2 LIKE k.t WITH INDEXES", want: accept, apply: true},
	{rule: "tableLikeSingleOption", cql: "CREATE TABLE k.t2 LIKE k.t WITH comment = 'x' AND INDEXES AND gc_grace_seconds = 1", want: accept, apply: true},
	{rule: "tableLikeSingleOption", cql: "CREATE TABLE k.t2 LIKE k.t WITH indexes = true", want: `unknown table property "indexes"`},
	{rule: "tableLikeSingleOption", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH INDEXES", want: `unknown table property "indexes"`},

	// ALTER TABLE.
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t ADD w int", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t ADD (w int, x set<text>, y int static)", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t ADD IF NOT EXISTS v text", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE IF EXISTS k.nope ADD w int", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t ADD w int PRIMARY KEY", want: "cannot add PRIMARY KEY columns"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP l", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP (l, st)", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP IF EXISTS nope", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP l USING TIMESTAMP 1700000000000000", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP v USING TIMESTAMP -1", want: "expected a positive integer timestamp"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP l USING TIMESTAMP 0", want: "expected a positive integer timestamp"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t RENAME id TO pk AND ck TO c", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t RENAME IF EXISTS id TO pk", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t WITH comment = 'x' AND gc_grace_seconds = 3600", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t WITH CLUSTERING ORDER BY (ck DESC)", want: "the clustering order of a table cannot be changed"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t WITH id = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", want: "the table id cannot be changed"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t ALTER v TYPE text", want: "ALTER TABLE ... ALTER column TYPE is not supported (Cassandra removed it)"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t DROP COMPACT STORAGE", want: "DROP COMPACT STORAGE is not supported"},
	{rule: "alterTableStatement", cql: "ALTER TABLE k.t ADD compact int; ALTER TABLE k.t DROP compact", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "ALTER COLUMNFAMILY k.t ADD w int", want: accept},
	{rule: "isStaticColumn", cql: "ALTER TABLE k.t ADD w int STATIC", want: accept, apply: true},
	{rule: "dropTableStatement", cql: "DROP TABLE k.t", want: accept, apply: true},
	{rule: "dropTableStatement", cql: "DROP TABLE IF EXISTS k.nope", want: accept, apply: true},
	{rule: "dropTableStatement", cql: "DROP COLUMNFAMILY IF EXISTS nope", want: accept},

	// User types.
	{rule: "createTypeStatement", cql: "CREATE TYPE k.pt (x int, y int)", want: accept, apply: true},
	{rule: "createTypeStatement", cql: "CREATE TYPE IF NOT EXISTS k.addr (street text, zip int)", want: accept, apply: true},
	{rule: "createTypeStatement", cql: "CREATE TYPE k.pt (x int, y int,)", want: accept, apply: true},
	{rule: "createTypeStatement", cql: "CREATE TYPE k.pt ()", want: "expected a field name"},
	{rule: "createTypeStatement", cql: `CREATE TYPE k."Point" ("X" int, key text)`, want: accept, apply: true},
	{rule: "typeColumns", cql: "CREATE TYPE k.pt (home frozen<addr>, tags set<text>, dims vector<float, 3>)", want: accept, apply: true},
	{rule: "typeColumns", cql: "CREATE TYPE k.pt (x int, x text)", want: "x", apply: true},
	{rule: "non_type_ident", cql: "CREATE TYPE k.text (x int)", want: "type name", apply: true},
	{rule: "non_type_ident", cql: "CREATE TYPE k.byte (x int)", want: "type name", apply: true},
	{rule: "non_type_ident", cql: "CREATE TYPE k.key (x int)", want: accept, apply: true},
	{rule: "alterTypeStatement", cql: "ALTER TYPE k.addr ADD city text", want: accept, apply: true},
	{rule: "alterTypeStatement", cql: "ALTER TYPE k.addr ADD IF NOT EXISTS city text", want: accept, apply: true},
	{rule: "alterTypeStatement", cql: "ALTER TYPE IF EXISTS k.nope ADD city text", want: accept, apply: true},
	{rule: "alterTypeStatement", cql: "ALTER TYPE k.addr RENAME street TO road AND zip TO code", want: accept, apply: true},
	{rule: "alterTypeStatement", cql: "ALTER TYPE k.addr RENAME IF EXISTS street TO road", want: accept, apply: true},
	{rule: "alterTypeStatement", cql: "ALTER TYPE k.addr ALTER zip TYPE bigint", want: "ALTER TYPE ... ALTER field TYPE is not supported (Cassandra removed it)"},
	{rule: "dropTypeStatement", cql: "CREATE TYPE k.pt (x int); DROP TYPE k.pt", want: accept, apply: true},
	{rule: "dropTypeStatement", cql: "DROP TYPE IF EXISTS k.nope", want: accept, apply: true},
	{rule: "dropTypeStatement", cql: "DROP TYPE k.addr", want: "addr", apply: true},

	// Indexes.
	{rule: "createIndexStatement", cql: "CREATE CUSTOM INDEX ON k.t () USING 'org.example.Idx'", want: "a custom index without a target column is not supported"},
	{rule: "createIndexStatement", cql: "CREATE INDEX ON k.t (v)", want: "v", apply: true},
	{rule: "createIndexStatement", cql: "CREATE INDEX t_l ON k.t (l)", want: accept, apply: true},
	{rule: "createIndexStatement", cql: "CREATE INDEX IF NOT EXISTS ON k.t (l)", want: accept, apply: true},
	{rule: "createIndexStatement", cql: "CREATE INDEX IF NOT EXISTS t_v ON k.t (v)", want: accept, apply: true},
	{rule: "createIndexStatement", cql: "CREATE CUSTOM INDEX t_sai ON k.t (ck) USING 'StorageAttachedIndex'", want: accept, apply: true},
	{rule: "createIndexStatement", cql: "CREATE INDEX t_sai ON k.t (ck) USING 'sai' WITH OPTIONS = {'case_sensitive': 'false'}", want: accept, apply: true},
	{rule: "createIndexStatement", cql: "CREATE CUSTOM INDEX t_c ON k.t (ck)", want: "a CUSTOM index needs its class"},
	{rule: "createIndexStatement", cql: "CREATE INDEX t_c ON k.t (ck) WITH OPTIONS = {'a': 'b'}", want: "WITH OPTIONS needs USING 'class'"},
	{rule: "createIndexStatement", cql: "CREATE INDEX t_c ON k.t (ck, v) USING 'sai'", want: "indexes on several columns are not supported"},
	{rule: "createIndexStatement", cql: "CREATE INDEX t_c ON k.t ()", want: "expected a column name"},
	{rule: "createIndexStatement", cql: "CREATE INDEX t_c ON k.t (ck) USING 'sai' WITH something = 1", want: `unexpected "something", expected OPTIONS`},
	{rule: "indexIdent", cql: "CREATE INDEX t_mk ON k.t (KEYS(m))", want: accept, apply: true},
	{rule: "indexIdent", cql: "CREATE INDEX t_mv ON k.t (values(m))", want: accept, apply: true},
	{rule: "indexIdent", cql: "CREATE INDEX t_me ON k.t (ENTRIES(m))", want: accept, apply: true},
	{rule: "indexIdent", cql: "CREATE INDEX t_ff ON k.t (FULL(fl))", want: accept, apply: true},
	{rule: "indexIdent", cql: "CREATE INDEX t_x ON k.t (lower(v))", want: `unknown index target function "lower"`},
	{rule: "indexIdent", cql: `CREATE INDEX t_x ON k.t ("")`, want: "empty quoted identifier"},
	{rule: "indexName (idxName)", cql: `CREATE INDEX "MyIdx" ON k.t (ck)`, want: accept, apply: true},
	{rule: "indexName (idxName)", cql: "CREATE INDEX k.t_x ON k.t (ck)", want: `unexpected "."`},
	{rule: "dropIndexStatement", cql: "DROP INDEX k.t_v", want: accept, apply: true},
	{rule: "dropIndexStatement", cql: "DROP INDEX IF EXISTS k.nope", want: accept, apply: true},
	{rule: "dropIndexStatement", cql: "USE k; DROP INDEX t_v", want: accept, apply: true},

	// Materialized views. k.t has a static column, so SELECT * of it is
	// refused (Cassandra's rule): the cases select columns.
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT * FROM k.t WHERE v IS NOT NULL AND id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, id, ck)", want: accept},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT * FROM k.t WHERE v IS NOT NULL AND id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, id, ck)", want: "Cannot include static column 's' in materialized view 'mv'", apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, v FROM k.t WHERE v IS NOT NULL AND id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, id, ck)", want: accept, apply: true},
	{rule: "createMaterializedViewStatement", cql: "USE k; CREATE MATERIALIZED VIEW mv AS SELECT id, ck FROM t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "createMaterializedViewStatement", cql: `CREATE MATERIALIZED VIEW IF NOT EXISTS k."MV" AS SELECT "id", ck FROM "k"."t" WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id)`, want: accept, apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t PRIMARY KEY (id, ck)", want: accept},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t PRIMARY KEY (id, ck)", want: "Primary key columns id, ck must be restricted with 'IS NOT NULL' or otherwise", apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; CREATE MATERIALIZED VIEW k2.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (id, ck)", want: "Cannot create a materialized view on a table in a different keyspace", apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, v FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (id)", want: "Cannot create materialized view 'mv' without primary key columns ck from base table 't'", apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); CREATE TRIGGER tr ON k.mv USING 'C'", want: "Cannot CREATE TRIGGER for a materialized view", apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); CREATE INDEX ON k.mv (id)", want: "Secondary indexes are not supported on materialized views", apply: true},
	{rule: "createMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.t AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: "a table with the same name already exists", apply: true},
	{rule: "selectors", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, id FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "selectors", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT FROM k.t WHERE id IS NOT NULL PRIMARY KEY (id)", want: "expected a column name or *"},
	{rule: "selector", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id AS x, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: "Cannot use aliases when defining a materialized view (got id AS x)"},
	{rule: "selector", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT writetime(v) FROM k.t WHERE id IS NOT NULL PRIMARY KEY (id)", want: "Can only select columns by name when defining a materialized view"},
	{rule: "whereClause", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = 1 PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "whereClause", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, v FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL AND v = 'x' PRIMARY KEY (ck, id)", want: "Non-primary key columns can only be restricted with 'IS NOT NULL' (got: v restricted illegally)", apply: true},
	{rule: "relation", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IN (1, 2) AND ck >= 0 AND ck < 10 AND (ck) != (5) AND (id IS NOT NULL) PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "relation", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck BETWEEN 1 AND 9 PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "relation", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE token(id) > 0 AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: "Cannot use token relation when defining a materialized view"},
	{rule: "relation", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = 'x' PRIMARY KEY (ck, id)", want: `Invalid STRING constant (x) for "ck" of type int`, apply: true},
	{rule: "relation", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, v FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL AND v LIKE 'a%' PRIMARY KEY (ck, id)", want: "LIKE restriction is only supported on properly indexed columns", apply: true},
	{rule: "relation", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = now() PRIMARY KEY (ck, id)", want: `Type error: cannot assign result of function system.now (type timeuuid) to ck (type int)`, apply: true},
	{rule: "term", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = 1 + 2 * 3 - 10 % 4 / 2 PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "term", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = - abs(-1) PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "term", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IN (1 + 1, (int) 2) PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "term", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = 'a' + 1 PRIMARY KEY (ck, id)", want: `Invalid STRING constant (a) for "ck" of type int`, apply: true},
	{rule: "term", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = 1h PRIMARY KEY (ck, id)", want: `Invalid DURATION constant (1h) for "ck" of type int`, apply: true},
	{rule: "simpleTerm", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = (int) 1 PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "simpleTerm", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = (bigint) 1 PRIMARY KEY (ck, id)", want: `Cannot assign value (bigint)1 to ck of type int`, apply: true},
	{rule: "simpleTerm", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = (int) 'a' PRIMARY KEY (ck, id)", want: `Cannot cast value 'a' to type int`, apply: true},
	{rule: "simpleTerm", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = CAST(1 AS int) PRIMARY KEY (ck, id)", want: `CAST(... AS type) in the WHERE clause of a materialized view is not supported`, gap: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = abs(-1) AND id = blobasint(0x00000001) PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = nope() PRIMARY KEY (ck, id)", want: `Unknown function nope called`, apply: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = k.nope(1) PRIMARY KEY (ck, id)", want: `Unknown function k.nope called`, apply: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = count(1) PRIMARY KEY (ck, id)", want: `Aggregation function are not supported in the where clause`, apply: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = abs('a') PRIMARY KEY (ck, id)", want: `Invalid call to function system.abs, none of its type signatures match`, apply: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = tounixtimestamp(now()) PRIMARY KEY (ck, id)", want: `Type error: cannot assign result of function system.tounixtimestamp (type bigint) to ck (type int)`, apply: true},
	{rule: "function", cql: "CREATE FUNCTION k.plus(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a + 1;'; CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = k.plus(1) PRIMARY KEY (ck, id)", want: `user-defined functions in the WHERE clause of a materialized view are not supported`, apply: true, gap: true},
	{rule: "function", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck = token(1) PRIMARY KEY (ck, id)", want: `native function token is not supported in the WHERE clause of a materialized view`, apply: true, gap: true},
	{rule: "relationType", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck <= 1 AND ck != 0 PRIMARY KEY (ck, id)", want: accept},
	{rule: "relationType", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck < = 1 PRIMARY KEY (ck, id)", want: `unexpected "="`},
	{rule: "containsOperator", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck NOT CONTAINS KEY 1 PRIMARY KEY (ck, id)", want: accept},
	{rule: "containsOperator", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck CONTAINS 1 PRIMARY KEY (ck, id)", want: "Cannot use CONTAINS on non-collection column ck", apply: true},
	{rule: "inOperator", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id NOT IN (1) AND ck IN () PRIMARY KEY (ck, id)", want: accept, apply: true},
	{rule: "customIndexExpression", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE expr(t_v, 'x') AND id IS NOT NULL PRIMARY KEY (ck, id)", want: "WHERE clause for materialized view 'mv' cannot contain custom index expressions"},
	{rule: "marker", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id = :x AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: "Bind variables are not allowed in CREATE MATERIALIZED VIEW statements"},
	{rule: "marker", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id = ? AND ck IS NOT NULL PRIMARY KEY (ck, id)", want: "Bind variables are not allowed in CREATE MATERIALIZED VIEW statements"},
	{rule: "viewPrimaryKey", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, v FROM k.t WHERE v IS NOT NULL AND id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (v, ck, id)", want: accept, apply: true},
	{rule: "viewPrimaryKey", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL", want: "expected AND or PRIMARY KEY"},
	{rule: "viewPartitionKey", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck, v FROM k.t WHERE v IS NOT NULL AND id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY ((v, id), ck)", want: accept, apply: true},
	{rule: "viewProperty", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id) WITH comment = 'x' AND CLUSTERING ORDER BY (id DESC) AND ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", want: accept, apply: true},
	{rule: "viewProperty", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id) WITH COMPACT STORAGE", want: "COMPACT STORAGE tables are not allowed starting with version 4.0"},
	{rule: "viewProperty", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id) WITH default_time_to_live = 0", want: "Cannot set default_time_to_live for a materialized view", apply: true},
	{rule: "viewClusteringOrder", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id) WITH CLUSTERING ORDER BY (id)", want: "expected ASC or DESC"},
	{rule: "viewClusteringOrder", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id) WITH CLUSTERING ORDER BY (ck ASC)", want: "Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive", apply: true},
	{rule: "alterMaterializedViewStatement", cql: "ALTER MATERIALIZED VIEW k.mv WITH comment = 'x'", want: accept},
	{rule: "alterMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); ALTER MATERIALIZED VIEW k.mv WITH comment = 'x' AND gc_grace_seconds = 10", want: accept, apply: true},
	{rule: "alterMaterializedViewStatement", cql: "ALTER MATERIALIZED VIEW IF EXISTS k.nope WITH comment = 'x'", want: accept, apply: true},
	{rule: "alterMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); ALTER MATERIALIZED VIEW k.mv WITH gc_grace_seconds = 0", want: "Cannot alter gc_grace_seconds of a materialized view to 0", apply: true},
	{rule: "alterMaterializedViewStatement", cql: "ALTER MATERIALIZED VIEW k.mv WITH CLUSTERING ORDER BY (id ASC)", want: "the clustering order of a view cannot be changed"},
	{rule: "alterMaterializedViewStatement", cql: "ALTER MATERIALIZED VIEW k.t WITH comment = 'x'", want: "k.t is a table (use ALTER TABLE)", apply: true},
	{rule: "alterTableStatement", cql: "CREATE TABLE k.w (a int, b int, PRIMARY KEY (a, b)); CREATE MATERIALIZED VIEW k.wv AS SELECT * FROM k.w WHERE a IS NOT NULL AND b IS NOT NULL PRIMARY KEY (b, a); ALTER TABLE k.w ADD c int; ALTER TABLE k.w RENAME a TO aa", want: accept, apply: true},
	{rule: "alterTableStatement", cql: "CREATE TABLE k.w (a int, b int, PRIMARY KEY (a, b)); CREATE MATERIALIZED VIEW k.wv AS SELECT * FROM k.w WHERE a IS NOT NULL AND b IS NOT NULL PRIMARY KEY (b, a); ALTER TABLE k.w ADD s int static", want: "cannot add static column s: materialized view wv selects every column of the table", apply: true},
	{rule: "alterTableStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); ALTER TABLE k.t DROP l", want: "Cannot drop column l on base table t with materialized views", apply: true},
	{rule: "alterTableStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); ALTER TABLE k.mv WITH comment = 'x'", want: "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead", apply: true},
	{rule: "dropMaterializedViewStatement", cql: "DROP MATERIALIZED VIEW IF EXISTS k.mv", want: accept, apply: true},
	{rule: "dropMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); USE k; DROP MATERIALIZED VIEW mv", want: accept, apply: true},
	{rule: "dropMaterializedViewStatement", cql: "DROP MATERIALIZED VIEW k.t", want: "k.t is a table (use DROP TABLE)", apply: true},
	{rule: "dropMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); DROP TABLE k.t", want: "Cannot drop a table when materialized views still depend on it (mv)", apply: true},
	{rule: "dropMaterializedViewStatement", cql: "CREATE MATERIALIZED VIEW k.mv AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id); DROP TABLE k.mv", want: "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead.", apply: true},

	// Statements metalog does not take.
	// Functions and aggregates (schema objects metalog stores, never runs).
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", want: accept, apply: true},
	{rule: "createFunctionStatement", cql: "CREATE OR REPLACE FUNCTION k.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS $$return a;$$", want: accept, apply: true},
	{rule: "createFunctionStatement", cql: `CREATE FUNCTION IF NOT EXISTS k."My F"(a tuple<int, text>, "B" list<int>, c addr) CALLED ON NULL INPUT RETURNS map<text, int> LANGUAGE JAVA AS $$ return null; $$`, want: accept, apply: true},
	{rule: "createFunctionStatement", cql: "USE k; CREATE FUNCTION f() CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''", want: accept, apply: true},
	{rule: "createFunctionStatement", cql: "CREATE OR REPLACE FUNCTION IF NOT EXISTS k.f() CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''", want: "Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives", apply: true},
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS ''", want: "Currently only Java UDFs are available", apply: true},
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(a frozen<list<int>>) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''", want: "cannot be frozen; remove frozen<> modifier", apply: true},
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(a int) ON NULL INPUT RETURNS int LANGUAGE java AS ''", want: "expected CALLED ON NULL INPUT or RETURNS NULL ON NULL INPUT"},
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE 'java' AS ''", want: "expected a language name"},
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS return", want: "expected the function body"},
	{rule: "createFunctionStatement", cql: "CREATE FUNCTION k.f(int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''", want: "expected a column type"},
	{rule: "dropFunctionStatement", cql: "DROP FUNCTION IF EXISTS k.f(int)", want: accept, apply: true},
	{rule: "dropFunctionStatement", cql: "USE k; DROP FUNCTION IF EXISTS f()", want: accept, apply: true},
	{rule: "dropFunctionStatement", cql: "DROP FUNCTION k.f", want: "Function 'k.f' doesn't exist", apply: true},
	{rule: "dropFunctionStatement", cql: "CREATE FUNCTION k.f(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'; CREATE FUNCTION k.f(a text) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return 1;'; DROP FUNCTION k.f", want: "'DROP FUNCTION f' matches multiple function definitions", apply: true},
	{rule: "dropFunctionStatement", cql: "DROP FUNCTION k.f(int", want: "expected ',' or ')'"},
	{rule: "createAggregateStatement", cql: "CREATE FUNCTION k.f(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s;'; CREATE AGGREGATE k.agg(int) SFUNC f STYPE int INITCOND 0", want: accept, apply: true},
	{rule: "createAggregateStatement", cql: "CREATE FUNCTION k.f(s list<int>, a int) CALLED ON NULL INPUT RETURNS list<int> LANGUAGE java AS ''; CREATE FUNCTION k.g(s list<int>) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s;'; CREATE OR REPLACE AGGREGATE k.agg(int) SFUNC f STYPE list<int> FINALFUNC g INITCOND [1, -2]", want: accept, apply: true},
	{rule: "createAggregateStatement", cql: "CREATE FUNCTION k.f(s addr, a int) CALLED ON NULL INPUT RETURNS addr LANGUAGE java AS ''; CREATE AGGREGATE IF NOT EXISTS k.agg(int) SFUNC f STYPE addr INITCOND {street: 'x', zip: 1}", want: accept, apply: true},
	{rule: "createAggregateStatement", cql: "CREATE AGGREGATE k.agg(int) SFUNC f STYPE int", want: "State function k.f(int, int) doesn't exist", apply: true},
	{rule: "createAggregateStatement", cql: "CREATE FUNCTION k.f(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s;'; CREATE AGGREGATE k.agg(int) SFUNC f STYPE int INITCOND 'zero'", want: "Invalid value for INITCOND of type int", apply: true},
	{rule: "createAggregateStatement", cql: "CREATE AGGREGATE k.agg(int) SFUNC f STYPE int INITCOND 0 0", want: "expected ';' or end of input"},
	{rule: "createAggregateStatement", cql: "CREATE AGGREGATE k.agg(int) SFUNC f STYPE int INITCOND [1, 2", want: `expected "]"`},
	{rule: "dropAggregateStatement", cql: "DROP AGGREGATE k.agg", want: "Aggregate 'k.agg' doesn't exist", apply: true},
	{rule: "dropAggregateStatement", cql: "DROP AGGREGATE IF EXISTS k.agg(int)", want: accept, apply: true},
	{rule: "functionName", cql: "CREATE FUNCTION k.token(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", want: accept, apply: true},
	{rule: "functionName", cql: `CREATE FUNCTION k."Select"(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'`, want: accept, apply: true},
	{rule: "functionName", cql: "CREATE FUNCTION k.select(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", want: `unexpected "select"`},
	{rule: "createTriggerStatement", cql: "CREATE TRIGGER tr ON k.t USING 'org.example.Audit'", want: accept, apply: true},
	{rule: "createTriggerStatement", cql: "CREATE TRIGGER IF NOT EXISTS \"Tr\" ON t USING $$org.example.Audit$$", want: accept},
	{rule: "createTriggerStatement", cql: "USE k; CREATE TRIGGER tr ON t USING 'org.example.Audit'", want: accept, apply: true},
	{rule: "createTriggerStatement", cql: "CREATE TRIGGER tr ON k.t USING ''", want: "empty trigger class"},
	{rule: "createTriggerStatement", cql: "CREATE TRIGGER tr ON k.t", want: "expected USING"},
	{rule: "createTriggerStatement", cql: "CREATE TRIGGER tr ON k.nope USING 'org.example.Audit'", want: "nope", apply: true},
	{rule: "createTriggerStatement", cql: "CREATE TRIGGER tr ON k.t USING 'a.B'; CREATE TRIGGER tr ON k.t USING 'a.C'", want: "trigger tr already exists on table k.t", apply: true},
	{rule: "dropTriggerStatement", cql: "CREATE TRIGGER tr ON k.t USING 'a.B'; DROP TRIGGER tr ON k.t", want: accept, apply: true},
	{rule: "dropTriggerStatement", cql: "DROP TRIGGER IF EXISTS tr ON k.t", want: accept, apply: true},
	{rule: "dropTriggerStatement", cql: "DROP TRIGGER tr", want: "expected ON"},
	{rule: "useStatement", cql: "USE k", want: accept, apply: true},
	{rule: "useStatement", cql: `USE "k"`, want: accept, apply: true},
	{rule: "useStatement", cql: "USE nope", want: "nope", apply: true},
	{rule: "useStatement", cql: "USE k.t", want: `unexpected "."`},

	// Types.
	{rule: "comparatorType", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a k.addr, b frozen<k.addr>)", want: accept, apply: true},
	{rule: "comparatorType", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, b frozen<k.addr>, c frozen<\"addr\">)", want: accept, apply: true},
	{rule: "comparatorType", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v 'org.apache.cassandra.db.marshal.UTF8Type')", want: `custom types named by their class ("org.apache.cassandra.db.marshal.UTF8Type") are not supported: a legacy form`},
	{rule: "comparatorType", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v frozen<int>)", want: "frozen", apply: true},
	{rule: "comparatorType", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, v nope)", want: "nope", apply: true},
	{rule: "native_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a ascii, b bigint, c blob, d boolean, e decimal, f double, g duration, h float, i inet, j smallint, l text, m timestamp, n tinyint, o uuid, p varchar, q varint, r timeuuid, s date, t time)", want: accept, apply: true},
	{rule: "native_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, n counter)", want: accept, apply: true},
	{rule: "native_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, n COUNTER, v text)", want: "counter", apply: true},
	{rule: "collection_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a map<text, frozen<list<int>>>, b list<frozen<set<text>>>, c set<frozen<map<int, int>>>)", want: accept, apply: true},
	{rule: "collection_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a list<list<int>>)", want: "frozen", apply: true},
	{rule: "collection_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a map<text>)", want: `expected ","`},
	{rule: "collection_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a list)", want: `expected '<'`},
	{rule: "tuple_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a tuple<int, text, frozen<addr>>, b frozen<tuple<int>>)", want: accept, apply: true},
	{rule: "tuple_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a tuple<>)", want: "expected a column type"},
	{rule: "vector_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a vector<float, 1536>, b vector<text, 2>)", want: accept, apply: true},
	{rule: "vector_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a vector<float, 0>)", want: "vector dimension must be a positive integer"},
	{rule: "vector_type", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a vector<float>)", want: `expected ","`},

	// Names.
	{rule: "keyspaceName (ksName)", cql: `CREATE KEYSPACE "MyKs" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, want: accept, apply: true},
	{rule: "keyspaceName (ksName)", cql: "CREATE KEYSPACE system_x WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", want: "system", apply: true},
	{rule: "keyspaceName (ksName)", cql: "CREATE KEYSPACE a23456789012345678901234567890123456789012345678x WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", want: "48", apply: true},
	{rule: "keyspaceName (ksName)", cql: "CREATE KEYSPACE ? WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", want: `unexpected character "?"`},
	{rule: "columnFamilyName (cfName)", cql: `CREATE TABLE "k"."My Table" (id int PRIMARY KEY)`, want: "table name", apply: true},
	{rule: "columnFamilyName (cfName)", cql: "CREATE TABLE k.t.x (id int PRIMARY KEY)", want: `unexpected "."`},
	{rule: "userTypeName", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, a frozen<k.addr>)", want: accept, apply: true},
	{rule: "ident", cql: `CREATE TABLE k.t2 (id int PRIMARY KEY, "My Col" text, "κόσμε" int)`, want: accept, apply: true},
	{rule: "ident", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY, select int)", want: `unexpected "select"`},
	{rule: "cident", cql: "CREATE INDEX t_q ON k.t (\"ck\")", want: accept, apply: true},
	{rule: "fident", cql: "CREATE TYPE k.pt (key int, type text, static int, frozen int, ttl int)", want: accept, apply: true},
	{rule: "noncol_ident", cql: "CREATE TABLE k.t2 (id int PRIMARY KEY) WITH caching = {'keys': 'ALL'} AND Comment = 'x'", want: accept, apply: true},
}

// runConformance parses cql (and applies it to conformanceBase when
// apply) and returns the first error.
func runConformance(text string, apply bool) error {
	parsed, err := Parse(text)
	if err != nil || !apply {
		return err
	}
	base, err := Parse(conformanceBase)
	if err != nil {
		return err
	}
	var s schema.Schema
	epoch := uint64(1)
	for _, group := range [][]Parsed{base, parsed} {
		for _, p := range group {
			ns, _, _, err := schema.Apply(s, p.Statement, schema.Env{Epoch: epoch})
			if err != nil {
				return err
			}
			s = ns
			epoch++
		}
	}
	return nil
}

// outcome is accept or the error's text.
func outcome(err error) string {
	if err == nil {
		return accept
	}
	return err.Error()
}

// matches reports whether got, an outcome, meets want.
func matches(got, want string) bool {
	if want == accept || got == accept {
		return got == want
	}
	return strings.Contains(got, want)
}

func TestConformance(t *testing.T) {
	if _, err := Parse(conformanceBase); err != nil {
		t.Fatalf("base: %v", err)
	}
	gaps := 0
	for _, c := range conformanceCases {
		got := outcome(runConformance(c.cql, c.apply))
		t.Logf("%s | %s | %s", c.rule, c.cql, got)
		if !matches(got, c.want) {
			t.Errorf("%s: %q (apply=%v)\n got: %s\nwant: %s", c.rule, c.cql, c.apply, got, c.want)
		}
		if c.gap {
			gaps++
		}
	}
	t.Logf("%d examples, %d rules, %d marked gap", len(conformanceCases), len(conformanceRules()), gaps)
}

// conformanceRules returns the distinct rules of the table and of the
// keyword lists, sorted.
func conformanceRules() []string {
	seen := map[string]bool{
		"basic_unreserved_keyword": true, "unreserved_keyword": true, "unreserved_function_keyword": true,
	}
	for _, c := range conformanceCases {
		seen[c.rule] = true
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// TestConformanceDocCoversRules checks that docs/cql.md has a row for every
// rule the table tests, written as `rule` in its first column.
func TestConformanceDocCoversRules(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cql.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range conformanceRules() {
		name, _, _ := strings.Cut(r, " (")
		if !strings.Contains(string(doc), "| `"+name+"`") {
			t.Errorf("docs/cql.md has no row for rule %s", r)
		}
	}
}

// Keywords Cassandra's grammar lets stand as identifiers (Parser.g): the
// basic_unreserved_keyword list, the native type names that
// unreserved_function_keyword adds, and the few that unreserved_keyword
// adds on top.
var (
	basicUnreservedKeywords = strings.Fields(`keys as cluster clustering compact storage tables type types values map
		list filtering permission permissions keyspaces all user users role roles identity superuser superusers
		nosuperuser login nologin options password generated hashed exists custom trigger contains internals only
		static frozen tuple function functions aggregate aggregates sfunc stype finalfunc initcond returns language
		called input like per partition group datacenters cidrs access default mbean mbeans replace unset masked
		unmask select_masked vector ann between check indexes`)
	nativeTypeKeywords = strings.Fields(`ascii bigint blob boolean counter decimal double duration float inet int
		smallint text timestamp tinyint uuid varchar varint timeuuid date time`)
	extraUnreservedKeywords = strings.Fields(`ttl count writetime maxwritetime key cast json distinct`)
)

// keywordPositions are the places a keyword is tried as a name, each with
// whether Cassandra takes every unreserved keyword there (userTypeName's
// non_type_ident takes only basic_unreserved_keyword and KEY).
var keywordPositions = []struct {
	name string
	cql  string // %s is the keyword
	all  bool
}{
	{"keyspace", "CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", true},
	{"table", "CREATE TABLE k.%s (id int PRIMARY KEY)", true},
	{"column", "CREATE TABLE k.t2 (id int PRIMARY KEY, %s int)", true},
	{"field", "CREATE TYPE k.pt (%s int)", true},
	{"index", "CREATE INDEX %s ON k.t (ck)", true},
	{"trigger", "CREATE TRIGGER %s ON k.t USING 'org.example.Audit'", true},
	{"view", "CREATE MATERIALIZED VIEW k.%s AS SELECT id, ck FROM k.t WHERE id IS NOT NULL AND ck IS NOT NULL PRIMARY KEY (ck, id)", true},
	{"type", "CREATE TYPE k.%s (x int)", false},
}

// keywordRefusals are the (position, keyword) pairs where metalog refuses a
// keyword Cassandra accepts as a name, or accepts one Cassandra refuses
// (marked "+"). Parsed and applied to conformanceBase.
var keywordRefusals = map[string]bool{
	// Type constructor names refused as user type names by schema.Apply.
	"type map": true, "type list": true, "type frozen": true, "type tuple": true, "type vector": true,
	// Accepted as user type names; Cassandra's non_type_ident refuses them.
	"type +ttl": true, "type +count": true, "type +writetime": true, "type +maxwritetime": true,
	"type +cast": true, "type +json": true, "type +distinct": true,
}

func TestConformanceKeywordsAsNames(t *testing.T) {
	inBasic := map[string]bool{"key": true}
	for _, k := range basicUnreservedKeywords {
		inBasic[k] = true
	}
	var all []string
	all = append(all, basicUnreservedKeywords...)
	all = append(all, nativeTypeKeywords...)
	all = append(all, extraUnreservedKeywords...)
	got := map[string]bool{}
	tried := 0
	for _, pos := range keywordPositions {
		for _, kw := range all {
			tried++
			err := runConformance(strings.ReplaceAll(pos.cql, "%s", kw), true)
			cassandra := pos.all || inBasic[kw]
			switch {
			case cassandra && err != nil:
				got[pos.name+" "+kw] = true
				t.Logf("refused: %s %s: %v", pos.name, kw, err)
			case !cassandra && err == nil:
				got[pos.name+" +"+kw] = true
				t.Logf("accepted, Cassandra refuses: %s %s", pos.name, kw)
			}
		}
	}
	var diff []string
	for k := range got {
		if !keywordRefusals[k] {
			diff = append(diff, "new: "+k)
		}
	}
	for k := range keywordRefusals {
		if !got[k] {
			diff = append(diff, "gone: "+k)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("keyword gaps changed (update keywordRefusals and docs/cql.md):\n%s", strings.Join(diff, "\n"))
	}
	t.Logf("%d keywords in %d positions: %d tries, %d differ from Cassandra", len(all), len(keywordPositions), tried, len(got))
}
