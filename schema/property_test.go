package schema_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// TestModel applies random sequences of creates and drops and checks that
// the schema agrees with a plain map model after every step, and that old
// schemas are never modified.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ksNames := []string{"a", "b", "c"}
		tableNames := []string{"t1", "t2", "t3", "t4"}
		model := map[string]map[string]bool{}
		var s schema.Schema
		type snapshot struct {
			s           schema.Schema
			ks, tables  int
			description string
		}
		var history []snapshot
		n := rapid.IntRange(1, 60).Draw(t, "steps")
		for i := 0; i < n; i++ {
			ks := rapid.SampledFrom(ksNames).Draw(t, "ks")
			tbl := rapid.SampledFrom(tableNames).Draw(t, "table")
			cond := rapid.Bool().Draw(t, "if")
			var st schema.Statement
			var wantCode error
			wantApplied := false
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); op {
			case 0:
				st = &schema.CreateKeyspace{Name: ks, IfNotExists: cond, Replication: schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}}}
				if model[ks] == nil {
					model[ks] = map[string]bool{}
					wantApplied = true
				} else if !cond {
					wantCode = schema.ErrAlreadyExists
				}
			case 1:
				st = &schema.DropKeyspace{Name: ks, IfExists: cond}
				if model[ks] != nil {
					delete(model, ks)
					wantApplied = true
				} else if !cond {
					wantCode = schema.ErrNotFound
				}
			case 2:
				st = &schema.CreateTable{Keyspace: ks, Name: tbl, IfNotExists: cond, Columns: []schema.ColumnDef{{Name: "id", Type: schema.TypeInt, PrimaryKey: true}}}
				switch {
				case model[ks] == nil:
					wantCode = schema.ErrNotFound
				case !model[ks][tbl]:
					model[ks][tbl] = true
					wantApplied = true
				case !cond:
					wantCode = schema.ErrAlreadyExists
				}
			case 3:
				st = &schema.DropTable{Keyspace: ks, Name: tbl, IfExists: cond}
				switch {
				case model[ks][tbl]:
					delete(model[ks], tbl)
					wantApplied = true
				case !cond:
					wantCode = schema.ErrNotFound
				}
			}
			ns, diff, res, err := schema.Apply(s, st, schema.Env{Epoch: uint64(i + 1)})
			if wantCode != nil {
				if !errors.Is(err, wantCode) {
					t.Fatalf("%s %s: err %v, want %v", st.Kind(), st.Object(), err, wantCode)
				}
			} else if err != nil {
				t.Fatalf("%s %s: %v", st.Kind(), st.Object(), err)
			}
			if res.Applied != wantApplied || (len(diff.Changes) == 1) != wantApplied || len(diff.Changes) > 1 {
				t.Fatalf("%s %s: applied %v with %d changes, want applied %v", st.Kind(), st.Object(), res.Applied, len(diff.Changes), wantApplied)
			}
			history = append(history, snapshot{s, s.KeyspaceCount(), s.TableCount(), describe.Schema(s)})
			s = ns
			total := 0
			for name, tables := range model {
				k, ok := s.Keyspace(name)
				if !ok || k.TableCount() != len(tables) {
					t.Fatalf("keyspace %s: present %v, %d tables; model has %d", name, ok, k.TableCount(), len(tables))
				}
				for tn := range tables {
					if _, ok := s.Table(name, tn); !ok {
						t.Fatalf("table %s.%s missing", name, tn)
					}
				}
				total += len(tables)
			}
			if s.KeyspaceCount() != len(model) || s.TableCount() != total || len(s.Keyspaces()) != len(model) {
				t.Fatalf("counts: %d keyspaces, %d tables; model %d, %d", s.KeyspaceCount(), s.TableCount(), len(model), total)
			}
		}
		for i, h := range history {
			if h.s.KeyspaceCount() != h.ks || h.s.TableCount() != h.tables || describe.Schema(h.s) != h.description {
				t.Fatalf("schema of step %d changed after later applies", i)
			}
		}
	})
}

// tableOpts compares tables and keyspaces structurally.
var tableOpts = cmp.Options{cmpopts.IgnoreUnexported(schema.Keyspace{}), cmpopts.EquateEmpty()}

// TestEncodingRoundTrip checks that decoding an encoded table or keyspace
// gives an equal value and that encoding is canonical.
func TestEncodingRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cks := schematest.CreateKeyspace(t)
		s, diff, _, err := schema.Apply(schema.Schema{}, cks, schema.Env{Epoch: 1})
		if err != nil {
			t.Fatalf("CREATE KEYSPACE: %v", err)
		}
		k := diff.Changes[0].KeyspaceValue
		kb := schema.AppendKeyspace(nil, k)
		k2, err := schema.DecodeKeyspace(kb)
		if err != nil {
			t.Fatalf("DecodeKeyspace: %v", err)
		}
		if d := cmp.Diff(k, k2, tableOpts); d != "" {
			t.Fatalf("keyspace round trip (-want +got):\n%s", d)
		}
		if string(schema.AppendKeyspace([]byte("x"), k2)[1:]) != string(kb) {
			t.Fatalf("keyspace encoding is not canonical")
		}

		ct := schematest.CreateTable(t, k.Name)
		_, diff, _, err = schema.Apply(s, ct, schema.Env{Epoch: rapid.Uint64().Draw(t, "epoch")})
		if err != nil {
			t.Fatalf("CREATE TABLE: %v", err)
		}
		tbl := diff.Changes[0].TableValue
		b := schema.AppendTable(nil, tbl)
		tbl2, err := schema.DecodeTable(b)
		if err != nil {
			t.Fatalf("DecodeTable: %v\n%s", err, describe.Table(tbl))
		}
		if d := cmp.Diff(tbl, tbl2, tableOpts); d != "" {
			t.Fatalf("table round trip (-want +got):\n%s", d)
		}
		if string(schema.AppendTable(nil, tbl2)) != string(b) {
			t.Fatalf("table encoding is not canonical")
		}
	})
}
