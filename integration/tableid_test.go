package integration

import (
	"context"
	"regexp"
	"testing"
	"time"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// tableIDOf returns the id DESCRIBE gives table ks.t on s.
func tableIDOf(t *testing.T, s *server) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.client().GetTable(ctx, &pb.GetTableRequest{Keyspace: "ks", Table: "t", Format: "cql"})
	if err != nil {
		t.Fatalf("GetTable ks.t: %v", err)
	}
	m := regexp.MustCompile(`WITH ID = ([0-9a-f-]{36})`).FindStringSubmatch(r.Cql)
	if m == nil {
		t.Fatalf("GetTable ks.t: no id in\n%s", r.Cql)
	}
	return m[1]
}

// createTableEpoch runs, on s, the statements that create ks.t, and
// returns the epoch the CREATE TABLE made.
func createTableEpoch(t *testing.T, s *server) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, stmt := range []string{ksRF3, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)"} {
		r, err := s.client().Execute(ctx, &pb.ExecuteRequest{Statements: stmt})
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if stmt != ksRF3 {
			return r.Epoch
		}
	}
	panic("unreachable")
}

// TestTableIDsAcrossClusters: two clusters that create a table at the same
// epoch give it different ids (the id derives from the cluster as well as
// the epoch), and every member of one cluster gives it the same id.
func TestTableIDsAcrossClusters(t *testing.T) {
	c := newCluster(t, 3)
	other := newServer(t)
	other.start()
	epoch := createTableEpoch(t, c.servers[0])
	if e := createTableEpoch(t, other); e != epoch {
		t.Fatalf("the clusters created ks.t at epochs %d and %d: want the same epoch for this test", epoch, e)
	}
	c.waitSameDigest()
	id := tableIDOf(t, c.servers[0])
	for i, s := range c.servers[1:] {
		if got := tableIDOf(t, s); got != id {
			t.Errorf("member %s gives ks.t id %s, member %s %s", c.names[i+1], got, c.names[0], id)
		}
	}
	if got := tableIDOf(t, other); got == id {
		t.Errorf("two clusters gave ks.t, created at epoch %d in both, the same id %s", epoch, id)
	}
}
