package cqlserver

import "github.com/metalog/metalog/cqlserver/internal/wire"

// virtualSchemaKeyspace is the keyspace in which Cassandra 4.0 and later
// list their virtual keyspaces and tables. Drivers that see a 4.0 server
// read its three tables with every schema refresh (the Python driver's
// SchemaParserV4 does), next to system_schema.
const virtualSchemaKeyspace = "system_virtual_schema"

// virtualSchemaColumns are the columns of system_virtual_schema's tables
// in SELECT * order (partition key, clustering columns, then the others
// by name), with Cassandra's types.
var virtualSchemaColumns = map[string][]column{
	"keyspaces": {{"keyspace_name", text}},
	"tables":    {{"keyspace_name", text}, {"table_name", text}, {"comment", text}},
	"columns": {
		{"keyspace_name", text}, {"table_name", text}, {"column_name", text},
		{"clustering_order", text}, {"column_name_bytes", wire.Native(wire.TypeBlob)},
		{"kind", text}, {"position", intType}, {"type", text},
	},
}

// virtualSchemaKeys are the primary key columns of each table of
// system_virtual_schema: the columns a SELECT may restrict.
var virtualSchemaKeys = map[string]int{"keyspaces": 1, "tables": 2, "columns": 3}

// virtualSchemaTable answers a SELECT of system_virtual_schema.keyspaces,
// tables or columns with their columns and no rows: a metalog schema has
// no virtual keyspaces, and the server's own keyspaces are not listed,
// as they are not in system_schema. A restriction on a key column is
// accepted (it selects nothing of nothing); one on another column is
// refused, as Cassandra refuses it without ALLOW FILTERING.
func virtualSchemaTable(st *selectStmt) (*table, error) {
	cols, ok := virtualSchemaColumns[st.table]
	if !ok {
		return nil, invalidf("table %s.%s is not served", virtualSchemaKeyspace, st.table)
	}
	keys := cols[:virtualSchemaKeys[st.table]]
	for _, w := range st.where {
		if !isColumn(keys, w.column) {
			return nil, invalidf("restriction on %s of %s.%s is not served", w.column, virtualSchemaKeyspace, st.table)
		}
	}
	return &table{keyspace: virtualSchemaKeyspace, name: st.table, cols: cols}, nil
}

// isColumn says whether cols has a column of that name.
func isColumn(cols []column, name string) bool {
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}
