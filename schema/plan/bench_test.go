package plan

import (
	"fmt"
	"testing"

	"github.com/metalog/metalog/schema"
)

// BenchmarkDiff plans one added column in a schema of 10 keyspaces of
// 1,000 tables each, the desired schema derived from the current one as
// an epoch is: unchanged keyspaces and tables are the same values, which
// Diff skips without comparing them.
func BenchmarkDiff(b *testing.B) {
	var s schema.Schema
	apply := func(st schema.Statement, epoch uint64) {
		var err error
		if s, _, _, err = schema.Apply(s, st, schema.Env{Epoch: epoch}); err != nil {
			b.Fatal(err)
		}
	}
	epoch := uint64(1)
	for k := range 10 {
		ks := fmt.Sprintf("ks%d", k)
		apply(&schema.CreateKeyspace{Name: ks, Replication: schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "3"}}, DurableWrites: true}, epoch)
		epoch++
		for i := range 1000 {
			apply(&schema.CreateTable{Keyspace: ks, Name: fmt.Sprintf("t%d", i), Columns: []schema.ColumnDef{
				{Name: "id", Type: schema.TypeUUID, PrimaryKey: true}, {Name: "v", Type: schema.TypeText}}}, epoch)
			epoch++
		}
	}
	from := s
	apply(&schema.AlterTable{Keyspace: "ks3", Name: "t500", Add: []schema.ColumnDef{{Name: "w", Type: schema.TypeInt}}}, epoch)
	to := s
	b.ResetTimer()
	for b.Loop() {
		p, err := Diff(from, to, Options{Prune: true})
		if err != nil || len(p.Statements) != 1 {
			b.Fatalf("%v %+v", err, p)
		}
	}
}
