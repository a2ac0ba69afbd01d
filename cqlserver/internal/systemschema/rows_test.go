package systemschema_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
)

// every holds one object of every kind the tables serve.
const every = `
CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = false;
CREATE KEYSPACE geo WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2};
CREATE TYPE shop.address (street text, tags frozen<set<text>>, zip int);
CREATE TYPE shop."Point" (x double, y double);
CREATE TABLE shop.orders (
    a int, b text, c timeuuid, d bigint,
    s text STATIC,
    addr frozen<address>,
    live address,
    nums frozen<list<int>>,
    nested list<frozen<set<int>>>,
    deep frozen<map<text, frozen<list<int>>>>,
    pair tuple<int, frozen<address>>,
    vec vector<float, 3>,
    "Mixed" int,
    m map<text, int>,
    PRIMARY KEY ((a, b), c, d)
) WITH CLUSTERING ORDER BY (c DESC) AND comment = 'the orders' AND gc_grace_seconds = 3600
  AND compaction = {'class': 'LeveledCompactionStrategy'} AND caching = {'keys': 'NONE'}
  AND speculative_retry = 'NONE' AND cdc = true;
CREATE TABLE shop.hits (k int PRIMARY KEY, n counter);
ALTER TABLE shop.orders DROP m;
CREATE INDEX orders_s ON shop.orders (s);
CREATE INDEX ON shop.orders (keys(m2));
CREATE CUSTOM INDEX orders_vec ON shop.orders (vec) USING 'StorageAttachedIndex' WITH OPTIONS = {'similarity_function': 'dot_product'};
CREATE TRIGGER audit ON shop.orders USING 'org.apache.cassandra.triggers.AuditTrigger';
CREATE MATERIALIZED VIEW shop.by_d AS SELECT a, b, c, d FROM shop.orders
    WHERE a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL AND d IS NOT NULL
    PRIMARY KEY (d, a, b, c);
CREATE FUNCTION shop.twice(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x * 2;';
CREATE FUNCTION shop.plus(s int, x int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + x;';
CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int FINALFUNC twice INITCOND 0;
`

// everyCQL is every with the orders table given a map column m2 for
// the keys index, added after m is dropped.
func everyCQL() string {
	return strings.Replace(every, "ALTER TABLE shop.orders DROP m;", "ALTER TABLE shop.orders DROP m;\nALTER TABLE shop.orders ADD m2 map<text, int>;", 1)
}

// build applies everyCQL to the empty schema.
func build(t *testing.T) schema.Schema {
	t.Helper()
	return schemakit.Build(t, everyCQL())
}

// rows returns every row of tbl that q selects, each as a map by column.
func rows(s schema.Schema, tbl *systemschema.Table, q systemschema.Query) []map[string]any {
	var out []map[string]any
	for _, r := range tbl.Scan(s, q) {
		m := map[string]any{}
		for i, c := range tbl.Columns {
			if r[i] != nil {
				m[c.Name] = r[i]
			}
		}
		out = append(out, m)
	}
	return out
}

func TestKeyspacesRows(t *testing.T) {
	s := build(t)
	got := rows(s, systemschema.Keyspaces, systemschema.Query{})
	want := []map[string]any{
		{"keyspace_name": "geo", "durable_writes": true, "replication": map[string]string{
			"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3", "dc2": "2"}},
		{"keyspace_name": "shop", "durable_writes": false, "replication": map[string]string{
			"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("keyspaces rows (-want +got):\n%s", d)
	}
}

// columnRow is the part of a columns row the test states.
type columnRow struct {
	Name, Kind, Order, Type string
	Position                int32
}

func TestColumnsRows(t *testing.T) {
	s := build(t)
	var got []columnRow
	for _, r := range rows(s, systemschema.Columns, systemschema.Query{Keyspace: "shop", Name: "orders"}) {
		if string(r["column_name_bytes"].([]byte)) != r["column_name"] {
			t.Errorf("column_name_bytes %q for %q", r["column_name_bytes"], r["column_name"])
		}
		got = append(got, columnRow{r["column_name"].(string), r["kind"].(string), r["clustering_order"].(string), r["type"].(string), r["position"].(int32)})
	}
	// By column name in byte order (so "Mixed" first), as Cassandra
	// clusters them; positions within each key, -1 elsewhere.
	want := []columnRow{
		{"Mixed", "regular", "none", "int", -1},
		{"a", "partition_key", "none", "int", 0},
		{"addr", "regular", "none", "frozen<address>", -1},
		{"b", "partition_key", "none", "text", 1},
		{"c", "clustering", "desc", "timeuuid", 0},
		{"d", "clustering", "asc", "bigint", 1},
		{"deep", "regular", "none", "frozen<map<text, list<int>>>", -1},
		{"live", "regular", "none", "address", -1},
		{"m2", "regular", "none", "map<text, int>", -1},
		{"nested", "regular", "none", "list<frozen<set<int>>>", -1},
		{"nums", "regular", "none", "frozen<list<int>>", -1},
		{"pair", "regular", "none", "tuple<int, address>", -1},
		{"s", "static", "none", "text", -1},
		{"vec", "regular", "none", "vector<float, 3>", -1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("columns rows of shop.orders (-want +got):\n%s", d)
	}
}

func TestTablesRows(t *testing.T) {
	s := build(t)
	got := rows(s, systemschema.Tables, systemschema.Query{Keyspace: "shop"})
	if len(got) != 2 || got[0]["table_name"] != "hits" || got[1]["table_name"] != "orders" {
		t.Fatalf("tables of shop: %v", got)
	}
	hits, orders := got[0], got[1]
	tb, _ := s.Table("shop", "orders")
	if orders["id"] != [16]byte(tb.ID) {
		t.Errorf("id %v, want %v", orders["id"], tb.ID)
	}
	delete(orders, "id")
	delete(hits, "id")
	want := map[string]any{
		"keyspace_name": "shop", "table_name": "orders",
		"flags":                   []string{"compound"},
		"additional_write_policy": "99p", "speculative_retry": "NONE",
		"bloom_filter_fp_chance": 0.1,
		"caching":                map[string]string{"keys": "NONE", "rows_per_partition": "NONE"},
		"cdc":                    true, "comment": "the orders",
		"compaction": map[string]string{"class": "org.apache.cassandra.db.compaction.LeveledCompactionStrategy",
			"max_threshold": "32", "min_threshold": "4"},
		"compression":      map[string]string{"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"},
		"crc_check_chance": 1.0, "dclocal_read_repair_chance": 0.0, "read_repair_chance": 0.0,
		"default_time_to_live": int32(0), "extensions": map[string][]byte{},
		"gc_grace_seconds": int32(3600), "max_index_interval": int32(2048), "min_index_interval": int32(128),
		"memtable_flush_period_in_ms": int32(0), "read_repair": "BLOCKING",
	}
	if d := cmp.Diff(want, orders); d != "" {
		t.Errorf("tables row of shop.orders (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"compound", "counter"}, hits["flags"]); d != "" {
		t.Errorf("flags of a counter table (-want +got):\n%s", d)
	}
	if hits["bloom_filter_fp_chance"] != 0.01 || hits["gc_grace_seconds"] != int32(864000) || hits["speculative_retry"] != "99p" {
		t.Errorf("defaults of shop.hits: %v", hits)
	}
	if _, ok := hits["cdc"]; ok {
		t.Errorf("cdc of a table that does not set it is %v, want null", hits["cdc"])
	}
}

func TestOtherRows(t *testing.T) {
	s := build(t)
	orders, _ := s.Table("shop", "orders")
	ks := systemschema.Query{Keyspace: "shop"}
	for _, tc := range []struct {
		tbl  *systemschema.Table
		want []map[string]any
		drop []string // columns the test leaves out
	}{
		{systemschema.Types, []map[string]any{
			{"keyspace_name": "shop", "type_name": "Point", "field_names": []string{"x", "y"}, "field_types": []string{"double", "double"}},
			{"keyspace_name": "shop", "type_name": "address", "field_names": []string{"street", "tags", "zip"},
				"field_types": []string{"text", "frozen<set<text>>", "int"}},
		}, nil},
		{systemschema.Indexes, []map[string]any{
			{"keyspace_name": "shop", "table_name": "orders", "index_name": "orders_m2_idx", "kind": "COMPOSITES",
				"options": map[string]string{"target": "keys(m2)"}},
			{"keyspace_name": "shop", "table_name": "orders", "index_name": "orders_s", "kind": "COMPOSITES",
				"options": map[string]string{"target": "s"}},
			{"keyspace_name": "shop", "table_name": "orders", "index_name": "orders_vec", "kind": "CUSTOM",
				"options": map[string]string{"target": "vec", "class_name": "org.apache.cassandra.index.sai.StorageAttachedIndex",
					"similarity_function": "dot_product"}},
		}, nil},
		{systemschema.Triggers, []map[string]any{
			{"keyspace_name": "shop", "table_name": "orders", "trigger_name": "audit",
				"options": map[string]string{"class": "org.apache.cassandra.triggers.AuditTrigger"}},
		}, nil},
		{systemschema.DroppedColumns, []map[string]any{
			{"keyspace_name": "shop", "table_name": "orders", "column_name": "m", "kind": "regular", "type": "map<text, int>"},
		}, []string{"dropped_time"}},
		{systemschema.Views, []map[string]any{
			{"keyspace_name": "shop", "view_name": "by_d", "base_table_name": "orders", "base_table_id": [16]byte(orders.ID),
				"include_all_columns": false,
				"where_clause":        "a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL AND d IS NOT NULL"},
		}, viewParams()},
		{systemschema.Functions, []map[string]any{
			{"keyspace_name": "shop", "function_name": "plus", "argument_types": []string{"int", "int"},
				"argument_names": []string{"s", "x"}, "body": "return s + x;", "called_on_null_input": true,
				"language": "java", "return_type": "int"},
			{"keyspace_name": "shop", "function_name": "twice", "argument_types": []string{"int"},
				"argument_names": []string{"x"}, "body": "return x * 2;", "called_on_null_input": false,
				"language": "java", "return_type": "int"},
		}, nil},
		{systemschema.Aggregates, []map[string]any{
			{"keyspace_name": "shop", "aggregate_name": "total", "argument_types": []string{"int"},
				"final_func": "twice", "initcond": "0", "return_type": "int", "state_func": "plus", "state_type": "int"},
		}, nil},
	} {
		got := rows(s, tc.tbl, ks)
		for _, r := range got {
			for _, c := range tc.drop {
				delete(r, c)
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s rows (-want +got):\n%s", tc.tbl.Name, d)
		}
	}
}

// viewParams names the views columns that TestOtherRows leaves to
// TestTablesRows (the parameters) and the view's own id.
func viewParams() []string {
	var out []string
	for _, c := range systemschema.Views.Columns {
		if systemschema.Tables.ColumnIndex(c.Name) >= 0 && c.Name != "keyspace_name" {
			out = append(out, c.Name)
		}
	}
	return out
}

// TestSelectOrder checks each table's columns are in SELECT * order: the
// partition key, the clustering columns, then the rest by name.
func TestSelectOrder(t *testing.T) {
	for _, tbl := range systemschema.All() {
		var regular []string
		for i, c := range tbl.Columns {
			switch {
			case i == 0 && (c.Kind != systemschema.PartitionKey || c.Name != "keyspace_name"):
				t.Errorf("%s: first column %v", tbl.Name, c)
			case c.Kind == systemschema.Regular:
				regular = append(regular, c.Name)
			case len(regular) > 0:
				t.Errorf("%s: key column %s after regular ones", tbl.Name, c.Name)
			}
		}
		if !sort.StringsAreSorted(regular) {
			t.Errorf("%s: regular columns not by name: %v", tbl.Name, regular)
		}
		if got, ok := systemschema.Lookup(tbl.Name); !ok || got != tbl {
			t.Errorf("Lookup(%q) = %v, %v", tbl.Name, got, ok)
		}
	}
	want := "keyspace_name table_name additional_write_policy allow_auto_snapshot bloom_filter_fp_chance caching cdc comment compaction compression crc_check_chance dclocal_read_repair_chance default_time_to_live extensions flags gc_grace_seconds id incremental_backups max_index_interval memtable memtable_flush_period_in_ms min_index_interval read_repair read_repair_chance speculative_retry"
	if got := names(systemschema.Tables); got != want {
		t.Errorf("tables columns:\n got %s\nwant %s", got, want)
	}
}

// names joins the names of tbl's columns.
func names(tbl *systemschema.Table) string {
	var b strings.Builder
	for i, c := range tbl.Columns {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprint(&b, c.Name)
	}
	return b.String()
}
