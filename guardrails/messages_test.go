package guardrails_test

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/metalog/metalog/guardrails"
)

// sayOnce fails t unless msg is want and names the guardrail once: the
// word "guardrail" and the setting each appear a single time.
func sayOnce(t *testing.T, what string, err, match error, want, name string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %q", what, want)
		return
	}
	msg := err.Error()
	if msg != want {
		t.Errorf("%s:\n got %q\nwant %q", what, msg, want)
	}
	if !errors.Is(err, match) {
		t.Errorf("%s: %v does not match %v", what, err, match)
	}
	if n := strings.Count(strings.ToLower(msg), "guardrail "); n != 1 {
		t.Errorf("%s: %q says guardrail %d times", what, msg, n)
	}
	if n := strings.Count(msg, name); n != 1 {
		t.Errorf("%s: %q names %s %d times", what, msg, name, n)
	}
}

// TestSetErrorsSayItOnce: Set names the setting, the value and the
// reason once; an out-of-range integer says so; an unknown name gets the
// closest known one.
func TestSetErrorsSayItOnce(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		match       error
		want        string
	}{
		{"tables_warn_threshold", "abc", guardrails.ErrInvalidSetting, `guardrail tables_warn_threshold="abc": not an integer (use -1 to disable)`},
		{"tables_warn_threshold", "1.5", guardrails.ErrInvalidSetting, `guardrail tables_warn_threshold="1.5": not an integer (use -1 to disable)`},
		{"tables_warn_threshold", "99999999999999999999", guardrails.ErrInvalidSetting, `guardrail tables_warn_threshold="99999999999999999999": out of range (at most 9223372036854775807)`},
		{"tables_warn_threshold", "-99999999999999999999", guardrails.ErrInvalidSetting, `guardrail tables_warn_threshold="-99999999999999999999": out of range (at least -9223372036854775808)`},
		{"tables_fail_threshold", "-2", guardrails.ErrInvalidSetting, `guardrail tables_fail_threshold="-2": must be -1 (disabled) or non-negative`},
		{"drop_keyspace_enabled", "yes", guardrails.ErrInvalidSetting, `guardrail drop_keyspace_enabled="yes": not true or false`},
		{"table_properties_warned", "comment,nope", guardrails.ErrInvalidSetting, `guardrail table_properties_warned="comment,nope": nope is not a table property`},
		{"tables_wanr_threshold", "5", guardrails.ErrUnknownSetting, `guardrail tables_wanr_threshold: unknown setting; did you mean tables_warn_threshold?`},
		{"max_mutation_size", "1", guardrails.ErrUnknownSetting, "guardrail max_mutation_size: unknown setting (`metalog guardrails get` lists them)"},
	} {
		_, err := guardrails.Defaults().Set(tc.name, tc.value)
		sayOnce(t, tc.name+"="+tc.value, err, tc.match, tc.want, tc.name)
	}
	_, err := guardrails.Defaults().Get("tables")
	sayOnce(t, "Get", err, guardrails.ErrUnknownSetting, "guardrail tables: unknown setting (`metalog guardrails get` lists them)", "tables")
}

// TestValidateErrorsSayItOnce: Validate names the setting with its value
// and the one it conflicts with.
func TestValidateErrorsSayItOnce(t *testing.T) {
	for _, tc := range []struct {
		pairs []string
		name  string
		want  string
	}{
		{[]string{"tables_fail_threshold=5", "tables_warn_threshold=10"}, "tables_warn_threshold",
			`guardrail tables_warn_threshold="10": must not be greater than tables_fail_threshold (5)`},
		{[]string{"minimum_replication_factor_warn_threshold=2", "minimum_replication_factor_fail_threshold=3"}, "minimum_replication_factor_warn_threshold",
			`guardrail minimum_replication_factor_warn_threshold="2": must not be less than minimum_replication_factor_fail_threshold (3)`},
		{[]string{"minimum_replication_factor_fail_threshold=3", "maximum_replication_factor_fail_threshold=2"}, "minimum_replication_factor_fail_threshold",
			`guardrail minimum_replication_factor_fail_threshold="3": must not be greater than maximum_replication_factor_fail_threshold (2)`},
		{[]string{"table_properties_warned=comment", "table_properties_ignored=comment"}, "table_properties_ignored",
			`guardrail table_properties_ignored="comment": comment is also in table_properties_warned; a property may be in only one set`},
	} {
		sayOnce(t, strings.Join(tc.pairs, " "), unvalidated(t, tc.pairs...).Validate(), guardrails.ErrInvalidSetting, tc.want, tc.name)
	}
	g := guardrails.Defaults()
	g.TablesWarnThreshold = -7
	sayOnce(t, "negative", g.Validate(), guardrails.ErrInvalidSetting, `guardrail tables_warn_threshold="-7": must be -1 (disabled) or non-negative`, "tables_warn_threshold")
}

// TestYAMLErrorsSayItOnce: the errors of the config file's guardrails
// section say the line, the setting, the value and the reason once.
func TestYAMLErrorsSayItOnce(t *testing.T) {
	for _, tc := range []struct {
		doc, name string
		match     error
		want      string
	}{
		{"guardrails:\n  tables_warn_threshold: abc\n", "tables_warn_threshold", guardrails.ErrInvalidSetting,
			`line 2: guardrail tables_warn_threshold="abc": not an integer (use -1 to disable)`},
		{"guardrails:\n  tables_warn_threshold: 99999999999999999999\n", "tables_warn_threshold", guardrails.ErrInvalidSetting,
			`line 2: guardrail tables_warn_threshold="99999999999999999999": out of range (at most 9223372036854775807)`},
		{"guardrails:\n  tables_wanr_threshold: 5\n", "tables_wanr_threshold", guardrails.ErrUnknownSetting,
			`line 2: guardrail tables_wanr_threshold: unknown setting; did you mean tables_warn_threshold?`},
		{"guardrails:\n  tables_fail_threshold: 5\n  tables_warn_threshold: 10\n", "tables_warn_threshold", guardrails.ErrInvalidSetting,
			`line 3: guardrail tables_warn_threshold="10": must not be greater than tables_fail_threshold (5)`},
		{"guardrails:\n  tables_warn_threshold: 5\n  tables_warn_threshold: 6\n", "tables_warn_threshold", guardrails.ErrInvalidSetting,
			`line 3: guardrail tables_warn_threshold: given twice (first on line 2)`},
		{"guardrails:\n  drop_keyspace_enabled: [true]\n", "drop_keyspace_enabled", guardrails.ErrInvalidSetting,
			`line 2: guardrail drop_keyspace_enabled: want a single value, not a sequence`},
		{"guardrails:\n  table_properties_warned: [[comment]]\n", "table_properties_warned", guardrails.ErrInvalidSetting,
			`line 2: guardrail table_properties_warned: want table property names, not a sequence`},
	} {
		var cfg struct {
			Guardrails guardrails.Settings `yaml:"guardrails"`
		}
		sayOnce(t, tc.doc, yaml.Unmarshal([]byte(tc.doc), &cfg), tc.match, tc.want, tc.name)
	}
	var cfg struct {
		Guardrails guardrails.Settings `yaml:"guardrails"`
	}
	err := yaml.Unmarshal([]byte("guardrails: [1, 2]\n"), &cfg)
	if want := "line 1: guardrails must be a mapping of setting names to values, not a sequence"; err == nil || err.Error() != want || !errors.Is(err, guardrails.ErrInvalidSetting) {
		t.Errorf("a sequence for the section: %v, want %q", err, want)
	}
}
