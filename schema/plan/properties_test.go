package plan

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPropertyDefaults checks that every default is the canonical text
// schema.Apply stores for it, and that every property schema accepts
// (the keys of its tableProperties map, read from its source) has one.
func TestPropertyDefaults(t *testing.T) {
	for name, v := range propertyDefaults {
		s := mustLoad(t, ksHead+"CREATE TABLE ks.t (id int PRIMARY KEY) WITH "+name+" = "+v)
		tbl, _ := s.Table("ks", "t")
		if got := tbl.Options()[name]; got != v {
			t.Errorf("default of %s: Apply stores %q for %q", name, got, v)
		}
	}
	src, err := os.ReadFile("../table_properties.go")
	if err != nil {
		t.Fatal(err)
	}
	block, _, _ := strings.Cut(string(src[strings.Index(string(src), "var tableProperties"):]), "\n}\n")
	names := regexp.MustCompile(`(?m)^\s+"([a-z_]+)":`).FindAllStringSubmatch(block, -1)
	if len(names) < 10 {
		t.Fatalf("found only %d properties in schema's source", len(names))
	}
	for _, m := range names {
		if _, ok := propertyDefaults[m[1]]; !ok {
			t.Errorf("table property %s has no default in propertyDefaults", m[1])
		}
	}
}

// TestPropertyOnlyChanges checks that a table whose properties alone
// differ gets one ALTER TABLE ... WITH of just the differing properties,
// in name order (a property the desired table leaves out reset to its
// default, unless it is at its default already), and a keyspace one
// ALTER KEYSPACE of just what differs.
func TestPropertyOnlyChanges(t *testing.T) {
	from := mustLoad(t, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE ks.t (id int PRIMARY KEY, v text) WITH comment = 'old' AND gc_grace_seconds = 3600
	AND compaction = {'class': 'LeveledCompactionStrategy'} AND crc_check_chance = 1.0 AND caching = {'keys': 'NONE'}`)
	to := mustLoad(t, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1} AND durable_writes = false;
CREATE TABLE ks.t (id int PRIMARY KEY, v text) WITH comment = 'new' AND compaction = {'class': 'LeveledCompactionStrategy'}
	AND default_time_to_live = 86400`)
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"ALTER KEYSPACE ks WITH durable_writes = false",
		"ALTER TABLE ks.t WITH caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} AND comment = 'new' AND default_time_to_live = 86400 AND gc_grace_seconds = 864000",
	})
	if p.Destructive || len(p.Warnings) > 0 {
		t.Errorf("property changes are not destructive: %+v", p)
	}
	got := applyPlan(t, from, p)
	eq := &equivalence{}
	checkEquivalent(t, got, to, from, eq, p)
	if eq.defaults != 3 {
		t.Errorf("want the three reset or default properties set explicitly, normalized %d", eq.defaults)
	}
	checkConverged(t, got, to, Options{})

	// A property set on the desired side to the value current has by
	// default is still written, so that DESCRIBE shows it alike.
	p, err = Diff(to, from, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{
		"ALTER KEYSPACE ks WITH durable_writes = true",
		"ALTER TABLE ks.t WITH caching = {'keys': 'NONE'} AND comment = 'old' AND crc_check_chance = 1 AND default_time_to_live = 0 AND gc_grace_seconds = 3600",
	})
}

// TestReplicationChange checks ALTER KEYSPACE of the replication alone.
func TestReplicationChange(t *testing.T) {
	from := mustLoad(t, "CREATE KEYSPACE \"Shop\" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}")
	to := mustLoad(t, "CREATE KEYSPACE \"Shop\" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': '2'}")
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{`ALTER KEYSPACE "Shop" WITH replication = {'class': 'org.apache.cassandra.locator.NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2'}`})
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
}
