package systemschema_test

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// describeAll is DESCRIBE as the CQL listener prints a table: no id,
// every option.
var describeAll = describe.Options{OmitID: true, Properties: systemschema.DescribeOptions}

// TestDescribeOptionsRoundTrip: a table described with every option
// (DescribeOptions), applied to a fresh schema, describes the same; and a
// table that sets options to their defaults describes as one that leaves
// them unset.
func TestDescribeOptionsRoundTrip(t *testing.T) {
	const ks = "CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n"
	s := schemakit.Build(t, ks+`
CREATE TABLE shop.plain (id int PRIMARY KEY, v text);
CREATE TABLE shop.tuned (id int, at int, v text, PRIMARY KEY (id, at)) WITH CLUSTERING ORDER BY (at DESC)
  AND compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': '64'}
  AND compression = {'enabled': 'false'} AND caching = {'keys': 'NONE'} AND comment = 'it''s tuned'
  AND speculative_retry = 'NONE' AND additional_write_policy = '50ms' AND gc_grace_seconds = 3600
  AND default_time_to_live = 60 AND bloom_filter_fp_chance = 0.0001 AND crc_check_chance = 0.5
  AND read_repair = 'NONE' AND cdc = true AND memtable_flush_period_in_ms = 1000;
CREATE TABLE shop.defaults (id int PRIMARY KEY, v text) WITH bloom_filter_fp_chance = 0.01
  AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'} AND gc_grace_seconds = 864000
  AND compaction = {'class': 'SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'};
CREATE MATERIALIZED VIEW shop.by_v AS SELECT * FROM shop.plain WHERE v IS NOT NULL AND id IS NOT NULL PRIMARY KEY (v, id);`)
	k, _ := s.Keyspace("shop")
	for _, tb := range k.Tables() {
		first := describeAll.Table(tb)
		base := ""
		if tb.IsView() {
			base = describeAll.Table(mustTable(t, s, tb.View().Base)) + "\n"
		}
		again := schemakit.Build(t, ks+base+first)
		tb2, _ := again.Table("shop", tb.Name)
		if second := describeAll.Table(tb2); second != first {
			t.Errorf("%s: described\n%s\nthen, applied and described again\n%s", tb.Name, first, second)
		}
		if strings.Contains(first, "default_time_to_live") == tb.IsView() {
			t.Errorf("%s: default_time_to_live printed for a view, or left out for a table:\n%s", tb.Name, first)
		}
	}
	plain, defaults := mustTable(t, s, "plain"), mustTable(t, s, "defaults")
	strip := func(stmt, name string) string { return strings.Replace(stmt, "shop."+name+" ", "shop.x ", 1) }
	if a, b := strip(describeAll.Table(plain), "plain"), strip(describeAll.Table(defaults), "defaults"); a != b {
		t.Errorf("options set to their defaults describe otherwise than unset:\n%s\n%s", a, b)
	}
	tuned := describeAll.Table(mustTable(t, s, "tuned"))
	for _, want := range []string{"bloom_filter_fp_chance = 1.0E-4\n", "crc_check_chance = 0.5\n", "speculative_retry = 'NONE';"} {
		if !strings.Contains(tuned, want) {
			t.Errorf("tuned table:\n%s\nwant %q in it (Java's double text; NONE, not NEVER)", tuned, want)
		}
	}
	want := ") WITH additional_write_policy = '99p'\n    AND allow_auto_snapshot = true\n    AND bloom_filter_fp_chance = 0.01\n"
	if got := describeAll.Table(plain); !strings.Contains(got, want) || !strings.HasSuffix(got, "AND speculative_retry = '99p';\n") {
		t.Errorf("plain table:\n%s\nwant Cassandra's defaults in its order", got)
	}
}

func mustTable(t *testing.T, s schema.Schema, name string) *schema.Table {
	t.Helper()
	tb, ok := s.Table("shop", name)
	if !ok {
		t.Fatalf("no table shop.%s", name)
	}
	return tb
}
