package schema_test

import (
	"testing"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"pgregory.net/rapid"
)

// fingerprint is the encoding of every object of s, which identifies s.
func fingerprint(s schema.Schema) string {
	var b []byte
	for _, k := range s.Keyspaces() {
		b = schema.AppendKeyspace(b, k)
		for _, t := range k.Tables() {
			b = schema.AppendTable(b, t)
		}
		for _, ut := range k.UserTypes() {
			b = schema.AppendUserType(b, ut)
		}
		for _, ix := range k.Indexes() {
			b = schema.AppendIndex(b, ix)
		}
	}
	return string(b)
}

// randomStatement draws a statement over a small name space, so that
// creates, alters and drops collide often.
func randomStatement(t *rapid.T, s schema.Schema) schema.Statement {
	ks := rapid.SampledFrom([]string{"a", "b"}).Draw(t, "ks")
	k, _ := s.Keyspace(ks)
	var types, tables []string
	for _, ut := range k.UserTypes() {
		types = append(types, ut.Name)
	}
	for _, tb := range k.Tables() {
		tables = append(tables, tb.Name)
	}
	pick := func(names []string, label string) string {
		if len(names) == 0 {
			return "none"
		}
		return rapid.SampledFrom(names).Draw(t, label)
	}
	switch rapid.IntRange(0, 11).Draw(t, "op") {
	case 0:
		ck := schematest.CreateKeyspace(t)
		ck.Name = ks
		return ck
	case 1:
		return &schema.DropKeyspace{Name: ks}
	case 2:
		rf := "2"
		return &schema.AlterKeyspace{Name: ks, Replication: &schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": rf}}}
	case 3, 4:
		return schematest.CreateTableWithTypes(t, ks, types)
	case 5:
		return schematest.CreateType(t, ks, types)
	case 6:
		return &schema.DropType{Keyspace: ks, Name: pick(types, "type")}
	case 7:
		return &schema.DropTable{Keyspace: ks, Name: pick(tables, "table")}
	case 8:
		tb, ok := k.Table(pick(tables, "table"))
		if !ok {
			return &schema.DropTable{Keyspace: ks, Name: "none"}
		}
		return &schema.CreateIndex{Keyspace: ks, Table: tb.Name, Target: schema.IndexTarget{Column: rapid.SampledFrom(tb.Columns).Draw(t, "column").Name}}
	case 9:
		tb, ok := k.Table(pick(tables, "table"))
		if !ok {
			return &schema.DropTable{Keyspace: ks, Name: "none"}
		}
		return &schema.AlterTable{Keyspace: ks, Name: tb.Name, Drop: []string{rapid.SampledFrom(tb.Columns).Draw(t, "column").Name}}
	case 10:
		return &schema.AlterTable{Keyspace: ks, Name: pick(tables, "table"), Add: []schema.ColumnDef{{Name: schematest.ColumnName(t, "new column"), Type: schematest.RegularType(t, "new type")}}}
	default:
		idx := k.Indexes()
		if len(idx) == 0 {
			return &schema.DropIndex{Keyspace: ks, Name: "none", IfExists: true}
		}
		return &schema.DropIndex{Keyspace: ks, Name: rapid.SampledFrom(idx).Draw(t, "index").Name}
	}
}

// TestDigest checks that the incremental digest always equals the one
// computed from scratch, and that different schemas have different
// digests.
func TestDigest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s schema.Schema
		seen := map[[32]byte]string{schema.ComputeDigest(s): fingerprint(s)}
		for i := range rapid.IntRange(1, 40).Draw(t, "steps") {
			st := randomStatement(t, s)
			ns, diff, _, err := schema.Apply(s, st, schema.Env{Epoch: uint64(i + 1)})
			if err != nil {
				continue
			}
			if ns.Digest() != schema.ComputeDigest(ns) {
				t.Fatalf("after %s %s: incremental digest %x, computed %x", st.Kind(), st.Object(), ns.Digest(), schema.ComputeDigest(ns))
			}
			fp := fingerprint(ns)
			if prev, ok := seen[ns.Digest()]; ok && prev != fp {
				t.Fatalf("two different schemas share digest %x", ns.Digest())
			}
			seen[ns.Digest()] = fp
			if diff.Empty() != (fp == fingerprint(s)) && st.Kind() != "ALTER KEYSPACE" {
				t.Fatalf("%s %s: diff %+v but schema changed %v", st.Kind(), st.Object(), diff, fp != fingerprint(s))
			}
			s = ns
		}
		// Loading the objects with the builders gives the same digest.
		var b schema.Builder
		for _, k := range s.Keyspaces() {
			b.PutKeyspace(&schema.Keyspace{Name: k.Name, Replication: k.Replication, DurableWrites: k.DurableWrites})
			for _, ut := range k.UserTypes() {
				if err := b.PutUserType(ut); err != nil {
					t.Fatal(err)
				}
			}
			for _, tb := range k.Tables() {
				if err := b.PutTable(tb); err != nil {
					t.Fatal(err)
				}
			}
			for _, ix := range k.Indexes() {
				if err := b.PutIndex(ix); err != nil {
					t.Fatal(err)
				}
			}
		}
		loaded := b.Schema()
		if loaded.Digest() != s.Digest() || fingerprint(loaded) != fingerprint(s) {
			t.Fatalf("loaded schema differs")
		}
	})
}

// TestEncodedSize checks that the incremental encoded size always equals
// the one computed from scratch and the length of the fingerprint (which
// concatenates every object's encoding), after random changes and after
// loading the objects with the builders.
func TestEncodedSize(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s schema.Schema
		if s.EncodedSize() != 0 || schema.ComputeEncodedSize(s) != 0 {
			t.Fatalf("empty schema has size %d (computed %d)", s.EncodedSize(), schema.ComputeEncodedSize(s))
		}
		for i := range rapid.IntRange(1, 40).Draw(t, "steps") {
			st := randomStatement(t, s)
			ns, _, _, err := schema.Apply(s, st, schema.Env{Epoch: uint64(i + 1)})
			if err != nil {
				if ns.EncodedSize() != s.EncodedSize() {
					t.Fatalf("failed %s %s changed the size", st.Kind(), st.Object())
				}
				continue
			}
			got, want := ns.EncodedSize(), schema.ComputeEncodedSize(ns)
			if got != want || want != int64(len(fingerprint(ns))) {
				t.Fatalf("after %s %s: incremental size %d, computed %d, fingerprint %d", st.Kind(), st.Object(), got, want, len(fingerprint(ns)))
			}
			if n := countObjects(ns); ns.ObjectCount() != n {
				t.Fatalf("after %s %s: object count %d, want %d", st.Kind(), st.Object(), ns.ObjectCount(), n)
			}
			s = ns
		}
		var b schema.Builder
		for _, k := range s.Keyspaces() {
			b.PutKeyspace(k) // a keyspace from another schema brings its objects
		}
		if loaded := b.Schema(); loaded.EncodedSize() != s.EncodedSize() {
			t.Fatalf("loaded schema has size %d, want %d", loaded.EncodedSize(), s.EncodedSize())
		}
		for _, k := range s.Keyspaces() {
			// Replacing a keyspace record keeps its objects and adjusts the size.
			c := *k
			c.DurableWrites = !k.DurableWrites
			b.PutKeyspace(&c)
		}
		loaded := b.Schema()
		if loaded.EncodedSize() != schema.ComputeEncodedSize(loaded) {
			t.Fatalf("after PutKeyspace: size %d, computed %d", loaded.EncodedSize(), schema.ComputeEncodedSize(loaded))
		}
	})
}

// countObjects counts keyspaces, tables, types and indexes by walking s.
func countObjects(s schema.Schema) int64 {
	var n int64
	for _, k := range s.Keyspaces() {
		n += 1 + int64(len(k.Tables())+len(k.UserTypes())+len(k.Indexes()))
	}
	return n
}
