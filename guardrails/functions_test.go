package guardrails_test

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/metalog/metalog/guardrails"
)

// functionsSetup is a keyspace with a function and an aggregate over it.
const functionsSetup = ks + `
CREATE FUNCTION ks.f(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s;';
CREATE AGGREGATE ks.agg(int) SFUNC f STYPE int INITCOND 0;`

// TestUserDefinedFunctionsEnabled: CREATE FUNCTION and CREATE AGGREGATE
// are refused by default, naming the setting and how to set it, and pass
// once it is true; DROP FUNCTION and DROP AGGREGATE pass either way, so
// that an operator can clean up.
func TestUserDefinedFunctionsEnabled(t *testing.T) {
	if guardrails.Defaults().UserDefinedFunctionsEnabled {
		t.Fatal("user_defined_functions_enabled defaults to true, want false as in Cassandra")
	}
	creates := []struct{ setup, stmt, object string }{
		{ks, `CREATE FUNCTION ks.g(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'`, "ks.g(int)"},
		{ks, `CREATE OR REPLACE FUNCTION ks.g(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'`, "ks.g(int)"},
		{functionsSetup, `CREATE AGGREGATE ks.agg2(int) SFUNC f STYPE int INITCOND 1`, "ks.agg2(int)"},
	}
	for _, c := range creates {
		before := build(t, c.setup)
		st := parse(t, c.stmt)
		_, err := check(t, guardrails.Defaults(), before, st, 0)
		var f *guardrails.Failure
		if !errors.As(err, &f) || f.Guardrail != guardrails.UserDefinedFunctions {
			t.Fatalf("%s: got %v, want a failure of %s", c.stmt, err, guardrails.UserDefinedFunctions)
		}
		for _, want := range []string{"Guardrail user_defined_functions_enabled violated: User-defined functions are disabled", st.Kind() + " " + c.object,
			"set user_defined_functions_enabled=true to enable", "metalog guardrails set user_defined_functions_enabled=true", "guardrails: in the config file"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: message %q lacks %q", c.stmt, err, want)
			}
		}
		if w, err := check(t, settings(t, "user_defined_functions_enabled=true"), before, st, 0); err != nil || len(w) > 0 {
			t.Errorf("%s enabled: warnings %v, err %v", c.stmt, w, err)
		}
	}
	for _, stmt := range []string{`DROP AGGREGATE ks.agg`, `DROP AGGREGATE IF EXISTS ks.nope(int)`} {
		if w, err := check(t, guardrails.Defaults(), build(t, functionsSetup), parse(t, stmt), 0); err != nil || len(w) > 0 {
			t.Errorf("%s disabled: warnings %v, err %v", stmt, w, err)
		}
	}
	if w, err := check(t, guardrails.Defaults(), build(t, ks+`CREATE FUNCTION ks.g(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS '';`), parse(t, `DROP FUNCTION ks.g`), 0); err != nil || len(w) > 0 {
		t.Errorf("DROP FUNCTION disabled: warnings %v, err %v", w, err)
	}
	// A no-op (IF NOT EXISTS of an existing function) passes silently.
	before := build(t, functionsSetup)
	if w, err := check(t, guardrails.Defaults(), before, parse(t, `CREATE FUNCTION IF NOT EXISTS ks.f(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS ''`), 0); err != nil || len(w) > 0 {
		t.Errorf("no-op: warnings %v, err %v", w, err)
	}
}

// TestUserDefinedFunctionsSetting: the setting is set by name (metalog
// guardrails set), read from the config file's guardrails: section, and
// survives the encoding the log and the store keep.
func TestUserDefinedFunctionsSetting(t *testing.T) {
	g, err := guardrails.Defaults().Set("user_defined_functions_enabled", "true")
	if err != nil || !g.UserDefinedFunctionsEnabled {
		t.Fatalf("Set: %v %v", g.UserDefinedFunctionsEnabled, err)
	}
	if v, err := g.Get("user_defined_functions_enabled"); err != nil || v != "true" {
		t.Fatalf("Get: %q %v", v, err)
	}
	if _, err := guardrails.Defaults().Set("user_defined_functions_enabled", "yes"); !errors.Is(err, guardrails.ErrInvalidSetting) {
		t.Fatalf("Set yes: %v", err)
	}
	var cfg struct {
		Guardrails guardrails.Settings `yaml:"guardrails"`
	}
	cfg.Guardrails = guardrails.Defaults()
	if err := yaml.Unmarshal([]byte("guardrails:\n  user_defined_functions_enabled: true\n"), &cfg); err != nil || !cfg.Guardrails.UserDefinedFunctionsEnabled {
		t.Fatalf("yaml: %v %v", cfg.Guardrails.UserDefinedFunctionsEnabled, err)
	}
	out, err := yaml.Marshal(cfg.Guardrails)
	if err != nil || !strings.Contains(string(out), "user_defined_functions_enabled: true") {
		t.Fatalf("marshal: %s %v", out, err)
	}
	got, err := guardrails.DecodeSettings(guardrails.AppendSettings(nil, g))
	if err != nil || got != g {
		t.Fatalf("decode: %+v %v", got, err)
	}
}
