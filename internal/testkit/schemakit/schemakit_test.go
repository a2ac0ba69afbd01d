package schemakit

import (
	"testing"

	"github.com/metalog/metalog/schema"
)

const base = `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.a (id int PRIMARY KEY);
CREATE TABLE ks.b (id int PRIMARY KEY)`

// TestEnvs: Exec applies every statement, each at its own epoch from 1;
// OneEpoch gives one epoch with Seq counting the statements.
func TestEnvs(t *testing.T) {
	s, diff := Exec(t, schema.Schema{}, base)
	a, _ := s.Table("ks", "a")
	b, _ := s.Table("ks", "b")
	if a == nil || b == nil || a.ID == b.ID || diff.Empty() {
		t.Fatalf("Exec: tables %v %v, diff %v", a, b, diff)
	}
	if got := EpochEach(5)(2); got.Epoch != 7 || got.Seq != 0 {
		t.Errorf("EpochEach(5)(2) = %+v", got)
	}
	if got := OneEpoch(5)(2); got.Epoch != 5 || got.Seq != 2 {
		t.Errorf("OneEpoch(5)(2) = %+v", got)
	}
	if Build(t, base).TableCount() != 2 {
		t.Error("Build: not two tables")
	}
}

// TestApplyOneAndLast: they return the outcome of the statement asked for,
// refusals included, after applying what comes before it.
func TestApplyOneAndLast(t *testing.T) {
	s := Build(t, base)
	if _, _, _, err := ApplyOne(t, s, "DROP TABLE ks.zz", schema.Env{Epoch: 9}); err == nil {
		t.Error("ApplyOne: dropping a missing table applied")
	}
	got, _, res, err := ApplyLast(t, schema.Schema{}, base+";DROP TABLE ks.a", EpochEach(1), schema.Env{Epoch: 9})
	if err != nil || !res.Applied || got.TableCount() != 1 {
		t.Errorf("ApplyLast: %v, applied %v, %d tables", err, res.Applied, got.TableCount())
	}
}
