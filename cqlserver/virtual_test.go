package cqlserver_test

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// columnsOf decodes a Rows result's column names and types, as
// "name type" pairs, and its row count.
func columnsOf(t *testing.T, f wire.Frame) (cols []string, rows int32) {
	t.Helper()
	d := rowsBody(t, f)
	h := readRowsHead(d)
	if h.state != nil {
		t.Fatal("a paging state on a result that is not paged")
	}
	cols = h.specs
	rows = d.Int()
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, rows
}

// TestVirtualSchema: the tables of system_virtual_schema, which drivers
// read from a 4.0 server with each schema refresh, answer with
// Cassandra's columns and no rows; a restriction on a key column
// selects nothing, one on another column is refused.
func TestVirtualSchema(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
	c.started()
	for i, tc := range []struct {
		query string
		cols  string
	}{
		{"SELECT * from system_virtual_schema.keyspaces", "keyspace_name text"},
		{"SELECT * from system_virtual_schema.tables", "keyspace_name text, table_name text, comment text"},
		{"SELECT * from system_virtual_schema.columns",
			"keyspace_name text, table_name text, column_name text, clustering_order text, column_name_bytes blob, kind text, position int, type text"},
		{"SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = 'shop'", "table_name text"},
		{"SELECT * FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'clients'",
			"keyspace_name text, table_name text, column_name text, clustering_order text, column_name_bytes blob, kind text, position int, type text"},
	} {
		c.send(int16(i+2), &wire.Query{Query: tc.query})
		cols, rows := columnsOf(t, c.recv())
		if got := strings.Join(cols, ", "); got != tc.cols || rows != 0 {
			t.Errorf("%s: columns %q and %d rows, want %q and none", tc.query, got, rows, tc.cols)
		}
	}
	for i, q := range []string{
		"SELECT * FROM system_virtual_schema.tables WHERE comment = 'x'",
		"SELECT * FROM system_virtual_schema.views",
		"SELECT nope FROM system_virtual_schema.keyspaces",
	} {
		c.send(int16(i+20), &wire.Query{Query: q})
		if r := decode(t, c.recv()); r.code != wire.CodeInvalid {
			t.Errorf("%s: answered %+v, want INVALID", q, r)
		}
	}
}
