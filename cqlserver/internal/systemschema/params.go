package systemschema

import (
	"strings"

	"github.com/metalog/metalog/schema"
)

// Cassandra 5.0's table parameter defaults, which its tables and views
// rows hold when a table does not set them (TableParams and the default
// compaction, compression and caching).
const (
	defaultRetry         = "99p"
	defaultFPChance      = 0.01
	defaultFPChanceLCS   = 0.1
	defaultGCGrace       = 864000
	defaultMinIndex      = 128
	defaultMaxIndex      = 2048
	defaultReadRepair    = "BLOCKING"
	defaultChunkLengthKB = "16"
	compactionPrefix     = "org.apache.cassandra.db.compaction."
	defaultCompaction    = compactionPrefix + "SizeTieredCompactionStrategy"
	defaultCompressor    = "org.apache.cassandra.io.compress.LZ4Compressor"
)

// thresholdStrategies are the compaction strategies Cassandra gives
// min_threshold and max_threshold defaults (4 and 32) in the map it
// stores.
var thresholdStrategies = map[string]bool{
	compactionPrefix + "SizeTieredCompactionStrategy": true,
	compactionPrefix + "LeveledCompactionStrategy":    true,
	compactionPrefix + "TimeWindowCompactionStrategy": true,
}

// setParams sets the table parameter columns of r from tb's options,
// Cassandra's defaults where tb sets none.
func setParams(r rowOf, tb *schema.Table) {
	o := tb.Options()
	compaction := compactionMap(o["compaction"])
	fp := defaultFPChance
	if compaction["class"] == compactionPrefix+"LeveledCompactionStrategy" {
		fp = defaultFPChanceLCS
	}
	compression, crc := compressionMap(o["compression"])
	r.set("additional_write_policy", retryText(o["additional_write_policy"]))
	r.set("bloom_filter_fp_chance", number(o["bloom_filter_fp_chance"], fp))
	r.set("caching", cachingMap(o["caching"]))
	r.set("comment", str(o["comment"], ""))
	r.set("compaction", compaction).set("compression", compression)
	r.set("crc_check_chance", number(o["crc_check_chance"], crc))
	r.set("dclocal_read_repair_chance", 0.0).set("read_repair_chance", 0.0)
	r.set("default_time_to_live", integer(o["default_time_to_live"], 0))
	r.set("extensions", extensions(o["extensions"]))
	r.set("gc_grace_seconds", integer(o["gc_grace_seconds"], defaultGCGrace))
	r.set("max_index_interval", integer(o["max_index_interval"], defaultMaxIndex))
	r.set("min_index_interval", integer(o["min_index_interval"], defaultMinIndex))
	r.set("memtable_flush_period_in_ms", integer(o["memtable_flush_period_in_ms"], 0))
	r.set("read_repair", str(o["read_repair"], defaultReadRepair))
	r.set("speculative_retry", retryText(o["speculative_retry"]))
	// Cassandra writes these only when they differ from the defaults (cdc
	// only on a node with CDC on, memtable only for a configuration other
	// than the default, the others only when false): null otherwise.
	if b, ok := schema.OptionBool(o["cdc"]); ok {
		r.set("cdc", b)
	}
	if m, ok := schema.OptionString(o["memtable"]); ok && m != "default" {
		r.set("memtable", m)
	}
	for _, name := range []string{"allow_auto_snapshot", "incremental_backups"} {
		if b, ok := schema.OptionBool(o[name]); ok && !b {
			r.set(name, false)
		}
	}
}

// str returns the string option text holds, def when unset.
func str(text, def string) string {
	if s, ok := schema.OptionString(text); ok {
		return s
	}
	return def
}

// number returns the number option text holds, def when unset.
func number(text string, def float64) float64 {
	if f, ok := schema.OptionNumber(text); ok {
		return f
	}
	return def
}

// integer returns the int option text holds, def when unset.
func integer(text string, def int32) int32 {
	if n, ok := schema.OptionInt(text); ok {
		return n
	}
	return def
}

// retryText returns a retry policy as system_schema holds it: the
// canonical forms metalog keeps (NONE, ALWAYS, 99p, 50ms, MIN(99p,50ms)).
// Cassandra prints its never-speculate policy as NEVER, which it also
// reads as NONE; metalog writes NONE, the word both accept, so that a
// driver's export of the schema (which copies these values) loads into
// metalog as into Cassandra.
func retryText(text string) string {
	return str(text, defaultRetry)
}

// cachingMap returns the caching map with Cassandra's defaults for the
// keys the option leaves out.
func cachingMap(text string) map[string]string {
	m := map[string]string{"keys": "ALL", "rows_per_partition": "NONE"}
	if set, ok := schema.OptionMap(text); ok {
		for k, v := range set {
			m[k] = v
		}
	}
	return m
}

// compactionMap returns the compaction map: the strategy class (size
// tiered by default) and its options, with the thresholds' defaults for
// the strategies that take them.
func compactionMap(text string) map[string]string {
	m, ok := schema.OptionMap(text)
	if !ok || m["class"] == "" {
		m = map[string]string{"class": defaultCompaction}
	}
	if thresholdStrategies[m["class"]] {
		if _, ok := m["min_threshold"]; !ok {
			m["min_threshold"] = "4"
		}
		if _, ok := m["max_threshold"]; !ok {
			m["max_threshold"] = "32"
		}
	}
	return m
}

// compressionMap returns the compression map as Cassandra stores it, and
// the crc_check_chance it carries (1 when none): {'enabled': 'false'}
// when compression is off, otherwise the class (LZ4 by default), the
// chunk length (16 KiB by default) and the other options, without
// 'enabled' and 'crc_check_chance', which Cassandra keeps as a table
// parameter.
func compressionMap(text string) (map[string]string, float64) {
	m, ok := schema.OptionMap(text)
	if !ok {
		m = map[string]string{}
	}
	crc := 1.0
	if c, ok := schema.OptionNumber(m["crc_check_chance"]); ok {
		crc = c
	}
	if strings.EqualFold(m["enabled"], "false") {
		return map[string]string{"enabled": "false"}, crc
	}
	delete(m, "enabled")
	delete(m, "crc_check_chance")
	if m["class"] == "" {
		m["class"] = defaultCompressor
	}
	if m["chunk_length_in_kb"] == "" {
		m["chunk_length_in_kb"] = defaultChunkLengthKB
	}
	return m, crc
}

// extensions returns the extensions map, empty when unset.
func extensions(text string) map[string][]byte {
	if m, ok := schema.OptionBlobMap(text); ok {
		return m
	}
	return map[string][]byte{}
}
