package schema

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Table properties are validated and stored in canonical CQL literal text,
// so that equal settings encode (and digest) equally and DESCRIBE prints
// them back: strings in single quotes, integers in decimal, fractions in
// Go's shortest 'g' form, booleans as true/false, maps with sorted keys and
// string values, compaction and compression classes fully qualified.

// propValue is a parsed literal of a property value.
type propValue struct {
	kind    byte // 's' string, 'n' number, 'b' boolean, 'm' map, 'c' list or set, 'x' blob, 'u' uuid
	text    string
	entries []propEntry
}

// propEntry is one key: value of a map literal.
type propEntry struct {
	key   string // the key's text (a string key's value)
	kkind byte
	value propValue
}

// tableProperties maps each known property to its canonicalizer, which
// returns the canonical text or the reason the value is wrong.
var tableProperties = map[string]func(v propValue) (string, string){
	"comment":                     stringProperty,
	"default_time_to_live":        intProperty(0, 630720000),
	"gc_grace_seconds":            intProperty(0, math.MaxInt32),
	"memtable_flush_period_in_ms": intProperty(0, math.MaxInt32),
	"min_index_interval":          intProperty(1, math.MaxInt32),
	"max_index_interval":          intProperty(1, math.MaxInt32),
	"bloom_filter_fp_chance":      fractionProperty(false),
	"crc_check_chance":            fractionProperty(true),
	"speculative_retry":           retryProperty,
	"additional_write_policy":     retryProperty,
	"read_repair":                 enumProperty("BLOCKING", "NONE"),
	"cdc":                         boolProperty,
	"caching":                     cachingProperty,
	"compaction":                  classMapProperty("org.apache.cassandra.db.compaction.", true),
	"compression":                 compressionProperty,
	"extensions":                  extensionsProperty,
	"memtable":                    stringProperty,
	"allow_auto_snapshot":         boolProperty,
	"incremental_backups":         boolProperty,
}

// IsTableProperty reports whether name is a table property CREATE TABLE
// and ALTER TABLE accept (besides id and CLUSTERING ORDER BY).
func IsTableProperty(name string) bool {
	_, ok := tableProperties[name]
	return ok
}

// removedTableProperties are the table properties Cassandra once took and
// removed, each with the reason CREATE and ALTER TABLE and MATERIALIZED
// VIEW give when a statement sets one. Cassandra 4.0 removed the read
// repair chances (CASSANDRA-13910, with background read repair; its
// TableParams and TableAttributes have neither); index_interval,
// replicate_on_write and populate_io_cache_on_flush were obsolete in 2.1
// (accepted and ignored) and refused from 3.0, whose TableAttributes has no
// obsolete keywords left. metalog never accepted any of them, so no stored
// table holds one: they are refused as Invalid, with this reason, rather
// than as an unknown name, so that a schema written for an older Cassandra
// says what to do.
var removedTableProperties = map[string]string{
	"read_repair_chance":         "was removed in Cassandra 4.0 (CASSANDRA-13910, with background read repair): leave it out",
	"dclocal_read_repair_chance": "was removed in Cassandra 4.0 (CASSANDRA-13910, with background read repair): leave it out",
	"index_interval":             "was removed in Cassandra 3.0: use min_index_interval and max_index_interval",
	"replicate_on_write":         "was removed in Cassandra 3.0 (ignored since 2.1): leave it out",
	"populate_io_cache_on_flush": "was removed in Cassandra 3.0 (ignored since 2.1): leave it out",
}

// IsRemovedTableProperty reports whether name is a table property
// Cassandra removed (read_repair_chance and dclocal_read_repair_chance in
// 4.0, and the older ones 3.0 refuses), which CREATE and ALTER TABLE and
// MATERIALIZED VIEW refuse as ErrInvalid saying so. The parser lets such a
// name through, so that the refusal is that one and not an unknown name.
func IsRemovedTableProperty(name string) bool {
	_, ok := removedTableProperties[name]
	return ok
}

// canonicalOptions validates table properties given as CQL literal text and
// returns them in canonical form.
func canonicalOptions(opts map[string]string) (map[string]string, string) {
	if len(opts) == 0 {
		return nil, ""
	}
	out := make(map[string]string, len(opts))
	for _, name := range sortedKeys(opts) {
		if name == "id" {
			return nil, "the id property is the table id, not an option"
		}
		canon, ok := tableProperties[name]
		if !ok {
			if why, removed := removedTableProperties[name]; removed {
				return nil, "property " + name + " " + why
			}
			return nil, "unknown table property " + clip.Quote(name)
		}
		v, r := parsePropValue(opts[name])
		if r == "" {
			out[name], r = canon(v)
		}
		if r != "" {
			return nil, "property " + clip.String(name) + ": " + r
		}
	}
	minII, maxII := int64(128), int64(2048)
	if v, ok := out["min_index_interval"]; ok {
		minII, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := out["max_index_interval"]; ok {
		maxII, _ = strconv.ParseInt(v, 10, 64)
	}
	if maxII < minII {
		return nil, "max_index_interval (" + strconv.FormatInt(maxII, 10) + ") must be greater than or equal to min_index_interval (" + strconv.FormatInt(minII, 10) + ")"
	}
	return out, ""
}

// optionsReason checks that opts are known properties in canonical form.
func optionsReason(opts map[string]string) string {
	canon, r := canonicalOptions(opts)
	if r != "" {
		return r
	}
	for k, v := range opts {
		if canon[k] != v {
			return "property " + clip.String(k) + " is not in canonical form: " + clip.Quote(v)
		}
	}
	return ""
}

// stringProperty accepts a string, kept as written.
func stringProperty(v propValue) (string, string) {
	if v.kind != 's' {
		return "", "must be a string, not " + clip.String(v.text)
	}
	return cqltext.QuoteString(v.text), ""
}

// boolProperty accepts true or false, as a boolean or a string, in any
// case.
func boolProperty(v propValue) (string, string) {
	if v.kind == 'b' || v.kind == 's' {
		switch strings.ToLower(v.text) {
		case "true":
			return "true", ""
		case "false":
			return "false", ""
		}
	}
	return "", "must be true or false, not " + clip.String(v.text)
}

// number returns the numeric value of a number or of a string holding one
// (Cassandra reads property values as strings).
func (v propValue) number() (float64, bool) {
	if v.kind != 'n' && v.kind != 's' {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v.text), 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// intProperty accepts an integer in [lo, hi], as a number or a string.
func intProperty(lo, hi int64) func(v propValue) (string, string) {
	return func(v propValue) (string, string) {
		n, err := strconv.ParseInt(strings.TrimSpace(v.text), 10, 64)
		if (v.kind != 'n' && v.kind != 's') || err != nil {
			return "", "must be an integer, not " + clip.String(v.text)
		}
		if n < lo || n > hi {
			return "", "must be between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10) + ", not " + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10), ""
	}
}

// fractionProperty accepts numbers in (0, 1], or [0, 1] when zero is
// allowed.
func fractionProperty(zero bool) func(v propValue) (string, string) {
	return func(v propValue) (string, string) {
		f, ok := v.number()
		if !ok {
			return "", "must be a number, not " + clip.String(v.text)
		}
		if f > 1 || f < 0 || f == 0 && !zero {
			if zero {
				return "", "must be between 0 and 1, not " + clip.String(v.text)
			}
			return "", "must be greater than 0 and at most 1, not " + clip.String(v.text)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), ""
	}
}

// enumProperty accepts one of values as a string, in any case, and keeps
// it in the case given here.
func enumProperty(values ...string) func(v propValue) (string, string) {
	return func(v propValue) (string, string) {
		if v.kind == 's' {
			for _, e := range values {
				if strings.EqualFold(v.text, e) {
					return cqltext.QuoteString(e), ""
				}
			}
		}
		return "", "must be one of " + strings.Join(values, ", ") + ", not " + clip.String(v.text)
	}
}

// retryProperty canonicalizes a speculative retry policy: NONE, ALWAYS,
// <n>p or <n>percentile, <n>ms, MIN(...) or MAX(...) of a percentile and a
// fixed policy.
func retryProperty(v propValue) (string, string) {
	if v.kind != 's' {
		return "", "must be a string such as '99p' or '50ms', not " + clip.String(v.text)
	}
	c, ok := retryPolicy(strings.TrimSpace(v.text), true)
	if !ok {
		return "", "invalid speculative retry policy " + quoteStringClip(v.text) + ": expected NONE, ALWAYS, <n>p, <n>ms, MIN(<n>p,<n>ms) or MAX(<n>p,<n>ms)"
	}
	return cqltext.QuoteString(c), ""
}

// retryPolicy canonicalizes one retry policy; hybrid allows MIN(...) and
// MAX(...), whose two parts must be a percentile and a fixed time, in
// that order once canonical.
func retryPolicy(s string, hybrid bool) (string, bool) {
	u := strings.ToUpper(s)
	switch u {
	case "NONE", "ALWAYS":
		return u, true
	}
	if hybrid && (strings.HasPrefix(u, "MIN(") || strings.HasPrefix(u, "MAX(")) && strings.HasSuffix(u, ")") {
		a, b, ok := strings.Cut(s[4:len(s)-1], ",")
		if !ok {
			return "", false
		}
		pa, ok1 := retryPolicy(strings.TrimSpace(a), false)
		pb, ok2 := retryPolicy(strings.TrimSpace(b), false)
		if !ok1 || !ok2 || strings.HasSuffix(pa, "ms") == strings.HasSuffix(pb, "ms") || pa == "NONE" || pb == "NONE" || pa == "ALWAYS" || pb == "ALWAYS" {
			return "", false
		}
		if strings.HasSuffix(pa, "ms") {
			pa, pb = pb, pa
		}
		return u[:3] + "(" + pa + "," + pb + ")", true
	}
	num, unit := u, ""
	for _, suffix := range []string{"PERCENTILE", "MS", "P"} {
		if n, ok := strings.CutSuffix(u, suffix); ok {
			num, unit = n, suffix
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if unit == "" || err != nil || math.IsNaN(f) || f < 0 {
		return "", false
	}
	if unit == "MS" {
		return strconv.FormatFloat(f, 'f', -1, 64) + "ms", true
	}
	if f <= 0 || f >= 100 {
		return "", false
	}
	return strconv.FormatFloat(f, 'f', -1, 64) + "p", true
}

// stringMap checks that v is a map with string keys and scalar values and
// returns it with every value as a string.
func stringMap(v propValue) (map[string]string, string) {
	if v.kind != 'm' {
		return nil, "must be a map, not " + clip.String(v.text)
	}
	m := make(map[string]string, len(v.entries))
	for _, e := range v.entries {
		if e.kkind != 's' {
			return nil, "map keys must be strings, not " + clip.String(e.key)
		}
		switch e.value.kind {
		case 's', 'n', 'b':
		default:
			return nil, "the value of " + quoteStringClip(e.key) + " must be a string, number or boolean"
		}
		if _, dup := m[e.key]; dup {
			return nil, "key " + quoteStringClip(e.key) + " given twice"
		}
		m[e.key] = e.value.text
	}
	return m, ""
}

// mapText returns the canonical text of a map property: string keys and
// values, keys sorted.
func mapText(m map[string]string) string {
	var b strings.Builder
	cqltext.WriteStringMap(&b, m)
	return b.String()
}

// cachingProperty accepts the caching map: keys ALL or NONE, and
// rows_per_partition ALL, NONE or a positive count.
func cachingProperty(v propValue) (string, string) {
	m, r := stringMap(v)
	if r != "" {
		return "", r
	}
	for k, val := range m {
		switch k {
		case "keys":
			u := strings.ToUpper(val)
			if u != "ALL" && u != "NONE" {
				return "", "caching keys must be 'ALL' or 'NONE', not " + quoteStringClip(val)
			}
			m[k] = u
		case "rows_per_partition":
			u := strings.ToUpper(val)
			if u == "ALL" || u == "NONE" {
				m[k] = u
				continue
			}
			n, err := strconv.ParseInt(val, 10, 32)
			if err != nil || n < 1 {
				return "", "caching rows_per_partition must be 'ALL', 'NONE' or a positive integer, not " + quoteStringClip(val)
			}
			m[k] = strconv.FormatInt(n, 10)
		default:
			return "", "unknown caching option " + quoteStringClip(k) + " (expected keys or rows_per_partition)"
		}
	}
	return mapText(m), ""
}

// classMapProperty validates a map with a 'class' (required when
// needClass) whose short names are qualified with prefix.
func classMapProperty(prefix string, needClass bool) func(v propValue) (string, string) {
	return func(v propValue) (string, string) {
		m, r := stringMap(v)
		if r != "" {
			return "", r
		}
		class, ok := m["class"]
		if !ok && needClass {
			return "", "missing sub-option 'class'"
		}
		if ok {
			if class == "" {
				return "", "empty 'class'"
			}
			if !strings.Contains(class, ".") {
				m["class"] = prefix + class
			}
		}
		for k, val := range m {
			switch k {
			case "enabled", "only_purge_repaired_tombstones", "unchecked_tombstone_compaction", "provide_overlapping_tombstones":
				if k == "provide_overlapping_tombstones" {
					continue
				}
				b, r := boolProperty(propValue{kind: 's', text: val})
				if r != "" {
					return "", clip.String(k) + " " + r
				}
				m[k] = b
			case "min_threshold", "max_threshold":
				n, err := strconv.ParseInt(val, 10, 32)
				if err != nil || n < 2 {
					return "", clip.String(k) + " must be an integer of at least 2, not " + quoteStringClip(val)
				}
				m[k] = strconv.FormatInt(n, 10)
			}
		}
		if minT, maxT := m["min_threshold"], m["max_threshold"]; minT != "" && maxT != "" {
			a, _ := strconv.Atoi(minT)
			b, _ := strconv.Atoi(maxT)
			if b < a {
				return "", "max_threshold must be at least min_threshold"
			}
		}
		return mapText(m), ""
	}
}

// compressionProperty accepts the compression map: a class (unless
// 'enabled' is 'false'), a power-of-2 chunk_length_in_kb and a
// crc_check_chance in [0, 1].
func compressionProperty(v propValue) (string, string) {
	c, r := classMapProperty("org.apache.cassandra.io.compress.", false)(v)
	if r != "" {
		return "", r
	}
	pv, _ := parsePropValue(c)
	m, _ := stringMap(pv)
	if len(m) == 0 {
		return c, ""
	}
	if _, ok := m["class"]; !ok && m["enabled"] != "false" {
		return "", "missing sub-option 'class' (or 'enabled': 'false')"
	}
	if s, ok := m["chunk_length_in_kb"]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n <= 0 || n&(n-1) != 0 {
			return "", "chunk_length_in_kb must be a positive power of 2, not " + quoteStringClip(s)
		}
		m["chunk_length_in_kb"] = strconv.FormatInt(n, 10)
	}
	if s, ok := m["crc_check_chance"]; ok {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1 {
			return "", "crc_check_chance must be between 0 and 1, not " + quoteStringClip(s)
		}
		m["crc_check_chance"] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return mapText(m), ""
}

// extensionsProperty accepts a map of strings to blobs, with the blobs
// in lowercase hex.
func extensionsProperty(v propValue) (string, string) {
	if v.kind != 'm' {
		return "", "must be a map of strings to blobs, not " + clip.String(v.text)
	}
	m := make(map[string]string, len(v.entries))
	for _, e := range v.entries {
		if e.kkind != 's' || e.value.kind != 'x' {
			return "", "must be a map of strings to blobs"
		}
		if _, dup := m[e.key]; dup {
			return "", "key " + quoteStringClip(e.key) + " given twice"
		}
		m[e.key] = strings.ToLower(e.value.text)
	}
	var b strings.Builder
	b.WriteString("{")
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cqltext.QuoteString(k) + ": " + m[k])
	}
	b.WriteString("}")
	return b.String(), ""
}

// parsePropValue reads a CQL literal: a string ('...' or $$...$$), number,
// boolean, blob, UUID, map, set or list. It returns a reason on bad input.
func parsePropValue(text string) (propValue, string) {
	r := &propReader{s: text}
	v := r.value(0)
	r.space()
	if r.err == "" && r.i != len(r.s) {
		r.err = "unexpected " + clip.Quote(r.s[r.i:]) + " after the value"
	}
	if r.err != "" {
		return propValue{}, "invalid value " + clip.Quote(text) + ": " + r.err
	}
	return v, ""
}

// propReader is a cursor over the text of one property value. err keeps
// the first reason the text is not a literal; once set, reading stops.
type propReader struct {
	s   string
	i   int
	err string
}

// space skips white space between tokens.
func (r *propReader) space() {
	for r.i < len(r.s) && strings.IndexByte(" \t\r\n", r.s[r.i]) >= 0 {
		r.i++
	}
}

// value reads one literal at depth levels of collection nesting, dispatching
// on its first byte. Depth is bounded so that hostile text cannot recurse
// without end.
func (r *propReader) value(depth int) propValue {
	r.space()
	if r.err != "" {
		return propValue{}
	}
	if depth > 16 || r.i >= len(r.s) {
		r.err = "missing or too deeply nested value"
		return propValue{}
	}
	switch c := r.s[r.i]; {
	case c == '\'':
		return r.quoted()
	case strings.HasPrefix(r.s[r.i:], "$$"):
		return r.dollarQuoted()
	case c == '{' || c == '[':
		return r.collection(depth)
	default:
		return r.word()
	}
}

// quoted reads a '...' string, where a doubled quote stands for one.
func (r *propReader) quoted() propValue {
	var b strings.Builder
	r.i++
	for {
		j := strings.IndexByte(r.s[r.i:], '\'')
		if j < 0 {
			r.err = "unterminated string"
			return propValue{}
		}
		b.WriteString(r.s[r.i : r.i+j])
		r.i += j + 1
		if r.i < len(r.s) && r.s[r.i] == '\'' {
			b.WriteByte('\'')
			r.i++
			continue
		}
		return propValue{kind: 's', text: b.String()}
	}
}

// dollarQuoted reads a $$...$$ string, which has no escapes.
func (r *propReader) dollarQuoted() propValue {
	j := strings.Index(r.s[r.i+2:], "$$")
	if j < 0 {
		r.err = "unterminated string"
		return propValue{}
	}
	v := propValue{kind: 's', text: r.s[r.i+2 : r.i+2+j]}
	r.i += j + 4
	return v
}

// collection reads a {...} map or set or a [...] list. Its text is the
// literal as written; only a map keeps its entries, since the properties
// read sets and lists as a whole. The first element decides whether braces
// hold a map (key: value) or a set, and {} is an empty map.
func (r *propReader) collection(depth int) propValue {
	start, open := r.i, r.s[r.i]
	closing := byte('}')
	if open == '[' {
		closing = ']'
	}
	r.i++
	v := propValue{kind: 'c'}
	isMap := false
	for n := 0; ; n++ {
		r.space()
		if r.i < len(r.s) && r.s[r.i] == closing {
			r.i++
			if open == '{' && n == 0 {
				isMap = true // {} is an empty map
			}
			if isMap {
				v.kind = 'm'
			}
			v.text = r.s[start:r.i]
			return v
		}
		if n > 0 {
			if r.i >= len(r.s) || r.s[r.i] != ',' {
				r.err = "expected ',' or '" + string(closing) + "'"
				return propValue{}
			}
			r.i++
		}
		k := r.value(depth + 1)
		r.space()
		if r.err != "" {
			return propValue{}
		}
		colon := open == '{' && r.i < len(r.s) && r.s[r.i] == ':'
		if n == 0 {
			isMap = colon
		} else if colon != isMap {
			r.err = "mixed map and set elements"
			return propValue{}
		}
		if colon {
			r.i++
			val := r.value(depth + 1)
			if r.err != "" {
				return propValue{}
			}
			v.entries = append(v.entries, propEntry{key: k.text, kkind: k.kind, value: val})
		}
	}
}

// word reads an unquoted literal (a boolean, a blob, a UUID or a number),
// which runs to the first byte that cannot be part of one.
func (r *propReader) word() propValue {
	start := r.i
	j := r.i
	for j < len(r.s) && (cqltext.IsWordByte(r.s[j]) || r.s[j] == '-' || r.s[j] == '.' || r.s[j] == '+') {
		j++
	}
	word := r.s[r.i:j]
	r.i = j
	lower := strings.ToLower(word)
	switch {
	case word == "":
		r.err = "unexpected " + clip.Quote(r.s[start:start+1])
	case lower == "true" || lower == "false":
		return propValue{kind: 'b', text: lower}
	case strings.HasPrefix(lower, "0x"):
		return propValue{kind: 'x', text: lower}
	case len(word) == 36 && strings.Count(word, "-") == 4:
		if _, ok := cqltext.CanonicalUUID(word); ok {
			return propValue{kind: 'u', text: strings.ToLower(word)}
		}
		r.err = "malformed UUID " + word
	default:
		if _, err := strconv.ParseFloat(word, 64); err != nil {
			r.err = "unexpected " + clip.Quote(word)
			return propValue{}
		}
		return propValue{kind: 'n', text: word}
	}
	return propValue{}
}

// sortedKeys returns the keys of m in order, for output that must not
// depend on map iteration order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
