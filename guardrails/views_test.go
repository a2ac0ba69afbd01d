package guardrails_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"go.yaml.in/yaml/v3"
)

// viewSetup is a base table with one view.
const viewSetup = ksTable + `CREATE MATERIALIZED VIEW ks.by_a AS SELECT id, a FROM ks.t WHERE a IS NOT NULL AND id IS NOT NULL PRIMARY KEY (a, id);`

// viewStmt creates a second view of ks.t, with rest after its key.
func viewStmt(rest string) string {
	return "CREATE MATERIALIZED VIEW ks.by_b AS SELECT id, b FROM ks.t WHERE b IS NOT NULL AND id IS NOT NULL PRIMARY KEY (b, id)" + rest
}

// TestCheckViews checks the guardrails of materialized views:
// materialized_views_enabled (false by default) refuses CREATE
// MATERIALIZED VIEW naming the setting and how to set it, and nothing
// else; the per-table thresholds count the views of the base (after the
// new one) in Cassandra's words; the table property sets apply to CREATE
// and ALTER MATERIALIZED VIEW; views do not count as tables.
func TestCheckViews(t *testing.T) {
	on := "materialized_views_enabled=true"
	tests := []struct {
		name     string
		settings []string
		setup    string
		stmt     string
		warn     string
		fail     string
		message  string
	}{
		{name: "disabled", setup: ksTable, stmt: viewStmt(""), fail: "materialized_views_enabled",
			message: "Guardrail materialized_views_enabled violated: " + guardrails.ViewsDisabledMessage("ks.by_b")},
		{name: "disabled, IF NOT EXISTS of an existing view", setup: viewSetup, stmt: "CREATE MATERIALIZED VIEW IF NOT EXISTS ks.by_a AS SELECT * FROM ks.t WHERE id IS NOT NULL PRIMARY KEY (id)"},
		{name: "disabled, ALTER", setup: viewSetup, stmt: "ALTER MATERIALIZED VIEW ks.by_a WITH comment = 'x'"},
		{name: "disabled, DROP", setup: viewSetup, stmt: "DROP MATERIALIZED VIEW ks.by_a"},
		{name: "enabled", settings: []string{on}, setup: viewSetup, stmt: viewStmt("")},
		{name: "per table warn", settings: []string{on, "materialized_views_per_table_warn_threshold=1"}, setup: viewSetup, stmt: viewStmt(""),
			warn:    "materialized_views_per_table_warn_threshold",
			message: "Guardrail materialized_views_per_table_warn_threshold violated: Creating materialized view by_b on table t, current number of views 2 exceeds warning threshold of 1."},
		{name: "per table fail", settings: []string{on, "materialized_views_per_table_fail_threshold=1"}, setup: viewSetup, stmt: viewStmt(""),
			fail:    "materialized_views_per_table_fail_threshold",
			message: "Guardrail materialized_views_per_table_fail_threshold violated: Tables cannot have more than 1 materialized views, aborting the creation of materialized view by_b on table t"},
		{name: "per table, of another table", settings: []string{on, "materialized_views_per_table_fail_threshold=0"}, setup: viewSetup + `CREATE TABLE ks.u (id int PRIMARY KEY, a int);`,
			stmt: "CREATE MATERIALIZED VIEW ks.u_by_a AS SELECT id, a FROM ks.u WHERE a IS NOT NULL AND id IS NOT NULL PRIMARY KEY (a, id)", fail: "materialized_views_per_table_fail_threshold"},
		{name: "per table at threshold", settings: []string{on, "materialized_views_per_table_warn_threshold=2", "materialized_views_per_table_fail_threshold=2"}, setup: viewSetup, stmt: viewStmt("")},
		{name: "not a table", settings: []string{on, "tables_warn_threshold=-1", "tables_fail_threshold=1"}, setup: viewSetup, stmt: viewStmt("")},
		{name: "properties disallowed", settings: []string{on, "table_properties_disallowed=comment"}, setup: viewSetup, stmt: viewStmt(" WITH comment = 'x'"),
			fail: "table_properties_disallowed"},
		{name: "properties disallowed on ALTER", settings: []string{"table_properties_disallowed=comment"}, setup: viewSetup, stmt: "ALTER MATERIALIZED VIEW ks.by_a WITH comment = 'x'",
			fail: "table_properties_disallowed"},
		{name: "properties warned on ALTER", settings: []string{"table_properties_warned=gc_grace_seconds"}, setup: viewSetup, stmt: "ALTER MATERIALIZED VIEW ks.by_a WITH gc_grace_seconds = 10",
			warn: "table_properties_warned"},
		{name: "properties ignored", settings: []string{on, "table_properties_ignored=comment"}, setup: viewSetup, stmt: viewStmt(" WITH comment = 'x'"),
			warn: "table_properties_ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := check(t, settings(t, tt.settings...), build(t, tt.setup), parse(t, tt.stmt), 0)
			var f *guardrails.Failure
			switch {
			case tt.fail == "" && err != nil:
				t.Fatalf("unexpected failure: %v", err)
			case tt.fail != "":
				if !errors.Is(err, guardrails.ErrFailed) || !errors.As(err, &f) || f.Guardrail != tt.fail {
					t.Fatalf("got %v, want a failure of %s", err, tt.fail)
				}
				if tt.message != "" && err.Error() != tt.message {
					t.Errorf("message\n got %q\nwant %q", err.Error(), tt.message)
				}
			}
			if tt.warn == "" && len(warnings) > 0 {
				t.Fatalf("unexpected warnings %v", warnings)
			}
			if tt.warn != "" && (len(warnings) != 1 || warnings[0].Guardrail != tt.warn || tt.message != "" && warnings[0].Message != tt.message) {
				t.Fatalf("warnings %v, want one of %s", warnings, tt.warn)
			}
		})
	}
	msg := guardrails.ViewsDisabledMessage("ks.v")
	for _, want := range []string{"materialized_views_enabled", "`metalog guardrails set materialized_views_enabled=true`", "guardrails: in the config file"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the disabled message does not say %q: %s", want, msg)
		}
	}
}

// TestPrepareViews checks that table_properties_ignored strips the
// properties of CREATE and ALTER MATERIALIZED VIEW, and that an ALTER
// left with nothing is no statement at all.
func TestPrepareViews(t *testing.T) {
	g := settings(t, "table_properties_ignored=comment")
	in := parse(t, viewStmt(" WITH comment = 'x' AND gc_grace_seconds = 5"))
	out, w := guardrails.Prepare(g, in)
	if cv, ok := out.(*schema.CreateView); !ok || out == in || len(w) != 1 || !maps.Equal(cv.Options, map[string]string{"gc_grace_seconds": "5"}) {
		t.Errorf("CREATE: %#v %v", out, w)
	}
	if orig := in.(*schema.CreateView); len(orig.Options) != 2 {
		t.Errorf("Prepare modified its input: %v", orig.Options)
	}
	out, w = guardrails.Prepare(g, parse(t, "ALTER MATERIALIZED VIEW ks.v WITH comment = 'x' AND gc_grace_seconds = 5"))
	if av, ok := out.(*schema.AlterView); !ok || len(w) != 1 || !maps.Equal(av.Options, map[string]string{"gc_grace_seconds": "5"}) {
		t.Errorf("ALTER: %#v %v", out, w)
	}
	if out, w = guardrails.Prepare(g, parse(t, "ALTER MATERIALIZED VIEW ks.v WITH comment = 'x'")); out != nil || len(w) != 1 {
		t.Errorf("ALTER with nothing left: %#v %v", out, w)
	}
	same := parse(t, "ALTER MATERIALIZED VIEW ks.v WITH gc_grace_seconds = 5")
	if out, w = guardrails.Prepare(g, same); out != same || w != nil {
		t.Errorf("ALTER untouched: %#v %v", out, w)
	}
}

// TestViewSettings checks the three view settings through every way
// settings are given: their defaults, Set and Get (with the checks of
// other flags and thresholds), Validate's warn-not-above-fail, the
// `guardrails:` section of the config file, and the binary encoding
// (an encoding without them, as older versions wrote, decodes them as
// their defaults).
func TestViewSettings(t *testing.T) {
	d := guardrails.Defaults()
	if d.MaterializedViewsEnabled || d.MaterializedViewsPerTableWarnThreshold != -1 || d.MaterializedViewsPerTableFailThreshold != -1 {
		t.Fatalf("defaults %+v", d)
	}
	g := settings(t, "materialized_views_enabled=TRUE", "materialized_views_per_table_warn_threshold=3", "materialized_views_per_table_fail_threshold=5")
	if !g.MaterializedViewsEnabled || g.MaterializedViewsPerTableWarnThreshold != 3 || g.MaterializedViewsPerTableFailThreshold != 5 {
		t.Fatalf("set %+v", g)
	}
	if v, _ := g.Get("materialized_views_enabled"); v != "true" {
		t.Errorf("Get: %s", v)
	}
	for _, bad := range [][2]string{{"materialized_views_enabled", "yes"}, {"materialized_views_per_table_warn_threshold", "-2"}, {"materialized_views_per_table_fail_threshold", "x"}} {
		if _, err := d.Set(bad[0], bad[1]); !errors.Is(err, guardrails.ErrInvalidSetting) || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("Set(%s, %s): %v", bad[0], bad[1], err)
		}
	}
	if err := unvalidated(t, "materialized_views_per_table_warn_threshold=6", "materialized_views_per_table_fail_threshold=5").Validate(); !errors.Is(err, guardrails.ErrInvalidSetting) ||
		!strings.Contains(err.Error(), "must not be greater than materialized_views_per_table_fail_threshold (5)") {
		t.Errorf("warn above fail: %v", err)
	}
	if _, err := d.Set("materialized_view_enabled", "true"); !errors.Is(err, guardrails.ErrUnknownSetting) || !strings.Contains(err.Error(), "did you mean materialized_views_enabled?") {
		t.Errorf("misspelt: %v", err)
	}

	var cfg struct {
		Guardrails guardrails.Settings `yaml:"guardrails"`
	}
	cfg.Guardrails = guardrails.Defaults()
	doc := "guardrails:\n  materialized_views_enabled: true\n  materialized_views_per_table_warn_threshold: 3\n  materialized_views_per_table_fail_threshold: 5\n"
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil || cfg.Guardrails != g {
		t.Fatalf("YAML: %v %+v", err, cfg.Guardrails)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil || !strings.Contains(string(out), "materialized_views_enabled: true") || !strings.Contains(string(out), "materialized_views_per_table_fail_threshold: 5") {
		t.Fatalf("marshalled: %v\n%s", err, out)
	}
	if err := yaml.Unmarshal([]byte("guardrails:\n  materialized_views_enabled: sometimes\n"), &cfg); err == nil || !strings.Contains(err.Error(), "line 2: guardrail materialized_views_enabled") {
		t.Errorf("bad YAML value: %v", err)
	}

	back, err := guardrails.DecodeSettings(guardrails.AppendSettings(nil, g))
	if err != nil || back != g {
		t.Fatalf("encoding: %v %+v", err, back)
	}
	old := []byte{1, 1, 17, 0} // version 1, one setting: drop_keyspace_enabled false
	if o, err := guardrails.DecodeSettings(old); err != nil || o.MaterializedViewsEnabled || o.MaterializedViewsPerTableFailThreshold != -1 || o.DropKeyspaceEnabled {
		t.Errorf("older encoding: %v %+v", err, o)
	}
}
