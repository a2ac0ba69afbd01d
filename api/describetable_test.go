package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// TestGetTableCQLHasItsIndexes: GET /v1/keyspaces/ks/tables/t?format=cql
// answers what DESCRIBE TABLE prints: the table, then its indexes (a table
// copied WITH INDEXES included), triggers and views.
func TestGetTableCQLHasItsIndexes(t *testing.T) {
	srv, c := startServer(t, 0)
	ctx := context.Background()
	for _, s := range []string{
		"CREATE TABLE ks.u (id int PRIMARY KEY, c int)",
		"CREATE INDEX ON ks.u (c)",
		"CREATE TABLE ks.t2 LIKE ks.u WITH INDEXES",
		"CREATE TRIGGER audit ON ks.t2 USING 'org.example.Audit'",
	} {
		if _, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: s}); err != nil {
			t.Fatal(err)
		}
	}
	code, body := get(t, "http://"+srv.HTTPAddr()+"/v1/keyspaces/ks/tables/t2?format=cql")
	var resp struct{ CQL string }
	if err := json.Unmarshal([]byte(body), &resp); code != 200 || err != nil {
		t.Fatalf("GET table: %d %s %v", code, body, err)
	}
	table := strings.Index(resp.CQL, "CREATE TABLE ks.t2 (")
	index := strings.Index(resp.CQL, "CREATE INDEX t2_c_idx ON ks.t2 (c);")
	trigger := strings.Index(resp.CQL, "CREATE TRIGGER audit ON ks.t2 USING 'org.example.Audit';")
	if table < 0 || index < table || trigger < index {
		t.Errorf("DESCRIBE TABLE ks.t2 over HTTP, want the table, its index, its trigger:\n%s", resp.CQL)
	}
}
