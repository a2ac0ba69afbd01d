package guardrails_test

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"pgregory.net/rapid"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

// override returns the override of scope with the name=value pairs set,
// validated.
func override(t testing.TB, scope string, pairs ...string) guardrails.Override {
	t.Helper()
	o := guardrails.Override{Scope: scope}
	for _, p := range pairs {
		name, value, _ := strings.Cut(p, "=")
		var err error
		if o, err = o.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

// overrides returns the set of the given overrides.
func overrides(os ...guardrails.Override) guardrails.Overrides {
	var ov guardrails.Overrides
	for _, o := range os {
		ov = ov.With(o)
	}
	return ov
}

func TestParseScope(t *testing.T) {
	for _, ok := range []string{"shop", " shop ", "tenant_*", "*", "T1*", strings.Repeat("a", 48), strings.Repeat("a", 47) + "*"} {
		if _, err := guardrails.ParseScope(ok); err != nil {
			t.Errorf("ParseScope(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "sh-op", "ten*ant", "**", "a*b*", strings.Repeat("a", 49), strings.Repeat("a", 48) + "*", "shop.t"} {
		_, err := guardrails.ParseScope(bad)
		if !errors.Is(err, guardrails.ErrInvalidSetting) || !strings.Contains(err.Error(), "keyspace scope") {
			t.Errorf("ParseScope(%q): %v, want an invalid keyspace scope", bad, err)
		}
	}
}

// TestOverrideRefusesClusterSettings: an override may set only the count
// guardrails inside a keyspace; the others are refused naming the setting
// and why.
func TestOverrideRefusesClusterSettings(t *testing.T) {
	for _, tc := range []struct{ name, why string }{
		{"keyspaces_fail_threshold", "counts the keyspaces of the whole cluster"},
		{"minimum_replication_factor_fail_threshold", "replication factors"},
		{"maximum_replication_factor_warn_threshold", "replication factors"},
		{"drop_keyspace_enabled", "feature flags"},
		{"table_properties_disallowed", "table property sets"},
	} {
		_, err := guardrails.Override{Scope: "shop"}.Set(tc.name, "1")
		if !errors.Is(err, guardrails.ErrInvalidSetting) {
			t.Errorf("%s: %v, want ErrInvalidSetting", tc.name, err)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"guardrail " + tc.name + ":", "cannot be overridden per keyspace", tc.why, "tables_fail_threshold"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, want)
			}
		}
	}
	if _, err := (guardrails.Override{Scope: "shop"}).Set("tables_fail_treshold", "1"); !errors.Is(err, guardrails.ErrUnknownSetting) || !strings.Contains(err.Error(), "did you mean tables_fail_threshold") {
		t.Errorf("misspelt: %v", err)
	}
	if _, err := (guardrails.Override{Scope: "shop"}).Set("tables_fail_threshold", "-2"); !errors.Is(err, guardrails.ErrInvalidSetting) {
		t.Errorf("-2: %v", err)
	}
	if len(guardrails.OverridableNames()) != 12 {
		t.Errorf("OverridableNames: %v", guardrails.OverridableNames())
	}
}

func TestOverrideSetDefaultAndValidate(t *testing.T) {
	o := override(t, "shop", "tables_fail_threshold=50", "columns_per_table_warn_threshold=10")
	if got := o.String(); got != "columns_per_table_warn_threshold=10 tables_fail_threshold=50" {
		t.Errorf("String = %q", got)
	}
	o, err := o.Set("tables_fail_threshold", "DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.Get("tables_fail_threshold"); ok || o.Len() != 1 {
		t.Errorf("default did not remove: %v", o)
	}
	o, _ = o.Set("columns_per_table_warn_threshold", "default")
	if !o.Empty() || o != (guardrails.Override{Scope: "shop"}) {
		t.Errorf("not empty: %v", o)
	}
	bad := override(t, "shop", "tables_warn_threshold=10")
	bad, _ = bad.Set("tables_fail_threshold", "5")
	if err := bad.Validate(); !errors.Is(err, guardrails.ErrInvalidSetting) || !strings.Contains(err.Error(), "must not be greater than tables_fail_threshold (5) of keyspace shop") {
		t.Errorf("warn above fail: %v", err)
	}
	// A warn of the override above a fail of the cluster is fine: the
	// counts differ.
	if err := override(t, "shop", "tables_warn_threshold=10", "tables_fail_threshold=-1").Validate(); err != nil {
		t.Error(err)
	}
}

// TestLookupPrecedence: the exact override wins, else the longest
// matching pattern; the others do not stack.
func TestLookupPrecedence(t *testing.T) {
	ov := overrides(
		override(t, "*", "tables_fail_threshold=100"),
		override(t, "tenant_*", "tables_fail_threshold=10"),
		override(t, "tenant_big*", "tables_fail_threshold=1000"),
		override(t, "tenant_bigx", "columns_per_table_fail_threshold=5"),
	)
	for ks, want := range map[string]string{
		"shop": "*", "tenant_a": "tenant_*", "tenant_big": "tenant_big*", "tenant_bigger": "tenant_big*",
		"tenant_bigx": "tenant_bigx", "tenant": "*",
	} {
		o, ok := ov.Lookup(ks)
		if !ok || o.Scope != want {
			t.Errorf("Lookup(%s) = %q %v, want %s", ks, o.Scope, ok, want)
		}
	}
	g, o, ok := ov.Effective(guardrails.Defaults(), "tenant_bigx")
	if !ok || o.Scope != "tenant_bigx" || g.ColumnsPerTableFailThreshold != 5 || g.TablesFailThreshold != -1 {
		t.Errorf("Effective: %v %v %+v", o, ok, g)
	}
	if ov.Len() != 4 || len(ov.All()) != 4 || ov.All()[0].Scope != "*" {
		t.Errorf("All: %v", ov.All())
	}
	ov2 := ov.With(guardrails.Override{Scope: "tenant_*"})
	if ov2.Len() != 3 || ov.Len() != 4 {
		t.Errorf("With(empty) did not remove, or changed the receiver: %d %d", ov2.Len(), ov.Len())
	}
	if o, _ := ov2.Lookup("tenant_a"); o.Scope != "*" {
		t.Errorf("after removal: %v", o)
	}
	if (guardrails.Overrides{}).With(guardrails.Override{Scope: "x"}) != (guardrails.Overrides{}) {
		t.Error("removing from none is not none")
	}
}

// TestLookupMatchesReference compares Lookup with a plain reference model:
// the exact scope if present, else of all matching patterns the longest.
func TestLookupMatchesReference(t *testing.T) {
	names := rapid.StringMatching(`[ab_]{0,4}`)
	rapid.Check(t, func(t *rapid.T) {
		ref := map[string]int64{}
		var ov guardrails.Overrides
		for i, n := 0, rapid.IntRange(0, 12).Draw(t, "n"); i < n; i++ {
			scope := names.Draw(t, "name")
			if rapid.Bool().Draw(t, "pattern") {
				scope += "*"
			} else if scope == "" {
				continue
			}
			v := rapid.Int64Range(-1, 50).Draw(t, "v")
			o, err := guardrails.Override{Scope: scope}.Set("tables_fail_threshold", guardrails.Default)
			if err != nil {
				t.Fatal(err)
			}
			if rapid.IntRange(0, 4).Draw(t, "remove") == 0 {
				delete(ref, scope)
			} else {
				o, _ = o.Set("tables_fail_threshold", strconv.FormatInt(v, 10))
				ref[scope] = v
			}
			ov = ov.With(o)
		}
		ks := names.Draw(t, "ks")
		want, wantOK := "", false
		if _, ok := ref[ks]; ok {
			want, wantOK = ks, true
		} else {
			var pats []string
			for s := range ref {
				if p, ok := strings.CutSuffix(s, "*"); ok && strings.HasPrefix(ks, p) {
					pats = append(pats, s)
				}
			}
			sort.Slice(pats, func(i, j int) bool { return len(pats[i]) > len(pats[j]) })
			if len(pats) > 0 {
				want, wantOK = pats[0], true
			}
		}
		o, ok := ov.Lookup(ks)
		if ok != wantOK || o.Scope != want {
			t.Fatalf("Lookup(%q) = %q %v, want %q %v (overrides %v)", ks, o.Scope, ok, want, wantOK, ref)
		}
		if ok {
			if v, _ := o.Get("tables_fail_threshold"); v != ref[want] {
				t.Fatalf("value %d, want %d", v, ref[want])
			}
		}
		if ov.Len() != len(ref) {
			t.Fatalf("Len %d, want %d", ov.Len(), len(ref))
		}
		back, err := guardrails.DecodeOverrides(guardrails.AppendOverrides(nil, ov))
		if err != nil || !back.Equal(ov) {
			t.Fatalf("round trip: %v, %v != %v", err, back.All(), ov.All())
		}
	})
}

func TestOverrideEncoding(t *testing.T) {
	o := override(t, "tenant_*", "tables_fail_threshold=50", "vector_dimensions_warn_threshold=-1")
	back, err := guardrails.DecodeOverride(guardrails.AppendOverride(nil, o))
	if err != nil || back != o {
		t.Fatalf("round trip: %v %v", back, err)
	}
	empty := guardrails.Override{Scope: "shop"}
	if back, err := guardrails.DecodeOverride(guardrails.AppendOverride(nil, empty)); err != nil || back != empty {
		t.Fatalf("empty round trip: %v %v", back, err)
	}
	if ov, err := guardrails.DecodeOverrides(guardrails.AppendOverrides(nil, guardrails.Overrides{})); err != nil || ov.Len() != 0 {
		t.Fatalf("none: %v %v", ov, err)
	}
	good := guardrails.AppendOverride(nil, o)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte(nil), good...), 0),
		"bad scope": guardrails.AppendOverride(nil, guardrails.Override{Scope: "a-b"}),
	} {
		if _, err := guardrails.DecodeOverride(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	// An override set may not hold an empty override.
	withEmpty := append([]byte{guardrails.OverridesEncodingVersion, 1}, guardrails.AppendOverride(nil, empty)[1:]...)
	if _, err := guardrails.DecodeOverrides(withEmpty); err == nil {
		t.Error("empty override in a set decoded")
	}
}

// TestKeyspaceTablesOverride: shop limited to 2 tables refuses the third
// in Cassandra's words with the scope; other is unaffected; the cluster's
// total still applies; warnings name the scope too.
func TestKeyspaceTablesOverride(t *testing.T) {
	before := build(t, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE shop.t1 (id int PRIMARY KEY);
CREATE TABLE shop.t2 (id int PRIMARY KEY);
CREATE TABLE other.t1 (id int PRIMARY KEY);
CREATE TABLE other.t2 (id int PRIMARY KEY);
CREATE TABLE other.t3 (id int PRIMARY KEY)`)
	ov := overrides(override(t, "shop", "tables_fail_threshold=2"), override(t, "tenant_*", "tables_warn_threshold=0"))
	run := func(g guardrails.Settings, text string) ([]guardrails.Warning, error) {
		st := parse(t, text)
		after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return guardrails.Check(g, guardrails.Input{Statement: st, Result: res, Before: before, After: after, Keyspaces: ov})
	}
	_, err := run(guardrails.Defaults(), `CREATE TABLE shop.t3 (id int PRIMARY KEY)`)
	want := "Guardrail tables_fail_threshold violated: Cannot have more than 2 tables, aborting the creation of table shop.t3 (keyspace shop: tables_fail_threshold=2)"
	var f *guardrails.Failure
	if !errors.As(err, &f) || f.Message != want || f.Scope != "shop" || f.Guardrail != "tables_fail_threshold" {
		t.Fatalf("shop.t3: %v, want %q", err, want)
	}
	if w, err := run(guardrails.Defaults(), `CREATE TABLE other.t4 (id int PRIMARY KEY)`); err != nil || len(w) != 0 {
		t.Errorf("other.t4: %v %v", w, err)
	}
	// The cluster's total: 5 tables exist.
	_, err = run(settings(t, "tables_fail_threshold=5", "tables_warn_threshold=4"), `CREATE TABLE other.t4 (id int PRIMARY KEY)`)
	if !errors.As(err, &f) || f.Scope != "" || !strings.HasSuffix(f.Message, "aborting the creation of table other.t4") {
		t.Errorf("total: %v", err)
	}
	// Both checks run: the keyspace's first, then the total's, which
	// refuses a table of shop too.
	_, err = run(settings(t, "tables_fail_threshold=5", "tables_warn_threshold=4"), `CREATE TABLE shop.t3 (id int PRIMARY KEY)`)
	if !errors.As(err, &f) || f.Scope != "shop" {
		t.Errorf("shop over both: %v", err)
	}
	ov = overrides(override(t, "shop", "tables_fail_threshold=10"))
	_, err = run(settings(t, "tables_fail_threshold=5", "tables_warn_threshold=4"), `CREATE TABLE shop.t3 (id int PRIMARY KEY)`)
	if !errors.As(err, &f) || f.Scope != "" || !strings.HasSuffix(f.Message, "Cannot have more than 5 tables, aborting the creation of table shop.t3") {
		t.Errorf("shop over the total only: %v", err)
	}
	ov = overrides(override(t, "shop", "tables_fail_threshold=2"), override(t, "tenant_*", "tables_warn_threshold=0"))
	before = build(t, `CREATE KEYSPACE tenant_a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	w, err := run(guardrails.Defaults(), `CREATE TABLE tenant_a.t (id int PRIMARY KEY)`)
	wantW := "Guardrail tables_warn_threshold violated: Creating table tenant_a.t, current number of tables 1 exceeds warning threshold of 0. (keyspace tenant_a, override tenant_*: tables_warn_threshold=0)"
	if err != nil || len(w) != 1 || w[0].Message != wantW {
		t.Errorf("tenant_a: %v %v, want %q", w, err, wantW)
	}
}

// TestKeyspacePerObjectOverride: the per-object thresholds of the override
// replace the cluster's in its keyspace only, tighter or looser.
func TestKeyspacePerObjectOverride(t *testing.T) {
	before := build(t, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE other WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	g := settings(t, "columns_per_table_fail_threshold=3")
	ov := overrides(override(t, "shop", "columns_per_table_fail_threshold=5", "fields_per_udt_fail_threshold=1"))
	run := func(text string) error {
		st := parse(t, text)
		after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1000})
		if err != nil {
			t.Fatal(err)
		}
		_, err = guardrails.Check(g, guardrails.Input{Statement: st, Result: res, Before: before, After: after, Keyspaces: ov})
		return err
	}
	four := ` (a int PRIMARY KEY, b int, c int, d int)`
	if err := run(`CREATE TABLE shop.t` + four); err != nil {
		t.Errorf("shop, looser: %v", err)
	}
	if err := run(`CREATE TABLE other.t` + four); !errors.Is(err, guardrails.ErrFailed) || strings.Contains(err.Error(), "keyspace") {
		t.Errorf("other, cluster's: %v", err)
	}
	err := run(`CREATE TYPE shop.ut (a int, b int)`)
	want := "Guardrail fields_per_udt_fail_threshold violated: User types cannot have more than 1 columns, but 2 provided for user type shop.ut. (keyspace shop: fields_per_udt_fail_threshold=1)"
	if err == nil || err.Error() != want {
		t.Errorf("type: %v, want %q", err, want)
	}
}

// TestKeyspaceCheckDoesNotWalkTables: with an override, Check allocates as
// much with 8,000 tables in the keyspace as with 1,000.
func TestKeyspaceCheckDoesNotWalkTables(t *testing.T) {
	ov := overrides(override(t, "ks", "tables_warn_threshold=10", "columns_per_table_warn_threshold=1"), override(t, "k*", "tables_fail_threshold=5"))
	small, large := schemaWithTables(t, 1000), schemaWithTables(t, 8000)
	for _, text := range []string{`CREATE TABLE ks.new (id int PRIMARY KEY, v text)`, `ALTER TABLE ks.t5 ADD (c int, d int)`} {
		st := parse(t, text)
		allocs := func(before schema.Schema) float64 {
			after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1})
			if err != nil {
				t.Fatal(err)
			}
			in := guardrails.Input{Statement: st, Result: res, Before: before, After: after, Keyspaces: ov}
			return testing.AllocsPerRun(100, func() { _, _ = guardrails.Check(guardrails.Defaults(), in) })
		}
		if a, b := allocs(small), allocs(large); a != b || a == 0 {
			t.Errorf("%s: %v allocations with 1000 tables, %v with 8000 (want equal, and a warning)", text, a, b)
		}
	}
	// Silent: nothing allocated.
	st := parse(t, `CREATE TABLE ks.new (id int PRIMARY KEY, v text)`)
	after, _, res, _ := schema.Apply(large, st, schema.Env{Epoch: 1})
	quiet := overrides(override(t, "ks", "tables_fail_threshold=100000"))
	in := guardrails.Input{Statement: st, Result: res, Before: large, After: after, Keyspaces: quiet}
	g := settings(t, "tables_warn_threshold=-1")
	if n := testing.AllocsPerRun(100, func() { _, _ = guardrails.Check(g, in) }); n != 0 {
		t.Errorf("silent path: %v allocations", n)
	}
}

func TestEffectiveValuesSource(t *testing.T) {
	g := settings(t, "tables_warn_threshold=500")
	ov := overrides(override(t, "tenant_*", "tables_fail_threshold=50"))
	src := map[string]string{}
	val := map[string]string{}
	for _, v := range ov.EffectiveValues(g, "tenant_a") {
		src[v.Name], val[v.Name] = v.Source, v.Value
	}
	if src["tables_fail_threshold"] != "keyspace:tenant_*" || val["tables_fail_threshold"] != "50" ||
		src["tables_warn_threshold"] != "cluster" || src["keyspaces_fail_threshold"] != "default" {
		t.Errorf("sources %v values %v", src, val)
	}
	for _, v := range ov.EffectiveValues(g, "shop") {
		if strings.HasPrefix(v.Source, "keyspace:") {
			t.Errorf("shop: %v", v)
		}
	}
}

func TestCheckScopedOverride(t *testing.T) {
	cluster := settings(t, "tables_warn_threshold=90", "tables_fail_threshold=100", "columns_per_table_warn_threshold=5")
	for _, tc := range []struct {
		set  map[string]string
		want string // "" for allowed
	}{
		{map[string]string{"tables_fail_threshold": "50"}, ""},
		{map[string]string{"tables_fail_threshold": "100"}, ""},
		{map[string]string{"tables_fail_threshold": "default"}, ""},
		{map[string]string{"tables_warn_threshold": "1000"}, ""},
		{map[string]string{"columns_per_table_fail_threshold": "-1"}, ""}, // the cluster's is disabled
		{map[string]string{"columns_per_table_fail_threshold": "1000"}, ""},
		{map[string]string{"tables_fail_threshold": "101"}, "guardrail tables_fail_threshold=101: a keyspace-scoped operator may not loosen the cluster's fail threshold (tables_fail_threshold=100), and 101 is above it; ask an unscoped operator"},
		{map[string]string{"tables_fail_threshold": "-1"}, "guardrail tables_fail_threshold=-1: a keyspace-scoped operator may not loosen the cluster's fail threshold (tables_fail_threshold=100), and -1 would disable it in the keyspace; ask an unscoped operator"},
	} {
		err := guardrails.CheckScopedOverride(cluster, tc.set)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.set, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.Is(err, guardrails.ErrScopedOverride)):
			t.Errorf("%v: %v, want %q", tc.set, err, tc.want)
		}
	}
	if err := guardrails.CheckScopedOverride(cluster, map[string]string{"keyspaces_fail_threshold": "1"}); !errors.Is(err, guardrails.ErrInvalidSetting) {
		t.Errorf("cluster-only setting: %v", err)
	}
	if err := guardrails.CheckScopedOverride(cluster, map[string]string{"tables_fail_threshold": "x"}); !errors.Is(err, guardrails.ErrInvalidSetting) {
		t.Errorf("bad value: %v", err)
	}
}

func TestKeyspaceOverridesYAML(t *testing.T) {
	var cfg struct {
		K guardrails.KeyspaceOverrides `yaml:"keyspace_guardrails"`
	}
	doc := "keyspace_guardrails:\n  tenant_*: {tables_fail_threshold: 10}\n  shop:\n    tables_fail_threshold: 50\n    columns_per_table_warn_threshold: 20\n"
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	list := cfg.K.List()
	if len(list) != 2 || list[0].Scope != "shop" || list[0].String() != "columns_per_table_warn_threshold=20 tables_fail_threshold=50" || list[1].Scope != "tenant_*" {
		t.Fatalf("decoded %v", list)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		K guardrails.KeyspaceOverrides `yaml:"keyspace_guardrails"`
	}
	if err := yaml.Unmarshal(out, &back); err != nil || back.K != cfg.K {
		t.Fatalf("round trip: %v %v\n%s", back.K.List(), err, out)
	}
	for doc, want := range map[string]string{
		"keyspace_guardrails: [a]\n":                                                                     "line 1: keyspace_guardrails must be a mapping",
		"keyspace_guardrails:\n  sh-op: {tables_fail_threshold: 1}\n":                                    "line 2: keyspace scope",
		"keyspace_guardrails:\n  shop: {keyspaces_fail_threshold: 1}\n":                                  "line 2: guardrail keyspaces_fail_threshold: cannot be overridden per keyspace",
		"keyspace_guardrails:\n  shop: {tables_fail_threshold: x}\n":                                     "line 2: guardrail tables_fail_threshold=\"x\": not an integer",
		"keyspace_guardrails:\n  shop: {}\n":                                                             "line 2: keyspace_guardrails: shop must be a non-empty mapping",
		"keyspace_guardrails:\n  shop: {tables_fail_threshold: 1}\n  shop: {tables_warn_threshold: 1}\n": "line 3: keyspace_guardrails: scope shop given twice (first on line 2)",
	} {
		var c struct {
			K guardrails.KeyspaceOverrides `yaml:"keyspace_guardrails"`
		}
		err := yaml.Unmarshal([]byte(doc), &c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
