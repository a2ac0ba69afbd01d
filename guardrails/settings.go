package guardrails

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/intparse"
	"github.com/metalog/metalog/internal/spell"
	"github.com/metalog/metalog/schema"
)

// Disabled is the threshold value that turns a threshold off.
const Disabled = -1

// ErrUnknownSetting is matched (errors.Is) by the error of Set, Get and
// UnmarshalYAML for a setting name they do not know; the message names it
// and the closest known name. (DecodeSettings reports an unknown setting
// tag as a plain decoding error.)
var ErrUnknownSetting = errors.New("guardrails: unknown setting")

// ErrInvalidSetting is matched (errors.Is) by the error of Set and
// UnmarshalYAML for a setting value of the wrong type or out of range, and
// of Validate (so also of UnmarshalYAML and DecodeSettings) for
// inconsistent settings. The message says the setting, its value and the
// reason once: `guardrail tables_warn_threshold="abc": not an integer (use
// -1 to disable)`.
var ErrInvalidSetting = errors.New("guardrails: invalid setting")

// Settings holds every guardrail. Thresholds count objects (or, for the
// replication factors, replicas) and are -1 (Disabled) or non-negative; a
// value above a maximum threshold (below a minimum one) warns or refuses.
// Flags are true when the feature is allowed. The zero value is not the
// defaults (it would refuse nearly everything): start from Defaults.
// Settings is comparable with ==, and a value: copying it is safe.
type Settings struct {
	// KeyspacesWarnThreshold is keyspaces_warn_threshold: the number of
	// keyspaces above which creating one warns. Default -1.
	KeyspacesWarnThreshold int64
	// KeyspacesFailThreshold is keyspaces_fail_threshold: the number of
	// keyspaces above which creating one is refused. Default -1.
	KeyspacesFailThreshold int64
	// TablesWarnThreshold is tables_warn_threshold: the total number of
	// tables above which creating one warns. Default 1000.
	TablesWarnThreshold int64
	// TablesFailThreshold is tables_fail_threshold: the total number of
	// tables above which creating one is refused. Default -1.
	TablesFailThreshold int64
	// ColumnsPerTableWarnThreshold is columns_per_table_warn_threshold: the
	// number of columns of a table above which CREATE TABLE and ALTER
	// TABLE ADD warn. Default -1.
	ColumnsPerTableWarnThreshold int64
	// ColumnsPerTableFailThreshold is columns_per_table_fail_threshold.
	// Default -1.
	ColumnsPerTableFailThreshold int64
	// SecondaryIndexesPerTableWarnThreshold is
	// secondary_indexes_per_table_warn_threshold: the number of indexes of
	// a table above which CREATE INDEX warns. Default -1.
	SecondaryIndexesPerTableWarnThreshold int64
	// SecondaryIndexesPerTableFailThreshold is
	// secondary_indexes_per_table_fail_threshold. Default -1.
	SecondaryIndexesPerTableFailThreshold int64
	// FieldsPerUDTWarnThreshold is fields_per_udt_warn_threshold: the
	// number of fields of a user type above which CREATE TYPE and ALTER
	// TYPE ADD warn. Default -1.
	FieldsPerUDTWarnThreshold int64
	// FieldsPerUDTFailThreshold is fields_per_udt_fail_threshold.
	// Default -1.
	FieldsPerUDTFailThreshold int64
	// VectorDimensionsWarnThreshold is vector_dimensions_warn_threshold:
	// the dimension of a vector column or field above which creating it
	// warns. Default -1.
	VectorDimensionsWarnThreshold int64
	// VectorDimensionsFailThreshold is vector_dimensions_fail_threshold.
	// Default -1.
	VectorDimensionsFailThreshold int64
	// MinimumReplicationFactorWarnThreshold is
	// minimum_replication_factor_warn_threshold: a replication factor
	// (of SimpleStrategy, or of any data centre of NetworkTopologyStrategy)
	// below it warns. Default -1.
	MinimumReplicationFactorWarnThreshold int64
	// MinimumReplicationFactorFailThreshold is
	// minimum_replication_factor_fail_threshold: a replication factor below
	// it is refused. Default -1.
	MinimumReplicationFactorFailThreshold int64
	// MaximumReplicationFactorWarnThreshold is
	// maximum_replication_factor_warn_threshold: a replication factor above
	// it warns. Default -1.
	MaximumReplicationFactorWarnThreshold int64
	// MaximumReplicationFactorFailThreshold is
	// maximum_replication_factor_fail_threshold. Default -1.
	MaximumReplicationFactorFailThreshold int64
	// MaterializedViewsPerTableWarnThreshold is
	// materialized_views_per_table_warn_threshold: the number of
	// materialized views of a table above which CREATE MATERIALIZED VIEW
	// warns. Default -1.
	MaterializedViewsPerTableWarnThreshold int64
	// MaterializedViewsPerTableFailThreshold is
	// materialized_views_per_table_fail_threshold. Default -1.
	MaterializedViewsPerTableFailThreshold int64

	// DropKeyspaceEnabled is drop_keyspace_enabled: DROP KEYSPACE is
	// allowed. Default true.
	DropKeyspaceEnabled bool
	// DropTruncateTableEnabled is drop_truncate_table_enabled: DROP TABLE
	// is allowed. Default true.
	DropTruncateTableEnabled bool
	// AlterTableEnabled is alter_table_enabled: ALTER TABLE may change
	// columns (ADD, DROP, RENAME). As in Cassandra, ALTER TABLE ... WITH
	// is not affected. Default true.
	AlterTableEnabled bool
	// SecondaryIndexesEnabled is secondary_indexes_enabled: CREATE INDEX
	// is allowed. Default true.
	SecondaryIndexesEnabled bool
	// SimpleStrategyEnabled is simplestrategy_enabled: CREATE and ALTER
	// KEYSPACE may use SimpleStrategy. Default true.
	SimpleStrategyEnabled bool
	// MetadataSizeEnabled is metadata_size_enabled: the metadata_size
	// guardrail refuses DDL that would make the encoded metadata exceed
	// max_mutation_size (and warns above 75%). Turning it off lets such DDL
	// through; snapshots then fail loudly instead. Default true.
	MetadataSizeEnabled bool
	// UncompressedTablesEnabled is uncompressed_tables_enabled: CREATE and
	// ALTER TABLE may set compression = {'enabled': 'false'}. Default true.
	UncompressedTablesEnabled bool
	// DynamicDataMaskingEnabled is dynamic_data_masking_enabled:
	// CREATE and ALTER TABLE may mask columns (MASKED WITH), as
	// Cassandra's cassandra.yaml property of that name allows. Dropping
	// a mask (DROP MASKED) is always allowed. Default false, as in
	// Cassandra.
	DynamicDataMaskingEnabled bool
	// UserDefinedFunctionsEnabled is user_defined_functions_enabled:
	// CREATE FUNCTION and CREATE AGGREGATE are allowed (metalog stores
	// them; it never runs them). DROP FUNCTION and DROP AGGREGATE are
	// allowed either way, as in Cassandra. Default false, as in Cassandra.
	UserDefinedFunctionsEnabled bool
	// MaterializedViewsEnabled is materialized_views_enabled: CREATE
	// MATERIALIZED VIEW is allowed. Default false, as Cassandra 4.0 and
	// later ship with materialized views disabled (they are experimental);
	// ALTER and DROP MATERIALIZED VIEW stay allowed.
	MaterializedViewsEnabled bool

	// TablePropertiesWarned is table_properties_warned: table properties
	// whose use in CREATE or ALTER TABLE warns. Default empty.
	TablePropertiesWarned PropertySet
	// TablePropertiesIgnored is table_properties_ignored: table properties
	// that Prepare removes from CREATE and ALTER TABLE, with a warning.
	// Default empty.
	TablePropertiesIgnored PropertySet
	// TablePropertiesDisallowed is table_properties_disallowed: table
	// properties whose use in CREATE or ALTER TABLE is refused. Default
	// empty.
	TablePropertiesDisallowed PropertySet
}

// Defaults returns Cassandra's defaults: every threshold disabled except
// tables_warn_threshold (1000), every flag true except
// dynamic_data_masking_enabled, user_defined_functions_enabled and
// materialized_views_enabled, no property sets.
func Defaults() Settings {
	return Settings{
		KeyspacesWarnThreshold:                 Disabled,
		KeyspacesFailThreshold:                 Disabled,
		TablesWarnThreshold:                    1000,
		TablesFailThreshold:                    Disabled,
		ColumnsPerTableWarnThreshold:           Disabled,
		ColumnsPerTableFailThreshold:           Disabled,
		SecondaryIndexesPerTableWarnThreshold:  Disabled,
		SecondaryIndexesPerTableFailThreshold:  Disabled,
		FieldsPerUDTWarnThreshold:              Disabled,
		FieldsPerUDTFailThreshold:              Disabled,
		VectorDimensionsWarnThreshold:          Disabled,
		VectorDimensionsFailThreshold:          Disabled,
		MinimumReplicationFactorWarnThreshold:  Disabled,
		MinimumReplicationFactorFailThreshold:  Disabled,
		MaximumReplicationFactorWarnThreshold:  Disabled,
		MaximumReplicationFactorFailThreshold:  Disabled,
		MaterializedViewsPerTableWarnThreshold: Disabled,
		MaterializedViewsPerTableFailThreshold: Disabled,
		DropKeyspaceEnabled:                    true,
		DropTruncateTableEnabled:               true,
		AlterTableEnabled:                      true,
		SecondaryIndexesEnabled:                true,
		SimpleStrategyEnabled:                  true,
		UncompressedTablesEnabled:              true,
		MetadataSizeEnabled:                    true,
	}
}

// PropertySet is an immutable set of table property names, kept sorted,
// lowercase and without duplicates. It is comparable with ==; the zero
// value is the empty set.
type PropertySet struct {
	names string // canonical: sorted, comma-separated, no empty names
}

// NewPropertySet returns the set of the given names. Each argument may hold
// several names separated by commas; names are trimmed and lowercased and
// empty ones dropped. It does not check that the names are table
// properties: Validate does.
func NewPropertySet(names ...string) PropertySet {
	var list []string
	for _, arg := range names {
		for n := range strings.SplitSeq(arg, ",") {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
				list = append(list, n)
			}
		}
	}
	sort.Strings(list)
	out := list[:0]
	for i, n := range list {
		if i == 0 || n != list[i-1] {
			out = append(out, n)
		}
	}
	return PropertySet{names: strings.Join(out, ",")}
}

// Names returns the names in sorted order, in a new slice the caller owns.
func (p PropertySet) Names() []string {
	if p.names == "" {
		return nil
	}
	return strings.Split(p.names, ",")
}

// Contains reports whether name (compared as is: pass it lowercase) is in
// the set. It does not allocate.
func (p PropertySet) Contains(name string) bool {
	rest := p.names
	for rest != "" {
		var n string
		n, rest, _ = strings.Cut(rest, ",")
		if n == name {
			return true
		}
	}
	return false
}

// Len returns the number of names.
func (p PropertySet) Len() int {
	if p.names == "" {
		return 0
	}
	return strings.Count(p.names, ",") + 1
}

// String returns the names separated by commas, e.g.
// "comment,gc_grace_seconds", the form Set accepts.
func (p PropertySet) String() string { return p.names }

// kind is the type of a setting's value.
type kind uint8

const (
	kindThreshold kind = iota + 1
	kindFlag
	kindSet
)

// setting describes one guardrail setting. tag identifies it in the binary
// encoding and must never change or be reused.
type setting struct {
	name      string
	tag       uint64
	kind      kind
	threshold func(*Settings) *int64
	flag      func(*Settings) *bool
	set       func(*Settings) *PropertySet
}

// settings lists every setting, sorted by name.
var settings = []setting{
	{name: "alter_table_enabled", tag: 19, kind: kindFlag, flag: func(s *Settings) *bool { return &s.AlterTableEnabled }},
	{name: "columns_per_table_fail_threshold", tag: 6, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.ColumnsPerTableFailThreshold }},
	{name: "columns_per_table_warn_threshold", tag: 5, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.ColumnsPerTableWarnThreshold }},
	{name: "drop_keyspace_enabled", tag: 17, kind: kindFlag, flag: func(s *Settings) *bool { return &s.DropKeyspaceEnabled }},
	{name: "drop_truncate_table_enabled", tag: 18, kind: kindFlag, flag: func(s *Settings) *bool { return &s.DropTruncateTableEnabled }},
	{name: "dynamic_data_masking_enabled", tag: 31, kind: kindFlag, flag: func(s *Settings) *bool { return &s.DynamicDataMaskingEnabled }},
	{name: "fields_per_udt_fail_threshold", tag: 10, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.FieldsPerUDTFailThreshold }},
	{name: "fields_per_udt_warn_threshold", tag: 9, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.FieldsPerUDTWarnThreshold }},
	{name: "keyspaces_fail_threshold", tag: 2, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.KeyspacesFailThreshold }},
	{name: "keyspaces_warn_threshold", tag: 1, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.KeyspacesWarnThreshold }},
	{name: "materialized_views_enabled", tag: 27, kind: kindFlag, flag: func(s *Settings) *bool { return &s.MaterializedViewsEnabled }},
	{name: "materialized_views_per_table_fail_threshold", tag: 29, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.MaterializedViewsPerTableFailThreshold }},
	{name: "materialized_views_per_table_warn_threshold", tag: 28, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.MaterializedViewsPerTableWarnThreshold }},
	{name: "maximum_replication_factor_fail_threshold", tag: 16, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.MaximumReplicationFactorFailThreshold }},
	{name: "maximum_replication_factor_warn_threshold", tag: 15, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.MaximumReplicationFactorWarnThreshold }},
	{name: "metadata_size_enabled", tag: 26, kind: kindFlag, flag: func(s *Settings) *bool { return &s.MetadataSizeEnabled }},
	{name: "minimum_replication_factor_fail_threshold", tag: 14, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.MinimumReplicationFactorFailThreshold }},
	{name: "minimum_replication_factor_warn_threshold", tag: 13, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.MinimumReplicationFactorWarnThreshold }},
	{name: "secondary_indexes_enabled", tag: 20, kind: kindFlag, flag: func(s *Settings) *bool { return &s.SecondaryIndexesEnabled }},
	{name: "secondary_indexes_per_table_fail_threshold", tag: 8, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.SecondaryIndexesPerTableFailThreshold }},
	{name: "secondary_indexes_per_table_warn_threshold", tag: 7, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.SecondaryIndexesPerTableWarnThreshold }},
	{name: "simplestrategy_enabled", tag: 21, kind: kindFlag, flag: func(s *Settings) *bool { return &s.SimpleStrategyEnabled }},
	{name: "table_properties_disallowed", tag: 25, kind: kindSet, set: func(s *Settings) *PropertySet { return &s.TablePropertiesDisallowed }},
	{name: "table_properties_ignored", tag: 24, kind: kindSet, set: func(s *Settings) *PropertySet { return &s.TablePropertiesIgnored }},
	{name: "table_properties_warned", tag: 23, kind: kindSet, set: func(s *Settings) *PropertySet { return &s.TablePropertiesWarned }},
	{name: "tables_fail_threshold", tag: 4, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.TablesFailThreshold }},
	{name: "tables_warn_threshold", tag: 3, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.TablesWarnThreshold }},
	{name: "uncompressed_tables_enabled", tag: 22, kind: kindFlag, flag: func(s *Settings) *bool { return &s.UncompressedTablesEnabled }},
	{name: "user_defined_functions_enabled", tag: 30, kind: kindFlag, flag: func(s *Settings) *bool { return &s.UserDefinedFunctionsEnabled }},
	{name: "vector_dimensions_fail_threshold", tag: 12, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.VectorDimensionsFailThreshold }},
	{name: "vector_dimensions_warn_threshold", tag: 11, kind: kindThreshold, threshold: func(s *Settings) *int64 { return &s.VectorDimensionsWarnThreshold }},
}

// lookup returns the setting called name.
func lookup(name string) (*setting, bool) {
	i := sort.Search(len(settings), func(i int) bool { return settings[i].name >= name })
	if i < len(settings) && settings[i].name == name {
		return &settings[i], true
	}
	return nil, false
}

// Names returns the names of all settings, sorted, in a new slice the
// caller owns.
func Names() []string {
	out := make([]string, len(settings))
	for i := range settings {
		out[i] = settings[i].name
	}
	return out
}

// settingError is the error of Set, Get, Validate and UnmarshalYAML about
// one setting. Its message says the setting, the value when the error is
// about one, and the reason, each once: `guardrail
// tables_warn_threshold="abc": not an integer (use -1 to disable)`, with
// "line N: " before it for the config file. errors.Is matches
// ErrUnknownSetting for an unknown name, ErrInvalidSetting otherwise.
type settingError struct {
	name     string // "" for an error about the whole section
	value    string
	hasValue bool
	reason   string
	line     int // in the YAML document; 0 for none
	unknown  bool
}

func (e *settingError) Error() string {
	var b strings.Builder
	if e.line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.line)
	}
	if e.name != "" {
		// Both may be anything a client sent: quoted bounded.
		b.WriteString("guardrail " + clip.String(e.name))
		if e.hasValue {
			b.WriteString("=" + clip.Quote(e.value))
		}
		b.WriteString(": ")
	}
	b.WriteString(e.reason)
	return b.String()
}

func (e *settingError) Is(target error) bool {
	return target == ErrInvalidSetting && !e.unknown || target == ErrUnknownSetting && e.unknown
}

// invalid returns the error for a setting refused whatever its value.
func invalid(name, format string, args ...any) *settingError {
	return &settingError{name: name, reason: fmt.Sprintf(format, args...)}
}

// invalidValue returns the error for a setting refused for its value.
func invalidValue(name, value, format string, args ...any) *settingError {
	return &settingError{name: name, value: value, hasValue: true, reason: fmt.Sprintf(format, args...)}
}

// unknownSetting returns the error for a name that is no setting, with the
// closest one when there is one.
func unknownSetting(name string) *settingError {
	e := &settingError{name: name, unknown: true, reason: "unknown setting (`metalog guardrails get` lists them)"}
	if near := spell.Closest(strings.ToLower(strings.TrimSpace(name)), Names()); near != "" {
		e.reason = "unknown setting; did you mean " + near + "?"
	}
	return e
}

// value returns the setting's value of s in the text form Set accepts.
func (d *setting) value(s *Settings) string {
	switch d.kind {
	case kindThreshold:
		return strconv.FormatInt(*d.threshold(s), 10)
	case kindFlag:
		return strconv.FormatBool(*d.flag(s))
	default:
		return d.set(s).String()
	}
}

// parse sets the setting in s from text, checking its type and range but
// not its consistency with the other settings.
func (d *setting) parse(s *Settings, text string) error {
	text = strings.TrimSpace(text)
	switch d.kind {
	case kindThreshold:
		n, err := intparse.Int(text, 10, 64)
		switch {
		case errors.Is(err, intparse.ErrSyntax):
			return invalidValue(d.name, text, "not an integer (use -1 to disable)")
		case err != nil:
			return invalidValue(d.name, text, "%v", err)
		case n < Disabled:
			return invalidValue(d.name, text, "must be -1 (disabled) or non-negative")
		}
		*d.threshold(s) = n
	case kindFlag:
		switch strings.ToLower(text) {
		case "true":
			*d.flag(s) = true
		case "false":
			*d.flag(s) = false
		default:
			return invalidValue(d.name, text, "not true or false")
		}
	case kindSet:
		p := NewPropertySet(strings.TrimSuffix(strings.TrimPrefix(text, "["), "]"))
		if err := checkPropertyNames(d.name, text, p); err != nil {
			return err
		}
		*d.set(s) = p
	}
	return nil
}

// checkPropertyNames refuses a property set p, given as text to the
// setting called setting, that names something other than a table
// property.
func checkPropertyNames(setting, text string, p PropertySet) error {
	for _, n := range p.Names() {
		if !schema.IsTableProperty(n) {
			return invalidValue(setting, text, "%s is not a table property", clip.String(n))
		}
	}
	return nil
}

// Set returns s with the setting called name set from its text form:
// an integer for a threshold ("500", "-1"), true or false for a flag, and
// a comma-separated list of table property names for a property set
// ("comment,gc_grace_seconds"; "" for none). It checks the value's type
// and range and, for property sets, the names; call Validate on the final
// settings to check them against each other (so that a warn and a fail
// threshold can be raised one after the other). An unknown name wraps
// ErrUnknownSetting, a bad value ErrInvalidSetting.
func (s Settings) Set(name, value string) (Settings, error) {
	d, ok := lookup(strings.ToLower(strings.TrimSpace(name)))
	if !ok {
		return s, unknownSetting(name)
	}
	out := s
	if err := d.parse(&out, value); err != nil {
		return s, err
	}
	return out, nil
}

// Get returns the setting called name in the text form Set accepts.
func (s Settings) Get(name string) (string, error) {
	d, ok := lookup(name)
	if !ok {
		return "", unknownSetting(name)
	}
	return d.value(&s), nil
}

// Value is one setting as `metalog guardrails get` shows it.
type Value struct {
	// Name is the setting name, e.g. "tables_warn_threshold".
	Name string
	// Value is the current value in the text form Set accepts.
	Value string
	// Default is the default value in the same form.
	Default string
	// Changed reports whether Value differs from Default.
	Changed bool
	// Source says where Value comes from: SourceDefault, SourceCluster,
	// or, from Overrides.EffectiveValues, SourceKeyspacePrefix and the
	// scope of the override.
	Source string
}

// Values returns every setting of s, sorted by name, in a new slice.
func (s Settings) Values() []Value {
	def := Defaults()
	out := make([]Value, len(settings))
	for i := range settings {
		d := &settings[i]
		v, dv := d.value(&s), d.value(&def)
		out[i] = Value{Name: d.name, Value: v, Default: dv, Changed: v != dv, Source: SourceDefault}
		if v != dv {
			out[i].Source = SourceCluster
		}
	}
	return out
}

// thresholdPairs lists the warn and fail settings of each threshold;
// min marks a minimum (a value below it triggers).
var thresholdPairs = []struct {
	warn, fail string
	min        bool
}{
	{"keyspaces_warn_threshold", "keyspaces_fail_threshold", false},
	{"tables_warn_threshold", "tables_fail_threshold", false},
	{"columns_per_table_warn_threshold", "columns_per_table_fail_threshold", false},
	{"secondary_indexes_per_table_warn_threshold", "secondary_indexes_per_table_fail_threshold", false},
	{"materialized_views_per_table_warn_threshold", "materialized_views_per_table_fail_threshold", false},
	{"fields_per_udt_warn_threshold", "fields_per_udt_fail_threshold", false},
	{"vector_dimensions_warn_threshold", "vector_dimensions_fail_threshold", false},
	{"minimum_replication_factor_warn_threshold", "minimum_replication_factor_fail_threshold", true},
	{"maximum_replication_factor_warn_threshold", "maximum_replication_factor_fail_threshold", false},
}

// Validate checks s: every threshold -1 or non-negative; a warn threshold
// not above its fail threshold (for the minimum replication factor, not
// below it) when both are enabled; each minimum replication factor not
// above the maximum of the same level; property sets in canonical form,
// holding only known table properties, each property in at most one set.
// The error wraps ErrInvalidSetting and names the setting.
func (s Settings) Validate() error {
	for i := range settings {
		d := &settings[i]
		switch d.kind {
		case kindThreshold:
			if v := *d.threshold(&s); v < Disabled {
				return invalidValue(d.name, d.value(&s), "must be -1 (disabled) or non-negative")
			}
		case kindSet:
			p := *d.set(&s)
			if p != NewPropertySet(p.names) {
				return invalidValue(d.name, p.names, "property set not in canonical form")
			}
			if err := checkPropertyNames(d.name, p.names, p); err != nil {
				return err
			}
		}
	}
	get := func(name string) int64 {
		d, _ := lookup(name)
		return *d.threshold(&s)
	}
	for _, p := range thresholdPairs {
		w, f := get(p.warn), get(p.fail)
		if w == Disabled || f == Disabled {
			continue
		}
		if !p.min && w > f {
			return invalidValue(p.warn, itoa(w), "must not be greater than %s (%d)", p.fail, f)
		}
		if p.min && w < f {
			return invalidValue(p.warn, itoa(w), "must not be less than %s (%d)", p.fail, f)
		}
	}
	for _, level := range []string{"warn", "fail"} {
		min, max := "minimum_replication_factor_"+level+"_threshold", "maximum_replication_factor_"+level+"_threshold"
		if lo, hi := get(min), get(max); lo != Disabled && hi != Disabled && lo > hi {
			return invalidValue(min, itoa(lo), "must not be greater than %s (%d)", max, hi)
		}
	}
	sets := []struct {
		name string
		p    PropertySet
	}{
		{"table_properties_warned", s.TablePropertiesWarned},
		{"table_properties_ignored", s.TablePropertiesIgnored},
		{"table_properties_disallowed", s.TablePropertiesDisallowed},
	}
	for i, a := range sets {
		for _, b := range sets[i+1:] {
			for _, n := range a.p.Names() {
				if b.p.Contains(n) {
					return invalidValue(b.name, b.p.String(), "%s is also in %s; a property may be in only one set", n, a.name)
				}
			}
		}
	}
	return nil
}
