package cqlserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/metalog/metalog/member"
)

// TestGocqlSchemaEvents checks that gocql's metadata follows changes made
// on the member directly, not through gocql: it reloads a keyspace on the
// SCHEMA_CHANGE events its control connection registered for.
func TestGocqlSchemaEvents(t *testing.T) {
	m := startMember(t)
	execute := func(ddl string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := m.Writes().Execute(ctx, member.Request{Statements: ddl}); err != nil {
			t.Fatal(err)
		}
	}
	execute(`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	session, err := gocqlCluster(t, m).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	// Loaded, and cached, before the change.
	ks, err := session.KeyspaceMetadata("shop")
	if err != nil {
		t.Fatal(err)
	}
	if len(ks.Tables) != 0 {
		t.Fatalf("shop has tables %v before any was made", ks.Tables)
	}

	execute(`CREATE TABLE shop.orders (id uuid PRIMARY KEY, note text)`)
	waitTable(t, session, "shop", "orders", true)
	execute(`DROP TABLE shop.orders`)
	waitTable(t, session, "shop", "orders", false)
}

// waitTable polls gocql's metadata of keyspace, with a deadline, until it
// has (or lacks) table.
func waitTable(t *testing.T, session *gocql.Session, keyspace, table string, present bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ks, err := session.KeyspaceMetadata(keyspace)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ks.Tables[table]; ok == present {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gocql's metadata of %s: table %s present=%v, want %v", keyspace, table, !present, present)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
}
