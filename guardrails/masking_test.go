package guardrails_test

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/metalog/metalog/guardrails"
)

// TestDynamicDataMasking checks dynamic_data_masking_enabled: off by
// default, it refuses every statement that gives a column a mask, with
// Cassandra's message and how to turn it on, and never DROP MASKED (as
// in Cassandra's ColumnMaskTest.testEnableFlag); on, all pass.
func TestDynamicDataMasking(t *testing.T) {
	const masked = ks + `CREATE TABLE ks.m (id int, c int, v text MASKED WITH DEFAULT, PRIMARY KEY (id, c));`
	tests := []struct {
		name, setup, stmt string
		refused           string // "object column" named in the refusal, or "" for allowed while off
	}{
		{"create regular", ks, `CREATE TABLE ks.u (id int PRIMARY KEY, v text MASKED WITH DEFAULT)`, "ks.u v"},
		{"create partition key", ks, `CREATE TABLE ks.u (id int MASKED WITH DEFAULT PRIMARY KEY, v text)`, "ks.u id"},
		{"create clustering", ks, `CREATE TABLE ks.u (id int, c int MASKED WITH DEFAULT, v text, PRIMARY KEY (id, c))`, "ks.u c"},
		{"create unmasked", ks, `CREATE TABLE ks.u (id int PRIMARY KEY, v text)`, ""},
		{"add masked", ksTable, `ALTER TABLE ks.t ADD w text MASKED WITH mask_inner(1, 1)`, "ks.t w"},
		{"add unmasked", ksTable, `ALTER TABLE ks.t ADD w text`, ""},
		{"alter key", ksTable, `ALTER TABLE ks.t ALTER id MASKED WITH DEFAULT`, "ks.t id"},
		{"alter change", masked, `ALTER TABLE ks.m ALTER v MASKED WITH mask_null()`, "ks.m v"},
		{"drop masked", masked, `ALTER TABLE ks.m ALTER v DROP MASKED`, ""},
		{"like masked", masked, `CREATE TABLE ks.copy LIKE ks.m`, "ks.copy v"},
		{"like unmasked", ksTable, `CREATE TABLE ks.copy LIKE ks.t`, ""},
		{"create masked if not exists no-op", masked, `CREATE TABLE IF NOT EXISTS ks.m (id int PRIMARY KEY, v text MASKED WITH DEFAULT)`, ""},
	}
	on := settings(t, "dynamic_data_masking_enabled=true")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := build(t, tt.setup)
			st := parse(t, tt.stmt)
			_, err := check(t, guardrails.Defaults(), before, st, 0)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("refused while off: %v", err)
				}
			} else {
				var f *guardrails.Failure
				if !errors.As(err, &f) || f.Guardrail != "dynamic_data_masking_enabled" {
					t.Fatalf("got %v, want a failure of dynamic_data_masking_enabled", err)
				}
				object, column, _ := strings.Cut(tt.refused, " ")
				want := "Guardrail dynamic_data_masking_enabled violated: Cannot mask columns because dynamic data masking is not enabled: " +
					st.Kind() + " " + object + " masks column " + column +
					". You can enable it with the dynamic_data_masking_enabled setting (metalog guardrails set dynamic_data_masking_enabled=true, or guardrails: in the config file)"
				if err.Error() != want {
					t.Errorf("message\n got %q\nwant %q", err.Error(), want)
				}
			}
			if _, err := check(t, on, before, st, 0); err != nil {
				t.Errorf("refused while on: %v", err)
			}
		})
	}
}

// TestDynamicDataMaskingSetting checks that the setting defaults to false
// and is taken by Set (metalog guardrails set), the YAML config and the
// encoding.
func TestDynamicDataMaskingSetting(t *testing.T) {
	if guardrails.Defaults().DynamicDataMaskingEnabled {
		t.Fatal("dynamic_data_masking_enabled defaults to true")
	}
	g := settings(t, "dynamic_data_masking_enabled=true")
	if !g.DynamicDataMaskingEnabled {
		t.Fatal("Set did not set it")
	}
	var fromYAML struct {
		Guardrails guardrails.Settings `yaml:"guardrails"`
	}
	fromYAML.Guardrails = guardrails.Defaults()
	if err := yaml.Unmarshal([]byte("guardrails:\n  dynamic_data_masking_enabled: true\n"), &fromYAML); err != nil || !fromYAML.Guardrails.DynamicDataMaskingEnabled {
		t.Fatalf("yaml: %v, %+v", err, fromYAML.Guardrails)
	}
	back, err := guardrails.DecodeSettings(guardrails.AppendSettings(nil, g))
	if err != nil || back != g {
		t.Fatalf("encoding round trip: %v", err)
	}
}
