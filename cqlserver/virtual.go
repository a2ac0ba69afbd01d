package cqlserver

import "github.com/metalog/metalog/cqlserver/internal/systemschema"

// virtualSchemaKeyspace is the keyspace of Cassandra's virtual tables.
const virtualSchemaKeyspace = systemschema.VirtualKeyspace

// virtualSchemaTable answers a SELECT of system_virtual_schema.keyspaces,
// tables or columns with their columns and no rows: a metalog schema has
// no virtual keyspaces, nor has metalog itself. A restriction on a key
// column is accepted (it selects nothing of nothing); one on another
// column is refused, as Cassandra refuses it without ALLOW FILTERING.
func virtualSchemaTable(st *selectStmt) (*table, error) {
	sys, ok := systemschema.LookupVirtual(st.table)
	if !ok {
		return nil, invalidf("table %s.%s is not served", virtualSchemaKeyspace, st.table)
	}
	for _, w := range st.where {
		if i := sys.ColumnIndex(w.column); i < 0 || sys.Columns[i].Kind == systemschema.Regular {
			return nil, invalidf("restriction on %s of %s.%s is not served", w.column, virtualSchemaKeyspace, st.table)
		}
	}
	return &table{keyspace: virtualSchemaKeyspace, name: st.table, cols: columnsOf(sys)}, nil
}
