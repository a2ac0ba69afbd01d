package ddlgen

import (
	"fmt"
	"math/bits"
	"strings"

	"pgregory.net/rapid"
)

// The name pools. They are small so that statements meet: a drop often
// finds what a create made, and a create often finds it already there.
// Callers must not modify them.
var (
	// Keyspaces are the keyspace names drawn.
	Keyspaces = []string{"ks1", "ks2"}
	// Tables are the table names drawn.
	Tables = []string{"t1", "t2", "t3"}
	// Types are the user type names drawn.
	Types = []string{"u1", "u2"}
	// Indexes are the index names drawn. DROP INDEX also draws the name
	// CREATE INDEX derives for an unnamed index on t1 (v).
	Indexes = []string{"i1", "i2"}
	// Views are the materialized view names drawn; CREATE MATERIALIZED
	// VIEW also draws a table name, which a view cannot take.
	Views = []string{"mv1", "mv2"}
)

// namesDrawn lists the names of a pool as often as each is drawn: the
// first len(pool)+1 times, the others once, so that most statements of a
// history meet on the first (a table usually finds its keyspace) while
// the others still come up.
func namesDrawn(pool []string) []string {
	out := []string{}
	for i, name := range pool {
		n := 1
		if i == 0 {
			n = len(pool) + 1
		}
		for range n {
			out = append(out, name)
		}
	}
	return out
}

// The pools as drawn, see namesDrawn.
var (
	keyspacesDrawn = namesDrawn(Keyspaces)
	tablesDrawn    = namesDrawn(Tables)
	typesDrawn     = namesDrawn(Types)
	indexesDrawn   = namesDrawn(Indexes)
	viewsDrawn     = namesDrawn(Views)
)

// Kinds are the statement kinds Statement draws from, e.g. "CREATE TABLE",
// in the order of their weights in kinds.
func Kinds() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// kind is a statement kind, how often it is drawn relative to the others,
// and its generator.
type kind struct {
	name   string
	weight int
	gen    func(t *rapid.T, label string) string
}

// kinds are weighted so that objects exist more often than not: creates
// and alterations outnumber drops, and DROP KEYSPACE, which empties
// everything, is rare.
var kinds = []kind{
	{"CREATE KEYSPACE", 5, createKeyspace},
	{"ALTER KEYSPACE", 1, alterKeyspace},
	{"DROP KEYSPACE", 1, dropKeyspace},
	{"CREATE TABLE", 6, createTable},
	{"ALTER TABLE", 5, alterTable},
	{"DROP TABLE", 1, dropTable},
	{"CREATE TYPE", 3, createType},
	{"ALTER TYPE", 2, alterType},
	{"DROP TYPE", 1, dropType},
	{"CREATE INDEX", 5, createIndex},
	{"DROP INDEX", 2, dropIndex},
	{"CREATE MATERIALIZED VIEW", 3, createView},
	{"ALTER MATERIALIZED VIEW", 1, alterView},
	{"DROP MATERIALIZED VIEW", 1, dropView},
}

// weighted holds the index of each kind in kinds as many times as its
// weight, to draw from uniformly.
var weighted = func() []int {
	var out []int
	for i, k := range kinds {
		for range k.weight {
			out = append(out, i)
		}
	}
	return out
}()

// Statement draws one CQL DDL statement, as text without the final ';'.
// label prefixes the labels of its draws.
func Statement(t *rapid.T, label string) string {
	k := kinds[weighted[uniform(t, label+"_kind", len(weighted))]]
	return k.gen(t, label)
}

// pick draws one of list, each about as often (a value listed twice comes
// twice as often).
func pick(t *rapid.T, label string, list ...string) string {
	return list[uniform(t, label, len(list))]
}

// uniform draws an int in [0, n) about uniformly. rapid's own integers
// and SampledFrom favour small values and the ends of a range, which
// would upset the weights of kinds; bits drawn one by one are fair.
// Two spare bits keep the modulo's skew small. Shrinking goes toward 0.
func uniform(t *rapid.T, label string, n int) int {
	v := 0
	for range bits.Len(uint(n)) + 2 {
		v <<= 1
		if rapid.Bool().Draw(t, label) {
			v |= 1
		}
	}
	return v % n
}

// cond draws clause (e.g. " IF EXISTS") or nothing, each half the time.
func cond(t *rapid.T, label, clause string) string {
	if rapid.Bool().Draw(t, label+"_if") {
		return clause
	}
	return ""
}

// keyspace draws a keyspace name.
func keyspace(t *rapid.T, label string) string { return pick(t, label+"_ks", keyspacesDrawn...) }

// qualified draws "keyspace.name" with name from pool.
func qualified(t *rapid.T, label string, pool []string) string {
	return keyspace(t, label) + "." + pick(t, label+"_name", pool...)
}

// replication draws a replication map, sometimes one Apply refuses.
func replication(t *rapid.T, label string) string {
	return pick(t, label+"_repl",
		"{'class': 'SimpleStrategy', 'replication_factor': 1}",
		"{'class': 'SimpleStrategy', 'replication_factor': 3}",
		"{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 1}",
		"{'class': 'SimpleStrategy', 'replication_factor': 1}",
		"{'class': 'NetworkTopologyStrategy', 'dc1': 2}",
		"{'class': 'SimpleStrategy'}", // refused: no replication_factor
	)
}

// durable draws "true" or "false".
func durable(t *rapid.T, label string) string { return pick(t, label+"_dw", "true", "false") }

// createKeyspace draws CREATE KEYSPACE.
func createKeyspace(t *rapid.T, label string) string {
	s := "CREATE KEYSPACE" + cond(t, label, " IF NOT EXISTS") + " " + keyspace(t, label) +
		" WITH replication = " + replication(t, label)
	return s + cond(t, label+"_and", " AND durable_writes = "+durable(t, label))
}

// alterKeyspace draws ALTER KEYSPACE of the replication, durable_writes or
// both.
func alterKeyspace(t *rapid.T, label string) string {
	s := "ALTER KEYSPACE" + cond(t, label, " IF EXISTS") + " " + keyspace(t, label) + " WITH "
	switch pick(t, label+"_what", "replication", "durable_writes", "both") {
	case "replication":
		return s + "replication = " + replication(t, label)
	case "durable_writes":
		return s + "durable_writes = " + durable(t, label)
	}
	return s + "replication = " + replication(t, label) + " AND durable_writes = " + durable(t, label)
}

// dropKeyspace draws DROP KEYSPACE.
func dropKeyspace(t *rapid.T, label string) string {
	return "DROP KEYSPACE" + cond(t, label, " IF EXISTS") + " " + keyspace(t, label)
}

// tableBodies are column lists of CREATE TABLE, with their primary keys,
// the ones that need nothing else listed twice as often. Two use the
// types of the pool (and fail while those are missing), one has a static
// column, one is a counter table. Every body has k and v.
var tableBodies = []string{
	"k int PRIMARY KEY, v text",
	"k int PRIMARY KEY, v text",
	"k int, c int, v text, m map<text, int>, PRIMARY KEY (k, c)",
	"k int, c int, v text, m map<text, int>, PRIMARY KEY (k, c)",
	"k int, c timeuuid, v text, e set<text>, PRIMARY KEY (k, c)",
	"k int, c timeuuid, v text, e set<text>, PRIMARY KEY (k, c)",
	"k int, c text, v int, l list<frozen<u1>>, PRIMARY KEY ((k, c))",
	"k int, c int, s int static, v frozen<u2>, w u1, PRIMARY KEY (k, c)",
	"k int PRIMARY KEY, v counter",
}

// createTable draws CREATE TABLE, sometimes WITH properties; CLUSTERING
// ORDER BY is refused by the bodies without a clustering column.
func createTable(t *rapid.T, label string) string {
	s := "CREATE TABLE" + cond(t, label, " IF NOT EXISTS") + " " + qualified(t, label, tablesDrawn) +
		" (" + pick(t, label+"_body", tableBodies...) + ")"
	return s + pick(t, label+"_with", "", "", "", " WITH comment = 'made by ddlgen'",
		" WITH gc_grace_seconds = 3600 AND default_time_to_live = 60",
		" WITH CLUSTERING ORDER BY (c DESC)")
}

// alterTable draws ALTER TABLE with ADD, DROP, RENAME or WITH.
func alterTable(t *rapid.T, label string) string {
	s := "ALTER TABLE" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, tablesDrawn)
	switch pick(t, label+"_what", "add", "add", "drop", "rename", "with") {
	case "add":
		return s + " ADD " + addColumns(t, label)
	case "drop":
		return s + " DROP " + pick(t, label+"_drop", "a", "b", "v", "m", "k", "(a, b)") +
			pick(t, label+"_ts", "", "", " USING TIMESTAMP 1234")
	case "rename":
		return s + " RENAME " + pick(t, label+"_from", "k", "c", "kk", "v") + " TO " + pick(t, label+"_to", "kk", "cc", "c")
	}
	return s + " WITH " + pick(t, label+"_opt", "comment = 'altered'", "gc_grace_seconds = 100",
		"compaction = {'class': 'LeveledCompactionStrategy'}", "bloom_filter_fp_chance = 2")
}

// addColumns draws the columns of ALTER TABLE ... ADD, one or two; a
// column dropped before may come back with another type, which fails.
func addColumns(t *rapid.T, label string) string {
	col := func(l string) string {
		return pick(t, l+"_col", "a", "b", "v") + " " +
			pick(t, l+"_type", "int", "text", "frozen<u1>", "list<int>", "u2", "counter", "map<text, int>")
	}
	if rapid.Bool().Draw(t, label+"_two") {
		return "(" + col(label+"_1") + ", " + col(label+"_2") + ")"
	}
	return col(label) + pick(t, label+"_static", "", "", " static")
}

// dropTable draws DROP TABLE.
func dropTable(t *rapid.T, label string) string {
	return "DROP TABLE" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, tablesDrawn)
}

// createType draws CREATE TYPE; a field of type other may refer to the
// type itself or to one that does not exist yet, which fails.
func createType(t *rapid.T, label string) string {
	other := pick(t, label+"_other", typesDrawn...)
	fields := pick(t, label+"_fields",
		"f1 int, f2 text",
		"f1 int, g frozen<"+other+">",
		"f1 set<text>",
		"f1 frozen<list<int>>, f2 duration",
		"f1 text, h list<frozen<"+other+">>",
	)
	return "CREATE TYPE" + cond(t, label, " IF NOT EXISTS") + " " + qualified(t, label, typesDrawn) + " (" + fields + ")"
}

// alterType draws ALTER TYPE with ADD or RENAME; adding a field of a type
// that refers back to this one fails.
func alterType(t *rapid.T, label string) string {
	s := "ALTER TYPE" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, typesDrawn)
	if rapid.Bool().Draw(t, label+"_add") {
		return s + " ADD " + pick(t, label+"_field", "f3", "f1", "g2") + " " +
			pick(t, label+"_type", "int", "text", "frozen<u1>", "frozen<u2>", "set<int>")
	}
	return s + " RENAME " + pick(t, label+"_from", "f1", "f2", "f4") + " TO " + pick(t, label+"_to", "f4", "f5", "f2") +
		pick(t, label+"_and", "", " AND f5 TO f6")
}

// dropType draws DROP TYPE, which fails while a table or type uses it.
func dropType(t *rapid.T, label string) string {
	return "DROP TYPE" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, typesDrawn)
}

// createIndex draws CREATE [CUSTOM] INDEX, named from the pool or left to
// be derived, on a column that the table may or may not have.
func createIndex(t *rapid.T, label string) string {
	var b strings.Builder
	custom := rapid.IntRange(0, 3).Draw(t, label+"_custom") == 0
	b.WriteString("CREATE ")
	if custom {
		b.WriteString("CUSTOM ")
	}
	b.WriteString("INDEX" + cond(t, label, " IF NOT EXISTS"))
	if name := pick(t, label+"_name", append([]string{"", ""}, indexesDrawn...)...); name != "" {
		b.WriteString(" " + name)
	}
	fmt.Fprintf(&b, " ON %s (%s)", qualified(t, label, tablesDrawn),
		pick(t, label+"_target", "v", "v", "v", "c", "c", "keys(m)", "entries(m)", "l", "full(l)", "s", "a", "e"))
	if custom {
		b.WriteString(" USING 'StorageAttachedIndex'" + cond(t, label+"_opts", " WITH OPTIONS = {'case_sensitive': 'false'}"))
	}
	return b.String()
}

// dropIndex draws DROP INDEX of a pool name or of a derived one.
func dropIndex(t *rapid.T, label string) string {
	return "DROP INDEX" + cond(t, label, " IF EXISTS") + " " + keyspace(t, label) + "." +
		pick(t, label+"_name", append([]string{"t1_v_idx"}, indexesDrawn...)...)
}

// viewSelects are the rest of CREATE MATERIALIZED VIEW after the base
// table: each fits some of tableBodies (and fails on the others: a key
// column missing, a static column, a counter table), SELECT * or a list,
// a regular column in the key or not, with a clustering order or not.
var viewSelects = []string{
	" WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)",
	" WHERE k IS NOT NULL AND c IS NOT NULL AND v IS NOT NULL PRIMARY KEY (v, c, k) WITH CLUSTERING ORDER BY (c DESC, k ASC)",
	" WHERE k IS NOT NULL AND c > 0 PRIMARY KEY (c, k) WITH comment = 'view'",
	" WHERE c IS NOT NULL AND k IN (1, 2) PRIMARY KEY ((k, c))",
}

// createView draws CREATE MATERIALIZED VIEW of a pool table, SELECT * or
// some columns, named from the view pool or, rarely, a table's name.
func createView(t *rapid.T, label string) string {
	ks := keyspace(t, label)
	name := pick(t, label+"_name", append(append([]string(nil), viewsDrawn...), "t1")...)
	sel := pick(t, label+"_sel", "*", "*", "k, v", "k, c, v", "k, c")
	return "CREATE MATERIALIZED VIEW" + cond(t, label, " IF NOT EXISTS") + " " + ks + "." + name + " AS SELECT " + sel +
		" FROM " + ks + "." + pick(t, label+"_base", tablesDrawn...) + pick(t, label+"_where", viewSelects...)
}

// alterView draws ALTER MATERIALIZED VIEW WITH a property, sometimes one
// a view refuses.
func alterView(t *rapid.T, label string) string {
	return "ALTER MATERIALIZED VIEW" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, viewsDrawn) + " WITH " +
		pick(t, label+"_opt", "comment = 'altered'", "gc_grace_seconds = 100", "default_time_to_live = 0", "gc_grace_seconds = 0")
}

// dropView draws DROP MATERIALIZED VIEW.
func dropView(t *rapid.T, label string) string {
	return "DROP MATERIALIZED VIEW" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, viewsDrawn)
}
