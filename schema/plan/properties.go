package plan

import (
	"sort"

	"github.com/metalog/metalog/schema"
)

// propertyDefaults are Cassandra's defaults (4.x and 5.0, as DESCRIBE shows
// them for a table created without the property) of the table properties,
// in the canonical text schema stores. A property the desired table leaves
// out but the current one sets is reset to its default; one missing here
// is reported and left alone. TestPropertyDefaults checks that every
// text is what schema.Apply stores for it.
var propertyDefaults = map[string]string{
	"additional_write_policy":     "'99p'",
	"allow_auto_snapshot":         "true",
	"bloom_filter_fp_chance":      "0.01",
	"caching":                     "{'keys': 'ALL', 'rows_per_partition': 'NONE'}",
	"cdc":                         "false",
	"comment":                     "''",
	"compaction":                  "{'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}",
	"compression":                 "{'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}",
	"crc_check_chance":            "1",
	"default_time_to_live":        "0",
	"extensions":                  "{}",
	"gc_grace_seconds":            "864000",
	"incremental_backups":         "true",
	"max_index_interval":          "2048",
	"memtable":                    "'default'",
	"memtable_flush_period_in_ms": "0",
	"min_index_interval":          "128",
	"read_repair":                 "'BLOCKING'",
	"speculative_retry":           "'99p'",
}

// property is a table property and its value in canonical CQL text.
type property struct {
	name, value string
}

// propertyChanges returns the properties ALTER TABLE ... WITH must set to
// turn cur's into want's, in name order: those want sets to another value
// than cur (or that cur leaves out), and those cur sets and want leaves
// out, reset to their default unless cur already has it. It also returns
// the properties cur sets that want leaves out and that have no known
// default, which are left as they are.
func propertyChanges(cur, want *schema.Table) (set []property, unknown []string) {
	for name, v := range want.Options() {
		if old, ok := cur.Options()[name]; !ok || old != v {
			set = append(set, property{name, v})
		}
	}
	for name, v := range cur.Options() {
		if _, ok := want.Options()[name]; ok {
			continue
		}
		def, known := propertyDefaults[name]
		switch {
		case !known:
			unknown = append(unknown, name)
		case v != def:
			set = append(set, property{name, def})
		}
	}
	sort.Slice(set, func(i, j int) bool { return set[i].name < set[j].name })
	sort.Strings(unknown)
	return set, unknown
}

// PropertyDefault returns Cassandra's default of table property name in
// canonical text, as a plan resets a property the desired table leaves
// out: a table that sets a property to its default and one that leaves it
// out are the same to Cassandra, though DESCRIBE shows only the first's.
func PropertyDefault(name string) (string, bool) {
	v, ok := propertyDefaults[name]
	return v, ok
}
