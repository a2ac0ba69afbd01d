package integration

import (
	"strings"
	"testing"
	"time"
)

// TestServeCQLAddr runs metalog serve with --cql-addr and connects gocql
// to it: DDL made through the CQL listener is what metalog describe
// shows through the gRPC API.
func TestServeCQLAddr(t *testing.T) {
	s := newServer(t)
	cqlAddr := freeAddr(t)
	s.start("--cql-addr", cqlAddr)
	s.waitLog(10*time.Second, "cql="+cqlAddr)

	session := gocqlSession(t, cqlAddr, nil, nil)
	for _, stmt := range []string{
		`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE shop.orders (id uuid, at timestamp, note text, PRIMARY KEY (id, at))`,
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	out, stderr, rc := s.cli("describe", "shop.orders")
	if rc != 0 {
		t.Fatalf("describe shop.orders: exit %d: %s", rc, stderr)
	}
	for _, want := range []string{"CREATE TABLE shop.orders", "note text", "PRIMARY KEY (id, at)"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe shop.orders:\n%s\nwant %q in it", out, want)
		}
	}
	ks, err := session.KeyspaceMetadata("shop")
	if err != nil {
		t.Fatalf("gocql keyspace metadata: %v", err)
	}
	if _, ok := ks.Tables["orders"]; !ok {
		t.Errorf("gocql sees the tables %v of shop, want orders", ks.Tables)
	}
}
