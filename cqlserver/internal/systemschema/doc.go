// Package systemschema computes the rows of Cassandra's system_schema
// tables from a metalog schema, so that the CQL server can answer the
// queries drivers and cqlsh make to read a schema.
//
// It serves, with the columns, CQL types and values Cassandra 5.0 writes
// (SchemaKeyspace):
//
//   - keyspaces: keyspace_name, durable_writes, replication (the class
//     fully qualified);
//   - tables: keyspace_name, table_name, id, flags and the table
//     parameters (additional_write_policy, allow_auto_snapshot,
//     bloom_filter_fp_chance, caching, cdc, comment, compaction,
//     compression, crc_check_chance, dclocal_read_repair_chance,
//     default_time_to_live, extensions, gc_grace_seconds,
//     incremental_backups, max_index_interval, memtable,
//     memtable_flush_period_in_ms, min_index_interval, read_repair,
//     read_repair_chance, speculative_retry), Cassandra's defaults where
//     a table sets none;
//   - columns: keyspace_name, table_name, column_name, clustering_order,
//     column_name_bytes, kind, position, type;
//   - dropped_columns: keyspace_name, table_name, column_name,
//     dropped_time, kind, type;
//   - triggers: keyspace_name, table_name, trigger_name, options;
//   - views: keyspace_name, view_name, base_table_id, base_table_name,
//     id, include_all_columns, where_clause and the table parameters;
//   - types: keyspace_name, type_name, field_names, field_types;
//   - functions: keyspace_name, function_name, argument_types,
//     argument_names, body, called_on_null_input, language, return_type;
//   - aggregates: keyspace_name, aggregate_name, argument_types,
//     final_func, initcond, return_type, state_func, state_type;
//   - indexes: keyspace_name, table_name, index_name, kind, options.
//
// Not served: column_masks (Cassandra stores each mask argument with its
// CQL type, which metalog's schema does not keep beside the literal; the
// masks stay readable through DESCRIBE); the automated_repair_full and
// automated_repair_incremental columns of tables and views, which came
// after 5.0; and the rows of Cassandra's own keyspaces (system,
// system_schema, ...), which a metalog schema does not hold: the server
// adds them if it wants them. Partitions come in keyspace name order, not
// in token order as Cassandra's do; no driver depends on that order.
//
// The package computes rows, not bytes: the wire encoding is the
// server's. A Table describes a system table and its columns in SELECT *
// order; Scan yields the rows a query selects as the caller reads them,
// and Page cuts them into pages that resume from a Position, each page
// costing O(log n) to find its start and O(page) after that, so a schema
// of 100,000 tables streams. A Query's Visible filter hides keyspaces as
// if they did not exist.
//
//	rows, next, more := systemschema.Columns.Page(s, systemschema.Query{Keyspace: "shop"}, 100)
//	// rows[i][systemschema.Columns.ColumnIndex("type")] is e.g. "frozen<list<int>>";
//	// when more, pass Query{Keyspace: "shop", After: next} for the next page.
package systemschema
