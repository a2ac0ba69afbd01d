package main

import (
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/snapshot"
)

// TestSnapshotStatusCounts: snapshot status counts each kind of object,
// views apart from tables.
func TestSnapshotStatusCounts(t *testing.T) {
	g := guardrails.Defaults()
	g.MaterializedViewsEnabled, g.UserDefinedFunctionsEnabled = true, true
	m, _, _, err := (&metadata.ClusterMetadata{Guardrails: g}).Execute(metadata.Command{Text: `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE shop.addr (street text);
CREATE TABLE shop.users (id int PRIMARY KEY, email text, home frozen<addr>);
CREATE INDEX ON shop.users (home);
CREATE MATERIALIZED VIEW shop.by_email AS SELECT * FROM shop.users WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id);
CREATE FUNCTION shop.plus(s int, v int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + v;';
CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int INITCOND 0`}, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := snapshotStatusOf(snapshot.Encode(nil, &snapshot.Contents{Epoch: m.Epoch, Index: 1, Schema: m.Schema}))
	if err != nil {
		t.Fatal(err)
	}
	if st.Keyspaces != 1 || st.Tables != 1 || st.Views != 1 || st.Types != 1 || st.Indexes != 1 || st.Functions != 2 {
		t.Errorf("status %+v, want 1 keyspace, 1 table, 1 view, 1 type, 1 index and 2 functions", st)
	}
}
