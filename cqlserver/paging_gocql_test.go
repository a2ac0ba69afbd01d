package cqlserver_test

import (
	"fmt"
	"slices"
	"testing"
)

// TestGocqlPaging reads 23 tables through gocql in pages of five, and
// reads the keyspace's metadata with a session whose default page size
// makes gocql page its own system_schema queries.
func TestGocqlPaging(t *testing.T) {
	m := startMember(t)
	cluster := gocqlCluster(t, m)
	cluster.PageSize = 5
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	const ks = "wide"
	if err := session.Query(`CREATE KEYSPACE wide WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 23 {
		name := fmt.Sprintf("t%02d", i)
		want = append(want, name)
		if err := session.Query(fmt.Sprintf("CREATE TABLE wide.%s (id int, at int, note text, PRIMARY KEY (id, at))", name)).Exec(); err != nil {
			t.Fatal(err)
		}
	}

	iter := session.Query("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", ks).PageSize(5).Iter()
	var got []string
	var name string
	for {
		if iter.NumRows() > 5 {
			t.Errorf("a page of %d rows, page size 5", iter.NumRows())
		}
		if !iter.Scan(&name) {
			break
		}
		if iter.PageState() == nil && len(got) < 20 {
			t.Errorf("no paging state before row %d of 23", len(got)+1)
		}
		got = append(got, name)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged tables %q, want %q", got, want)
	}
	compareKeyspace(t, session, m, ks)
}
