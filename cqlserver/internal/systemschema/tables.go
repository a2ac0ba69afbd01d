package systemschema

// KeyspaceName is the name of the keyspace the tables belong to.
const KeyspaceName = "system_schema"

// Kind says which part of a system table's primary key a column is, as
// the table's CREATE TABLE declares it.
type Kind uint8

// Column kinds.
const (
	// Regular is a column outside the primary key.
	Regular Kind = iota
	// PartitionKey is the partition key column (keyspace_name in every
	// table).
	PartitionKey
	// Clustering is a clustering column, ascending.
	Clustering
)

// String returns the kind as system_schema.columns writes it.
func (k Kind) String() string {
	switch k {
	case PartitionKey:
		return "partition_key"
	case Clustering:
		return "clustering"
	}
	return "regular"
}

// Column is a column of a system table.
type Column struct {
	// Name is the column name.
	Name string
	// Type is the column's CQL type, as Cassandra declares it, e.g.
	// "frozen<map<text, text>>".
	Type string
	// Kind says which part of the primary key the column is.
	Kind Kind
}

// Table describes one system_schema table. Columns are in the order
// SELECT * returns them: the partition key, the clustering columns in key
// order, then the other columns by name, as Cassandra orders a table's
// columns for a selection of all of them. Row values come in this order.
type Table struct {
	// Name is the table name, e.g. "tables".
	Name string
	// Columns are the table's columns, in SELECT * order.
	Columns []Column

	scan scanner
}

// ColumnIndex returns the position of column name in t.Columns, or -1.
func (t *Table) ColumnIndex(name string) int {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

// pk, ck, col and the text types shorten the declarations below.
func pk(name string) Column      { return Column{Name: name, Type: "text", Kind: PartitionKey} }
func ck(name, typ string) Column { return Column{Name: name, Type: typ, Kind: Clustering} }
func col(name, typ string) Column {
	return Column{Name: name, Type: typ, Kind: Regular}
}

const (
	textMap  = "frozen<map<text, text>>"
	blobMap  = "frozen<map<text, blob>>"
	textList = "frozen<list<text>>"
)

// paramColumns are the table parameters Cassandra 5.0 keeps in both
// tables and views, by name, as their declarations hold them.
var paramColumns = map[string]string{
	"additional_write_policy":     "text",
	"allow_auto_snapshot":         "boolean",
	"bloom_filter_fp_chance":      "double",
	"caching":                     textMap,
	"cdc":                         "boolean",
	"comment":                     "text",
	"compaction":                  textMap,
	"compression":                 textMap,
	"crc_check_chance":            "double",
	"dclocal_read_repair_chance":  "double",
	"default_time_to_live":        "int",
	"extensions":                  blobMap,
	"gc_grace_seconds":            "int",
	"incremental_backups":         "boolean",
	"max_index_interval":          "int",
	"memtable":                    "text",
	"memtable_flush_period_in_ms": "int",
	"min_index_interval":          "int",
	"read_repair":                 "text",
	"read_repair_chance":          "double",
	"speculative_retry":           "text",
}

// withParams returns key followed by the regular columns extra and the
// table parameters, all by name.
func withParams(key []Column, extra ...Column) []Column {
	cols := append([]Column(nil), key...)
	regular := append([]Column(nil), extra...)
	for name, typ := range paramColumns {
		regular = append(regular, col(name, typ))
	}
	sortColumns(regular)
	return append(cols, regular...)
}

// sortColumns sorts regular columns by name (a handful; insertion sort).
func sortColumns(c []Column) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].Name < c[j-1].Name; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// The system_schema tables served, in the order Cassandra lists them.
var (
	// Keyspaces is system_schema.keyspaces: one row per keyspace.
	Keyspaces = &Table{Name: "keyspaces", scan: scanKeyspaces, Columns: []Column{
		pk("keyspace_name"), col("durable_writes", "boolean"), col("replication", textMap),
	}}
	// Tables is system_schema.tables: one row per table (views are in
	// Views).
	Tables = &Table{Name: "tables", scan: scanTables, Columns: withParams(
		[]Column{pk("keyspace_name"), ck("table_name", "text")},
		col("flags", "frozen<set<text>>"), col("id", "uuid"))}
	// Columns is system_schema.columns: one row per column of each table
	// and view.
	Columns = &Table{Name: "columns", scan: scanColumns, Columns: []Column{
		pk("keyspace_name"), ck("table_name", "text"), ck("column_name", "text"),
		col("clustering_order", "text"), col("column_name_bytes", "blob"), col("kind", "text"),
		col("position", "int"), col("type", "text"),
	}}
	// DroppedColumns is system_schema.dropped_columns: the columns ALTER
	// TABLE dropped.
	DroppedColumns = &Table{Name: "dropped_columns", scan: scanDropped, Columns: []Column{
		pk("keyspace_name"), ck("table_name", "text"), ck("column_name", "text"),
		col("dropped_time", "timestamp"), col("kind", "text"), col("type", "text"),
	}}
	// Triggers is system_schema.triggers.
	Triggers = &Table{Name: "triggers", scan: scanTriggers, Columns: []Column{
		pk("keyspace_name"), ck("table_name", "text"), ck("trigger_name", "text"), col("options", textMap),
	}}
	// Views is system_schema.views: one row per materialized view.
	Views = &Table{Name: "views", scan: scanViews, Columns: withParams(
		[]Column{pk("keyspace_name"), ck("view_name", "text")},
		col("base_table_id", "uuid"), col("base_table_name", "text"), col("id", "uuid"),
		col("include_all_columns", "boolean"), col("where_clause", "text"))}
	// Types is system_schema.types: one row per user-defined type.
	Types = &Table{Name: "types", scan: scanTypes, Columns: []Column{
		pk("keyspace_name"), ck("type_name", "text"), col("field_names", textList), col("field_types", textList),
	}}
	// Functions is system_schema.functions: one row per user-defined
	// function.
	Functions = &Table{Name: "functions", scan: scanFunctions, Columns: []Column{
		pk("keyspace_name"), ck("function_name", "text"), ck("argument_types", textList),
		col("argument_names", textList), col("body", "text"), col("called_on_null_input", "boolean"),
		col("language", "text"), col("return_type", "text"),
	}}
	// Aggregates is system_schema.aggregates: one row per user-defined
	// aggregate.
	Aggregates = &Table{Name: "aggregates", scan: scanAggregates, Columns: []Column{
		pk("keyspace_name"), ck("aggregate_name", "text"), ck("argument_types", textList),
		col("final_func", "text"), col("initcond", "text"), col("return_type", "text"),
		col("state_func", "text"), col("state_type", "text"),
	}}
	// Indexes is system_schema.indexes: one row per secondary index.
	Indexes = &Table{Name: "indexes", scan: scanIndexes, Columns: []Column{
		pk("keyspace_name"), ck("table_name", "text"), ck("index_name", "text"),
		col("kind", "text"), col("options", textMap),
	}}
)

// all lists the served tables by name.
var all = []*Table{Aggregates, Columns, DroppedColumns, Functions, Indexes, Keyspaces, Tables, Triggers, Types, Views}

// All returns the served tables sorted by name, in a new slice.
func All() []*Table { return append([]*Table(nil), all...) }

// Lookup returns the served table named name.
func Lookup(name string) (*Table, bool) {
	for _, t := range all {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}
