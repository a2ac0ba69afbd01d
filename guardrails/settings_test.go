package guardrails_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"go.yaml.in/yaml/v3"
)

func TestDefaults(t *testing.T) {
	g := guardrails.Defaults()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.TablesWarnThreshold != 1000 || g.TablesFailThreshold != -1 || !g.DropKeyspaceEnabled || g.TablePropertiesWarned.Len() != 0 {
		t.Fatalf("unexpected defaults %+v", g)
	}
	for _, v := range g.Values() {
		if v.Changed || v.Value != v.Default {
			t.Errorf("%s changed in the defaults", v.Name)
		}
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name, value string
		get         string // Get after Set; empty means value
		err         error
	}{
		{name: "tables_warn_threshold", value: "500"},
		{name: "tables_fail_threshold", value: " -1 ", get: "-1"},
		{name: "Keyspaces_Warn_Threshold", value: "0", get: "0"},
		{name: "tables_warn_threshold", value: "-2", err: guardrails.ErrInvalidSetting},
		{name: "tables_warn_threshold", value: "ten", err: guardrails.ErrInvalidSetting},
		{name: "tables_warn_threshold", value: "1.5", err: guardrails.ErrInvalidSetting},
		{name: "drop_keyspace_enabled", value: "false"},
		{name: "drop_keyspace_enabled", value: "TRUE", get: "true"},
		{name: "drop_keyspace_enabled", value: "yes", err: guardrails.ErrInvalidSetting},
		{name: "table_properties_warned", value: "gc_grace_seconds, Comment", get: "comment,gc_grace_seconds"},
		{name: "table_properties_warned", value: "[comment]", get: "comment"},
		{name: "table_properties_warned", value: "comment,comment", get: "comment"},
		{name: "table_properties_warned", value: ""},
		{name: "table_properties_ignored", value: "comment,nope", err: guardrails.ErrInvalidSetting},
		{name: "max_mutation_size", value: "1", err: guardrails.ErrUnknownSetting},
		{name: "tables", value: "1", err: guardrails.ErrUnknownSetting},
	}
	for _, tt := range tests {
		g, err := guardrails.Defaults().Set(tt.name, tt.value)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Set(%q, %q) = %v, want %v", tt.name, tt.value, err, tt.err)
			} else if tt.err == guardrails.ErrInvalidSetting && !strings.Contains(err.Error(), strings.ToLower(tt.name)) {
				t.Errorf("Set(%q, %q): error %q does not name the setting", tt.name, tt.value, err)
			}
			if g != guardrails.Defaults() {
				t.Errorf("failed Set changed the settings")
			}
			continue
		}
		if err != nil {
			t.Errorf("Set(%q, %q): %v", tt.name, tt.value, err)
			continue
		}
		want := tt.get
		if want == "" {
			want = tt.value
		}
		if got, _ := g.Get(strings.ToLower(tt.name)); got != want {
			t.Errorf("Set(%q, %q): got %q, want %q", tt.name, tt.value, got, want)
		}
	}
	// Set never modifies its receiver.
	g := guardrails.Defaults()
	if _, err := g.Set("tables_warn_threshold", "5"); err != nil || g.TablesWarnThreshold != 1000 {
		t.Fatalf("receiver modified: %v %v", g.TablesWarnThreshold, err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		pairs []string
		named string // setting the error must name; "" for valid settings
	}{
		{pairs: []string{"tables_warn_threshold=2000", "tables_fail_threshold=1000"}, named: "tables_warn_threshold"},
		{pairs: []string{"tables_warn_threshold=1000", "tables_fail_threshold=1000"}},
		{pairs: []string{"tables_warn_threshold=-1", "tables_fail_threshold=0"}},
		{pairs: []string{"keyspaces_warn_threshold=5", "keyspaces_fail_threshold=4"}, named: "keyspaces_warn_threshold"},
		{pairs: []string{"columns_per_table_warn_threshold=5", "columns_per_table_fail_threshold=4"}, named: "columns_per_table_warn_threshold"},
		{pairs: []string{"secondary_indexes_per_table_warn_threshold=5", "secondary_indexes_per_table_fail_threshold=4"}, named: "secondary_indexes_per_table_warn_threshold"},
		{pairs: []string{"fields_per_udt_warn_threshold=5", "fields_per_udt_fail_threshold=4"}, named: "fields_per_udt_warn_threshold"},
		{pairs: []string{"vector_dimensions_warn_threshold=5", "vector_dimensions_fail_threshold=4"}, named: "vector_dimensions_warn_threshold"},
		{pairs: []string{"maximum_replication_factor_warn_threshold=5", "maximum_replication_factor_fail_threshold=4"}, named: "maximum_replication_factor_warn_threshold"},
		// For the minimum the warn threshold is the larger one.
		{pairs: []string{"minimum_replication_factor_warn_threshold=3", "minimum_replication_factor_fail_threshold=2"}},
		{pairs: []string{"minimum_replication_factor_warn_threshold=2", "minimum_replication_factor_fail_threshold=3"}, named: "minimum_replication_factor_warn_threshold"},
		{pairs: []string{"minimum_replication_factor_fail_threshold=3", "maximum_replication_factor_fail_threshold=2"}, named: "minimum_replication_factor_fail_threshold"},
		{pairs: []string{"table_properties_warned=comment", "table_properties_ignored=comment"}, named: "table_properties_ignored"},
		{pairs: []string{"table_properties_warned=comment", "table_properties_disallowed=cdc,comment"}, named: "table_properties_disallowed"},
		{pairs: []string{"table_properties_warned=comment", "table_properties_ignored=cdc", "table_properties_disallowed=caching"}},
	}
	for _, tt := range tests {
		err := unvalidated(t, tt.pairs...).Validate()
		switch {
		case tt.named == "" && err != nil:
			t.Errorf("%v: %v", tt.pairs, err)
		case tt.named != "" && (!errors.Is(err, guardrails.ErrInvalidSetting) || !strings.Contains(err.Error(), tt.named)):
			t.Errorf("%v: got %v, want an error naming %s", tt.pairs, err, tt.named)
		}
	}
	// Values Set cannot produce are caught too.
	g := guardrails.Defaults()
	g.TablesFailThreshold = -7
	if err := g.Validate(); !errors.Is(err, guardrails.ErrInvalidSetting) || !strings.Contains(err.Error(), "tables_fail_threshold") {
		t.Errorf("negative threshold: %v", err)
	}
	g = guardrails.Defaults()
	g.TablePropertiesWarned = guardrails.NewPropertySet("comment", "bogus")
	if err := g.Validate(); !errors.Is(err, guardrails.ErrInvalidSetting) || !strings.Contains(err.Error(), "table_properties_warned") {
		t.Errorf("unknown property: %v", err)
	}
}

func TestValues(t *testing.T) {
	g := settings(t, "tables_fail_threshold=5000", "drop_keyspace_enabled=false", "table_properties_warned=gc_grace_seconds,comment")
	vals := g.Values()
	names := make([]string, len(vals))
	for i, v := range vals {
		names[i] = v.Name
	}
	if !slices.IsSorted(names) || !slices.Equal(names, guardrails.Names()) || len(names) != 31 {
		t.Fatalf("names %v", names)
	}
	changed := map[string]guardrails.Value{}
	for _, v := range vals {
		if v.Changed {
			changed[v.Name] = v
		}
	}
	want := map[string]guardrails.Value{
		"tables_fail_threshold":   {Name: "tables_fail_threshold", Value: "5000", Default: "-1", Changed: true, Source: "cluster"},
		"drop_keyspace_enabled":   {Name: "drop_keyspace_enabled", Value: "false", Default: "true", Changed: true, Source: "cluster"},
		"table_properties_warned": {Name: "table_properties_warned", Value: "comment,gc_grace_seconds", Default: "", Changed: true, Source: "cluster"},
	}
	if len(changed) != len(want) {
		t.Fatalf("changed %v", changed)
	}
	for k, v := range want {
		if changed[k] != v {
			t.Errorf("%s: got %+v, want %+v", k, changed[k], v)
		}
	}
	// Every Value round-trips through Set.
	back := guardrails.Defaults()
	for _, v := range vals {
		var err error
		if back, err = back.Set(v.Name, v.Value); err != nil {
			t.Fatal(err)
		}
	}
	if back != g {
		t.Fatalf("Set(Values()) = %+v, want %+v", back, g)
	}
}

func TestYAML(t *testing.T) {
	var cfg struct {
		Guardrails guardrails.Settings `yaml:"guardrails"`
	}
	cfg.Guardrails = guardrails.Defaults()
	doc := `
guardrails:
  tables_warn_threshold: 500
  tables_fail_threshold: 2000
  drop_keyspace_enabled: false
  table_properties_warned: [comment, gc_grace_seconds]
  table_properties_disallowed: "cdc"
  table_properties_ignored:
`
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	want := settings(t, "tables_warn_threshold=500", "tables_fail_threshold=2000", "drop_keyspace_enabled=false",
		"table_properties_warned=comment,gc_grace_seconds", "table_properties_disallowed=cdc")
	if cfg.Guardrails != want {
		t.Fatalf("got %+v, want %+v", cfg.Guardrails, want)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "table_properties_warned: [comment, gc_grace_seconds]") || !strings.Contains(string(out), "tables_warn_threshold: 500") {
		t.Fatalf("marshalled:\n%s", out)
	}
	cfg.Guardrails = guardrails.Settings{}
	if err := yaml.Unmarshal(out, &cfg); err != nil || cfg.Guardrails != want {
		t.Fatalf("round trip: %v\n%+v\n%s", err, cfg.Guardrails, out)
	}

	for _, bad := range []struct{ doc, named string }{
		{"guardrails:\n  tables_warn: 5\n", "tables_warn"},
		{"guardrails:\n  tables_warn_threshold: five\n", "tables_warn_threshold"},
		{"guardrails:\n  tables_warn_threshold: 5\n  tables_fail_threshold: 4\n", "tables_warn_threshold"},
		{"guardrails:\n  table_properties_warned: [comment, nope]\n", "nope"},
		{"guardrails:\n  drop_keyspace_enabled: [true]\n", "drop_keyspace_enabled"},
		{"guardrails: [1, 2]\n", "mapping"},
	} {
		cfg.Guardrails = guardrails.Defaults()
		err := yaml.Unmarshal([]byte(bad.doc), &cfg)
		if err == nil || !strings.Contains(err.Error(), bad.named) {
			t.Errorf("%q: got %v, want an error naming %s", bad.doc, err, bad.named)
		}
	}
}

func TestPropertySet(t *testing.T) {
	p := guardrails.NewPropertySet("gc_grace_seconds,Comment", " comment ", "")
	if p.String() != "comment,gc_grace_seconds" || p.Len() != 2 || !p.Contains("comment") || p.Contains("cdc") || p.Contains("") {
		t.Fatalf("set %q", p)
	}
	if p != guardrails.NewPropertySet("comment", "gc_grace_seconds") {
		t.Fatal("equal sets compare unequal")
	}
	var empty guardrails.PropertySet
	if empty.Len() != 0 || empty.Names() != nil || empty != guardrails.NewPropertySet() {
		t.Fatal("empty set")
	}
}
