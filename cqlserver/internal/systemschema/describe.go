package systemschema

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// describedParams are the table parameters Cassandra 5.0's DESCRIBE
// prints, in its order (TableParams.appendCqlTo), and the default of
// each that system_schema holds as null.
var describedParams = []struct {
	name      string
	nullMeans any
}{
	{"additional_write_policy", nil}, {"allow_auto_snapshot", true}, {"bloom_filter_fp_chance", nil},
	{"caching", nil}, {"cdc", false}, {"comment", nil}, {"compaction", nil}, {"compression", nil},
	{"memtable", "default"}, {"crc_check_chance", nil}, {"default_time_to_live", nil}, {"extensions", nil},
	{"gc_grace_seconds", nil}, {"incremental_backups", true}, {"max_index_interval", nil},
	{"memtable_flush_period_in_ms", nil}, {"min_index_interval", nil}, {"read_repair", nil},
	{"speculative_retry", nil},
}

// DescribeOptions returns the options of table or view tb as Cassandra's
// DESCRIBE prints them: every parameter, "name = value", with the value
// its system_schema row holds (Cassandra's default where tb sets none),
// in Cassandra's order; a view has no default_time_to_live. Two tables
// that differ only in setting an option to its default or leaving it
// unset print the same, as in Cassandra, where the two are one.
func DescribeOptions(tb *schema.Table) []string {
	r := newRow(Tables)
	setParams(r, tb)
	out := make([]string, 0, len(describedParams))
	for _, p := range describedParams {
		if p.name == "default_time_to_live" && tb.IsView() {
			continue
		}
		v := r.row[Tables.ColumnIndex(p.name)]
		if v == nil {
			v = p.nullMeans
		}
		out = append(out, p.name+" = "+cqlLiteral(v))
	}
	return out
}

// cqlLiteral writes a parameter value as Cassandra's DESCRIBE does:
// strings quoted, numbers as Java prints a double or an int, maps as
// {'key': 'value'} in key order (blob values as hex, unquoted).
func cqlLiteral(v any) string {
	switch v := v.(type) {
	case string:
		return cqltext.QuoteString(v)
	case bool:
		return strconv.FormatBool(v)
	case int32:
		return strconv.Itoa(int(v))
	case float64:
		return javaDouble(v)
	case map[string]string:
		return mapLiteral(v, cqltext.QuoteString)
	case map[string][]byte:
		return mapLiteral(v, func(b []byte) string { return fmt.Sprintf("0x%x", b) })
	}
	panic(fmt.Sprintf("systemschema: no CQL literal for %T", v))
}

// mapLiteral writes m in key order, each value by value.
func mapLiteral[V any](m map[string]V, value func(V) string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cqltext.QuoteString(k))
		b.WriteString(": ")
		b.WriteString(value(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// javaDouble formats f as Java's Double.toString: the shortest decimal
// that reads back as f, with at least one digit after the point, in
// computerized scientific notation below 10^-3 and from 10^7 on.
func javaDouble(f float64) string {
	abs := math.Abs(f)
	if f == 0 || abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E-04
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}
