package schema

import (
	"strings"
	"testing"
)

// TestFilter: a filtered schema is the schema of only the kept keyspaces,
// digest, sizes and counts included, as if built from them alone.
func TestFilter(t *testing.T) {
	s := schemaWithTables(t, 5) // ks (5 tables), other0 .. other9
	others := func(ks string) bool { return strings.HasPrefix(ks, "other") }

	if got := s.Filter(nil); got.keyspaces != s.keyspaces || got.Digest() != s.Digest() {
		t.Fatal("a nil filter must return the schema itself")
	}
	if got := s.Filter(func(string) bool { return true }); got.keyspaces != s.keyspaces {
		t.Fatal("a filter keeping everything must return the schema itself")
	}
	if got := s.Filter(func(string) bool { return false }); got.KeyspaceCount() != 0 || got.Digest() != (Schema{}).Digest() || DescribeSchema(got) != DescribeSchema(Schema{}) {
		t.Fatalf("a filter keeping nothing: %d keyspaces, %s", got.KeyspaceCount(), DescribeSchema(got))
	}
	if got := (Schema{}).Filter(others); got.KeyspaceCount() != 0 {
		t.Fatal("the empty schema filtered must stay empty")
	}

	onlyKS := s.Filter(func(ks string) bool { return ks == "ks" })
	alone := schemaWithTables(t, 5)
	for i := range 10 {
		k, _ := alone.Keyspace("other" + string(rune('0'+i)))
		alone = alone.deleteKeyspace(k)
	}
	if onlyKS.Digest() != alone.Digest() || onlyKS.Digest() != ComputeDigest(onlyKS) || onlyKS.EncodedSize() != ComputeEncodedSize(onlyKS) ||
		onlyKS.ObjectCount() != alone.ObjectCount() || onlyKS.TableCount() != 5 || onlyKS.KeyspaceCount() != 1 {
		t.Fatalf("filtered to ks: digest %x (alone %x, computed %x), %d tables, %d keyspaces", onlyKS.Digest(), alone.Digest(), ComputeDigest(onlyKS), onlyKS.TableCount(), onlyKS.KeyspaceCount())
	}
	if DescribeSchema(onlyKS) != DescribeSchema(alone) {
		t.Fatalf("DESCRIBE of the filtered schema:\n%s\nwant:\n%s", DescribeSchema(onlyKS), DescribeSchema(alone))
	}
	if _, ok := onlyKS.Table("ks", "t3"); !ok {
		t.Fatal("ks.t3 missing from the filtered schema")
	}
	if _, ok := onlyKS.Keyspace("other3"); ok {
		t.Fatal("other3 visible in a schema filtered to ks")
	}

	o := s.Filter(others)
	if o.KeyspaceCount() != 10 || o.TableCount() != 0 || o.Digest() != ComputeDigest(o) {
		t.Fatalf("filtered to other*: %d keyspaces, %d tables", o.KeyspaceCount(), o.TableCount())
	}
	// The original is untouched.
	if s.KeyspaceCount() != 11 || s.Digest() != ComputeDigest(s) {
		t.Fatal("Filter changed the schema it filtered")
	}
}

// TestFilterDoesNotWalkTables: filtering costs the same allocations
// whatever the number of tables in the keyspaces, kept or not.
func TestFilterDoesNotWalkTables(t *testing.T) {
	small, large := schemaWithTables(t, 100), schemaWithTables(t, 4000)
	for name, keep := range map[string]func(string) bool{
		"keep the big keyspace": func(ks string) bool { return ks == "ks" || ks == "other1" },
		"drop the big keyspace": func(ks string) bool { return ks != "ks" },
		"keep all":              func(string) bool { return true },
	} {
		allocs := func(s Schema) float64 {
			return testing.AllocsPerRun(100, func() { _ = s.Filter(keep) })
		}
		a, b := allocs(small), allocs(large)
		if b != a {
			t.Errorf("%s: %v allocations with 4,000 tables, %v with 100", name, b, a)
		}
		if name == "keep all" && a != 0 {
			t.Errorf("keeping every keyspace allocates %v times, want 0", a)
		}
	}
}
