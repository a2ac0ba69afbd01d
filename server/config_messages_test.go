package server

import (
	"strings"
	"testing"
)

// TestConfigFileErrorsSayWhereAndWhat: an error in the config file names
// the file, the line, the key and the reason, once; an unknown key gets
// the closest known one, and an integer that does not fit says "out of
// range".
func TestConfigFileErrorsSayWhereAndWhat(t *testing.T) {
	for _, tc := range []struct{ yaml, key, want string }{
		{"data_dir: x\ndta_dir: y\n", "dta_dir", "line 2: unknown key dta_dir; did you mean data_dir?"},
		{"snapshot_intervall_entries: 5\n", "snapshot_intervall_entries", "line 1: unknown key snapshot_intervall_entries; did you mean snapshot_interval_entries?"},
		{"bogus: 1\n", "bogus", "line 1: unknown key bogus (README.md, Configuration, lists the keys)"},
		{"max_request_bytes: 99999999999999999999\n", "max_request_bytes", `line 1: max_request_bytes "99999999999999999999": out of range (at most 9223372036854775807)`},
		{"snapshot_interval_entries: -1\n", "snapshot_interval_entries", `line 1: snapshot_interval_entries "-1": out of range (at least 0)`},
		{"snapshot_interval_entries: 99999999999999999999\n", "snapshot_interval_entries", `line 1: snapshot_interval_entries "99999999999999999999": out of range (at most 18446744073709551615)`},
		{"max_request_bytes: 1.5\n", "max_request_bytes", `line 1: max_request_bytes "1.5": not an integer`},
		{"guardrails:\n  tables_warn_threshold: 99999999999999999999\n", "tables_warn_threshold",
			`line 2: guardrail tables_warn_threshold="99999999999999999999": out of range (at most 9223372036854775807)`},
		{"guardrails:\n  tables_wanr_threshold: 1\n", "tables_wanr_threshold", "line 2: guardrail tables_wanr_threshold: unknown setting; did you mean tables_warn_threshold?"},
		{"guardrails:\n  tables_fail_threshold: 5\n  tables_warn_threshold: 10\n", "tables_warn_threshold",
			`line 3: guardrail tables_warn_threshold="10": must not be greater than tables_fail_threshold (5)`},
	} {
		path := writeFile(t, tc.yaml)
		c := DefaultConfig()
		err := c.LoadConfigFile(path)
		want := "config " + path + ": " + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", tc.yaml, err, want)
			continue
		}
		if n := strings.Count(err.Error(), tc.key); n != 1 {
			t.Errorf("%q: %q names %s %d times", tc.yaml, err, tc.key, n)
		}
	}
}

// TestConfigValidateGuardrailsOnce: guardrails set by other means than the
// file are validated with the same single message.
func TestConfigValidateGuardrailsOnce(t *testing.T) {
	c := DefaultConfig()
	c.Guardrails.TablesWarnThreshold, c.Guardrails.TablesFailThreshold = 10, 5
	want := `config: guardrail tables_warn_threshold="10": must not be greater than tables_fail_threshold (5)`
	if err := c.validate(); err == nil || err.Error() != want {
		t.Errorf("validate: %v, want %s", err, want)
	}
}
