package guardrails

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// Per-keyspace guardrails: overrides of the count guardrails that count
// inside one keyspace, keyed by a keyspace scope.
//
// A scope is an exact keyspace name (`shop`) or a prefix pattern ending in
// one `*` (`tenant_*` matches every keyspace whose name starts with
// `tenant_`; `*` alone matches every keyspace). For a keyspace, the
// override that applies is the exact one when there is one, else the
// matching pattern with the longest prefix. Two distinct patterns that
// match one keyspace are both prefixes of its name, so they differ in
// length: the rule never ties. Only the override that applies counts; its
// settings replace the cluster's, the settings it leaves unset are the
// cluster's (overrides do not stack).
//
// Overridable are the thresholds that count inside one keyspace:
// tables_* (the keyspace's tables, views left out as for the cluster's
// count; the cluster's tables_* still bound the total), and the per-object
// columns_per_table_*, secondary_indexes_per_table_*, fields_per_udt_*,
// materialized_views_per_table_* and vector_dimensions_* (a vector column
// or field is an object of the keyspace too). The keyspace counts,
// replication factors, flags and property sets are cluster-wide and are
// refused in an override.

// Default is the value that removes a setting from an override (the
// keyspace then uses the cluster's).
const Default = "default"

// ErrScopedOverride is matched (errors.Is) by the error of
// CheckScopedOverride: an override a keyspace-scoped operator may not set
// because it would loosen a cluster fail threshold.
var ErrScopedOverride = errors.New("guardrails: override beyond the cluster's fail threshold")

// overridable lists the settings an override may set, by position in
// Override.vals; the order never matters outside this process.
var overridable = []string{
	"tables_warn_threshold",
	"tables_fail_threshold",
	"columns_per_table_warn_threshold",
	"columns_per_table_fail_threshold",
	"secondary_indexes_per_table_warn_threshold",
	"secondary_indexes_per_table_fail_threshold",
	"fields_per_udt_warn_threshold",
	"fields_per_udt_fail_threshold",
	"materialized_views_per_table_warn_threshold",
	"materialized_views_per_table_fail_threshold",
	"vector_dimensions_warn_threshold",
	"vector_dimensions_fail_threshold",
}

// Positions in overridable, for the checks.
const (
	ovTablesWarn = iota
	ovTablesFail
	numOverridable = 12
)

// overridableIndex returns the position of name in overridable, or -1.
func overridableIndex(name string) int {
	for i, n := range overridable {
		if n == name {
			return i
		}
	}
	return -1
}

// OverridableNames returns the settings an override may set, in a new
// slice sorted by name.
func OverridableNames() []string {
	out := append([]string(nil), overridable...)
	sort.Strings(out)
	return out
}

// notOverridable returns the error for a setting an override may not set,
// saying why: the keyspace counts count keyspaces, the replication factor
// limits and the flags and property sets hold for the whole cluster.
func notOverridable(name string) error {
	d, ok := lookup(name)
	if !ok {
		return unknownSetting(name)
	}
	why := "it is a cluster-wide setting"
	switch {
	case strings.HasPrefix(name, "keyspaces_"):
		why = "it counts the keyspaces of the whole cluster, not something inside one keyspace"
	case strings.Contains(name, "replication_factor"):
		why = "replication factors are bounded for the whole cluster, not counted inside a keyspace"
	case d.kind == kindFlag:
		why = "feature flags hold for the whole cluster"
	case d.kind == kindSet:
		why = "table property sets hold for the whole cluster"
	}
	return invalid(name, "cannot be overridden per keyspace: %s; set it for the cluster (`metalog guardrails set` without --keyspace); per keyspace: %s",
		why, strings.Join(OverridableNames(), ", "))
}

// ParseScope checks a keyspace scope given by a user and returns it
// trimmed: a keyspace name (1 to 48 characters of [A-Za-z0-9_]), or a
// prefix of one (possibly empty) followed by `*`. The error wraps
// ErrInvalidSetting.
func ParseScope(text string) (string, error) {
	s := strings.TrimSpace(text)
	prefix, pattern := strings.CutSuffix(s, "*")
	ok := schema.ValidName(prefix) || pattern && prefix == ""
	if pattern && len(prefix) >= schema.MaxNameLength {
		ok = false
	}
	if !ok {
		return "", &settingError{reason: "keyspace scope " + clip.Quote(text) +
			" is invalid: want a keyspace name (1 to 48 characters of [A-Za-z0-9_]) or a prefix of one followed by * (tenant_*)"}
	}
	return s, nil
}

// IsPattern reports whether scope is a prefix pattern (ends in `*`).
func IsPattern(scope string) bool { return strings.HasSuffix(scope, "*") }

// Override is the guardrail settings of one keyspace scope: some of the
// overridable thresholds. It is a comparable value; the zero value sets
// nothing (and has no scope).
type Override struct {
	// Scope is the keyspace name or pattern the override applies to.
	Scope string
	vals  [numOverridable]int64
	has   uint16 // bit i: vals[i] is set
}

// Get returns the value the override gives the setting called name, and
// whether it gives one.
func (o Override) Get(name string) (int64, bool) {
	i := overridableIndex(name)
	if i < 0 || o.has&(1<<i) == 0 {
		return 0, false
	}
	return o.vals[i], true
}

// get is Get by position.
func (o *Override) get(i int) (int64, bool) { return o.vals[i], o.has&(1<<i) != 0 }

// Empty reports whether the override sets nothing.
func (o Override) Empty() bool { return o.has == 0 }

// Len returns the number of settings the override sets.
func (o Override) Len() int {
	n := 0
	for i := range numOverridable {
		if o.has&(1<<i) != 0 {
			n++
		}
	}
	return n
}

// Set returns o with the setting called name set from its text form: an
// integer (-1 disables the guardrail in the scope, whatever the cluster
// says) or "default", which removes the setting from the override. A
// setting that cannot be overridden is refused, saying why; an unknown
// name wraps ErrUnknownSetting, a bad value ErrInvalidSetting. Call
// Validate on the final override.
func (o Override) Set(name, value string) (Override, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	i := overridableIndex(name)
	if i < 0 {
		return o, notOverridable(name)
	}
	if strings.EqualFold(strings.TrimSpace(value), Default) {
		o.has &^= 1 << i
		o.vals[i] = 0
		return o, nil
	}
	d, _ := lookup(name)
	var tmp Settings
	if err := d.parse(&tmp, value); err != nil {
		return o, err
	}
	o.vals[i], o.has = *d.threshold(&tmp), o.has|1<<i
	return o, nil
}

// Validate checks that each value is -1 or non-negative and that a warn
// threshold is not above the fail threshold of the same guardrail when
// the override sets both and both are enabled (a value it leaves to the
// cluster is not compared: the keyspace's table count and the cluster's
// total are different counts). The error wraps ErrInvalidSetting.
func (o Override) Validate() error {
	if _, err := ParseScope(o.Scope); err != nil || o.Scope == "" {
		return &settingError{reason: "override without a valid keyspace scope " + clip.Quote(o.Scope)}
	}
	for i := 0; i < numOverridable; i += 2 {
		w, hw := o.get(i)
		f, hf := o.get(i + 1)
		if hw && w < Disabled {
			return invalidValue(overridable[i], itoa(w), "must be -1 (disabled) or non-negative")
		}
		if hf && f < Disabled {
			return invalidValue(overridable[i+1], itoa(f), "must be -1 (disabled) or non-negative")
		}
		if hw && hf && w != Disabled && f != Disabled && w > f {
			return invalidValue(overridable[i], itoa(w), "must not be greater than %s (%d) of keyspace %s", overridable[i+1], f, o.Scope)
		}
	}
	return nil
}

// OverrideValue is one setting of an override.
type OverrideValue struct {
	Name  string
	Value int64
}

// Values returns the settings the override sets, sorted by name, in a new
// slice.
func (o Override) Values() []OverrideValue {
	var out []OverrideValue
	for _, name := range OverridableNames() {
		if v, ok := o.Get(name); ok {
			out = append(out, OverrideValue{Name: name, Value: v})
		}
	}
	return out
}

// String returns the settings as "name=value" separated by spaces, sorted
// by name, e.g. "tables_fail_threshold=50".
func (o Override) String() string {
	var parts []string
	for _, v := range o.Values() {
		parts = append(parts, v.Name+"="+itoa(v.Value))
	}
	return strings.Join(parts, " ")
}

// apply returns s with the per-object thresholds o sets replaced; the
// tables_* thresholds stay the cluster's (the keyspace's own count is
// checked apart).
// It names the fields (not through setting.threshold, which would move s
// to the heap), so that Check stays allocation-free.
func (o *Override) apply(s Settings) Settings {
	fields := [numOverridable]*int64{
		nil, nil, // tables_*: the cluster's
		&s.ColumnsPerTableWarnThreshold, &s.ColumnsPerTableFailThreshold,
		&s.SecondaryIndexesPerTableWarnThreshold, &s.SecondaryIndexesPerTableFailThreshold,
		&s.FieldsPerUDTWarnThreshold, &s.FieldsPerUDTFailThreshold,
		&s.MaterializedViewsPerTableWarnThreshold, &s.MaterializedViewsPerTableFailThreshold,
		&s.VectorDimensionsWarnThreshold, &s.VectorDimensionsFailThreshold,
	}
	for i, f := range fields {
		if v, ok := o.get(i); ok && f != nil {
			*f = v
		}
	}
	return s
}

// Overrides is the set of the cluster's per-keyspace overrides, at most
// one per scope. It is an immutable value: With and Without return a new
// set and leave the receiver alone; == compares identity (two sets built
// apart compare unequal even when they hold the same overrides; Equal
// compares contents). The zero value holds none.
type Overrides struct {
	p *overrideSet
}

// overrideSet is the contents of Overrides, never modified once built.
type overrideSet struct {
	exact    map[string]Override
	patterns []Override // longest prefix first, then by scope
}

// Len returns the number of overrides.
func (ov Overrides) Len() int {
	if ov.p == nil {
		return 0
	}
	return len(ov.p.exact) + len(ov.p.patterns)
}

// Get returns the override of exactly scope.
func (ov Overrides) Get(scope string) (Override, bool) {
	if ov.p == nil {
		return Override{}, false
	}
	if IsPattern(scope) {
		for _, o := range ov.p.patterns {
			if o.Scope == scope {
				return o, true
			}
		}
		return Override{}, false
	}
	o, ok := ov.p.exact[scope]
	return o, ok
}

// Lookup returns the override that applies to keyspace ks: the exact one,
// else the matching pattern with the longest prefix. It does not
// allocate; it costs a map lookup and a scan of the patterns.
func (ov Overrides) Lookup(ks string) (Override, bool) {
	if ov.p == nil {
		return Override{}, false
	}
	if o, ok := ov.p.exact[ks]; ok {
		return o, true
	}
	for _, o := range ov.p.patterns {
		if strings.HasPrefix(ks, o.Scope[:len(o.Scope)-1]) {
			return o, true
		}
	}
	return Override{}, false
}

// All returns every override sorted by scope, in a new slice.
func (ov Overrides) All() []Override {
	if ov.p == nil {
		return nil
	}
	out := make([]Override, 0, ov.Len())
	for _, o := range ov.p.exact {
		out = append(out, o)
	}
	out = append(out, ov.p.patterns...)
	sort.Slice(out, func(i, j int) bool { return out[i].Scope < out[j].Scope })
	return out
}

// With returns the set with o as the override of o.Scope, replacing the
// one there; an empty o removes it. It copies the set (overrides change
// rarely).
func (ov Overrides) With(o Override) Overrides {
	next := &overrideSet{exact: make(map[string]Override, ov.Len()+1)}
	if ov.p != nil {
		for k, v := range ov.p.exact {
			next.exact[k] = v
		}
		for _, p := range ov.p.patterns {
			if p.Scope != o.Scope {
				next.patterns = append(next.patterns, p)
			}
		}
	}
	delete(next.exact, o.Scope)
	if !o.Empty() {
		if IsPattern(o.Scope) {
			next.patterns = append(next.patterns, o)
		} else {
			next.exact[o.Scope] = o
		}
	}
	sortPatterns(next.patterns)
	if len(next.exact) == 0 && len(next.patterns) == 0 {
		return Overrides{}
	}
	return Overrides{p: next}
}

// Equal reports whether ov and other hold the same overrides.
func (ov Overrides) Equal(other Overrides) bool {
	if ov.p == other.p {
		return true
	}
	a, b := ov.All(), other.All()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Effective returns the settings that hold in keyspace ks: s with the
// per-object thresholds of the override that applies replaced, and that
// override (ok false when none applies). The tables_* thresholds of the
// result are the cluster's, which bound the total; the override's own
// tables_* bound the keyspace's count.
func (ov Overrides) Effective(s Settings, ks string) (Settings, Override, bool) {
	o, ok := ov.Lookup(ks)
	if !ok {
		return s, o, false
	}
	return o.apply(s), o, true
}

// Source values of Value.Source.
const (
	// SourceDefault: the built-in default.
	SourceDefault = "default"
	// SourceCluster: a cluster setting that differs from the default.
	SourceCluster = "cluster"
	// SourceKeyspacePrefix starts the source of a value from an override:
	// "keyspace:shop", "keyspace:tenant_*".
	SourceKeyspacePrefix = "keyspace:"
)

// EffectiveValues returns every setting as it holds in keyspace ks, sorted
// by name, each with its Source: the built-in default, the cluster's
// setting, or the override that applies ("keyspace:" and its scope). For
// tables_* from the cluster the value bounds the cluster's total, from an
// override the keyspace's own count.
func (ov Overrides) EffectiveValues(s Settings, ks string) []Value {
	o, ok := ov.Lookup(ks)
	if !ok {
		return s.Values()
	}
	return OverrideValues(s, o)
}

// OverrideValues returns every setting as it holds under override o, like
// EffectiveValues for a keyspace o applies to.
func OverrideValues(s Settings, o Override) []Value {
	out := s.Values()
	for i := range out {
		if v, set := o.Get(out[i].Name); set {
			out[i].Value = itoa(v)
			out[i].Changed = out[i].Value != out[i].Default
			out[i].Source = SourceKeyspacePrefix + o.Scope
		}
	}
	return out
}

// CheckScopedOverride checks the settings a keyspace-scoped operator
// (operator@shop) asks to set in an override, against the cluster's
// settings: it refuses a fail threshold above the cluster's when the
// cluster's is enabled, and -1 (which would disable it in the keyspace)
// then too, naming both values; "default" (back to the cluster's) and
// warn thresholds are always allowed. Settings an override cannot hold are
// refused as Override.Set refuses them. The error of a loosened threshold
// matches ErrScopedOverride. It does not check which keyspaces the
// operator's scope covers: the caller does.
func CheckScopedOverride(cluster Settings, set map[string]string) error {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, raw := range names {
		name := strings.ToLower(strings.TrimSpace(raw))
		value := set[raw]
		if overridableIndex(name) < 0 {
			return notOverridable(name)
		}
		if strings.EqualFold(strings.TrimSpace(value), Default) || !strings.HasSuffix(name, "_fail_threshold") {
			continue
		}
		o, err := Override{}.Set(name, value)
		if err != nil {
			return err
		}
		v, _ := o.Get(name)
		d, _ := lookup(name)
		limit := *d.threshold(&cluster)
		switch {
		case limit == Disabled:
		case v == Disabled:
			return &scopedError{name: name, value: v, cluster: limit, reason: "would disable it in the keyspace"}
		case v > limit:
			return &scopedError{name: name, value: v, cluster: limit, reason: "is above it"}
		}
	}
	return nil
}

// scopedError is the error of CheckScopedOverride.
type scopedError struct {
	name           string
	value, cluster int64
	reason         string
}

func (e *scopedError) Error() string {
	return fmt.Sprintf("guardrail %s=%s: a keyspace-scoped operator may not loosen the cluster's fail threshold (%s=%s), and %s %s; ask an unscoped operator",
		e.name, strconv.FormatInt(e.value, 10), e.name, strconv.FormatInt(e.cluster, 10), strconv.FormatInt(e.value, 10), e.reason)
}

func (e *scopedError) Is(target error) bool { return target == ErrScopedOverride }
