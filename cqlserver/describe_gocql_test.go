package cqlserver_test

import (
	"slices"
	"strings"
	"testing"
)

// TestGocqlDescribe runs DESCRIBE through gocql, as cqlsh sends it (a
// plain query with a page size), in pages of two: the list form in three
// columns, the keyspace form in four, each name in Cassandra's order.
func TestGocqlDescribe(t *testing.T) {
	m := startMember(t)
	session, err := gocqlCluster(t, m).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for _, stmt := range []string{
		`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE shop.orders (id int PRIMARY KEY, note text)`,
		`CREATE TABLE shop."Beta" (id int PRIMARY KEY)`,
		`CREATE TABLE shop.items (id int PRIMARY KEY)`,
		`CREATE INDEX orders_note ON shop.orders (note)`,
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, tc := range []struct {
		query   string
		columns int
		names   []string
	}{
		{"DESCRIBE TABLES", 3, []string{`"Beta"`, "items", "orders"}},
		{"DESCRIBE KEYSPACE shop", 4, []string{"shop", `"Beta"`, "items", "orders", "orders_note"}},
	} {
		iter := session.Query(tc.query).PageSize(2).Iter()
		if n := len(iter.Columns()); n != tc.columns {
			t.Errorf("%s: %d columns, want %d", tc.query, n, tc.columns)
		}
		var names []string
		for {
			row := map[string]any{}
			if !iter.MapScan(row) {
				break
			}
			if stmt, ok := row["create_statement"].(string); ok && !strings.HasPrefix(stmt, "CREATE ") {
				t.Errorf("%s: create_statement %q", tc.query, stmt)
			}
			names = append(names, row["name"].(string))
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf("%s: names %q, want %q", tc.query, names, tc.names)
		}
	}
}
