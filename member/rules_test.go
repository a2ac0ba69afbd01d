package member

import (
	"testing"

	"github.com/metalog/metalog/schema"
)

// TestCommandRules: a request is logged under the rules its statements
// need, so that one without an ALTER TABLE ... DROP or a table created
// without an id is logged as before the rules versions, and an older
// member of a rolling upgrade applies it; one that creates a table carries
// the member's cluster id, which the table's id derives from.
func TestCommandRules(t *testing.T) {
	m := startMember(t, nil)
	cluster := m.core.node.ClusterID()
	if cluster == 0 {
		t.Fatal("the member has no cluster id")
	}
	for _, tc := range []struct {
		cql  string
		want uint64
	}{
		{"CREATE TABLE ks.t (id int PRIMARY KEY) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", schema.RulesOriginal},
		{"ALTER TABLE ks.t ADD v int; DROP TABLE ks.u", schema.RulesOriginal},
		{"ALTER TABLE ks.t RENAME id TO k", schema.RulesOriginal},
		{"ALTER TABLE ks.t DROP v", schema.RulesDroppedKind},
		{"CREATE TABLE ks.t (id int PRIMARY KEY)", schema.RulesClusterTableIDs},
		{"CREATE TABLE ks.u (id int PRIMARY KEY); ALTER TABLE ks.t DROP (v, w)", schema.RulesClusterTableIDs},
		{"CREATE TABLE ks.u LIKE ks.t", schema.RulesClusterTableIDs},
	} {
		cmd, _, err := m.writes.command(Request{Statements: tc.cql})
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Rules != tc.want {
			t.Errorf("%s: rules %d, want %d", tc.cql, cmd.Rules, tc.want)
		}
		wantCluster := uint64(0)
		if tc.want >= schema.RulesClusterTableIDs {
			wantCluster = cluster
		}
		if cmd.Cluster != wantCluster {
			t.Errorf("%s: cluster %x, want %x", tc.cql, cmd.Cluster, wantCluster)
		}
	}
}
