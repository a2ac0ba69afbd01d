package schema_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// TestClusterTableIDsDifferAcrossClusters: two clusters that create a
// table at the same epoch give it different ids (the ids derived from the
// epoch alone were equal), one cluster always gives the same, and the id
// is a version 8, RFC 9562 variant UUID.
func TestClusterTableIDsDifferAcrossClusters(t *testing.T) {
	const a, b = 0x1d2c3b4a59687766, 0x0123456789abcdef
	for _, epoch := range []uint64{1, 2, 3, 1 << 40} {
		ia, ib := schema.ClusterTableID(a, epoch, 0), schema.ClusterTableID(b, epoch, 0)
		if ia == ib {
			t.Errorf("epoch %d: clusters %x and %x both give %s", epoch, a, b, ia)
		}
		if again := schema.ClusterTableID(a, epoch, 0); again != ia {
			t.Errorf("epoch %d: cluster %x gives %s, then %s", epoch, a, ia, again)
		}
		if ia == schema.TableID(epoch, 0) {
			t.Errorf("epoch %d: the cluster's id %s is the epoch-only id", epoch, ia)
		}
		if ia[6]>>4 != 8 || ia[8]>>6 != 2 {
			t.Errorf("%s: version %d, variant bits %b; want 8 and 10", ia, ia[6]>>4, ia[8]>>6)
		}
	}
}

// TestClusterTableIDsUniqueInACluster: within one cluster, distinct
// (epoch, seq) pairs give distinct ids, and ids sort by epoch.
func TestClusterTableIDsUniqueInACluster(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cluster := rapid.Uint64Min(1).Draw(t, "cluster")
		e1 := rapid.Uint64Range(1, 1<<48-1).Draw(t, "e1")
		e2 := rapid.Uint64Range(1, 1<<48-1).Draw(t, "e2")
		s1 := rapid.Uint32Range(0, 1<<24-1).Draw(t, "s1")
		s2 := rapid.Uint32Range(0, 1<<24-1).Draw(t, "s2")
		i1, i2 := schema.ClusterTableID(cluster, e1, s1), schema.ClusterTableID(cluster, e2, s2)
		if (i1 == i2) != (e1 == e2 && s1 == s2) {
			t.Fatalf("(%d, %d) -> %s, (%d, %d) -> %s", e1, s1, i1, e2, s2, i2)
		}
		if e1 < e2 && i1.String() >= i2.String() {
			t.Fatalf("epoch %d's id %s does not sort before epoch %d's %s", e1, i1, e2, i2)
		}
	})
}

// TestTableIDRules: CREATE TABLE, CREATE TABLE ... LIKE and CREATE
// MATERIALIZED VIEW without WITH ID derive their ids from the cluster
// under RulesClusterTableIDs, and from the epoch alone under older rules
// or without a cluster (entries of earlier releases, the planner's
// schemas); WITH ID wins under any rules.
func TestTableIDRules(t *testing.T) {
	const cluster = 0xfeed
	base := `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.u (k int PRIMARY KEY, v int)`
	for _, tc := range []struct {
		cql, name string
		rules     uint64
		cluster   uint64
		want      schema.UUID
	}{
		{"CREATE TABLE ks.t (k int PRIMARY KEY)", "t", schema.CurrentRules, cluster, schema.ClusterTableID(cluster, 3, 0)},
		{"CREATE TABLE ks.t LIKE ks.u", "t", schema.CurrentRules, cluster, schema.ClusterTableID(cluster, 3, 0)},
		{"CREATE MATERIALIZED VIEW ks.t AS SELECT * FROM ks.u WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)", "t", schema.CurrentRules, cluster, schema.ClusterTableID(cluster, 3, 0)},
		{"CREATE TABLE ks.t (k int PRIMARY KEY)", "t", schema.RulesDroppedKind, cluster, schema.TableID(3, 0)},
		{"CREATE TABLE ks.t (k int PRIMARY KEY)", "t", schema.RulesOriginal, cluster, schema.TableID(3, 0)},
		{"CREATE TABLE ks.t (k int PRIMARY KEY)", "t", schema.CurrentRules, 0, schema.TableID(3, 0)},
		{"CREATE TABLE ks.t (k int PRIMARY KEY) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", "t", schema.CurrentRules, cluster, mustUUID(t, "5a1c395e-b41f-11e5-9f22-ba0be0483c18")},
	} {
		s := schemakit.Build(t, base)
		parsed, err := cql.Parse(tc.cql)
		if err != nil {
			t.Fatal(err)
		}
		s, _, _, err = schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: 3, Rules: tc.rules, Cluster: tc.cluster})
		if err != nil {
			t.Fatalf("%s: %v", tc.cql, err)
		}
		tb, _ := s.Table("ks", tc.name)
		if tb.ID != tc.want {
			t.Errorf("%s under rules %d, cluster %x: id %s, want %s", tc.cql, tc.rules, tc.cluster, tb.ID, tc.want)
		}
		wantRules := uint64(schema.RulesClusterTableIDs)
		if tc.want == mustUUID(t, "5a1c395e-b41f-11e5-9f22-ba0be0483c18") {
			wantRules = schema.RulesOriginal
		}
		if got := schema.StatementRules(parsed[0].Statement); got != wantRules {
			t.Errorf("%s: StatementRules %d, want %d", tc.cql, got, wantRules)
		}
	}
}

func mustUUID(t *testing.T, s string) schema.UUID {
	t.Helper()
	u, ok := schema.ParseUUID(s)
	if !ok {
		t.Fatalf("%q is not a UUID", s)
	}
	return u
}
