package guardrails_test

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
)

func TestPrepare(t *testing.T) {
	g := settings(t, "table_properties_ignored=comment,gc_grace_seconds")
	tests := []struct {
		name     string
		stmt     string
		wantOpts map[string]string // Options of the prepared statement
		nilStmt  bool
		same     bool // the input itself is returned
	}{
		{name: "create strips", stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH comment = 'x' AND default_time_to_live = 5 AND gc_grace_seconds = 1`,
			wantOpts: map[string]string{"default_time_to_live": "5"}},
		{name: "create strips all", stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH comment = 'x'`},
		{name: "create untouched", stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH default_time_to_live = 5`, same: true},
		{name: "like strips", stmt: `CREATE TABLE ks.u LIKE ks.t WITH comment = 'x' AND default_time_to_live = 5`,
			wantOpts: map[string]string{"default_time_to_live": "5"}},
		{name: "like untouched", stmt: `CREATE TABLE ks.u LIKE ks.t`, same: true},
		{name: "alter strips", stmt: `ALTER TABLE ks.t WITH comment = 'x' AND default_time_to_live = 5`,
			wantOpts: map[string]string{"default_time_to_live": "5"}},
		{name: "alter nothing left", stmt: `ALTER TABLE ks.t WITH comment = 'x'`, nilStmt: true},
		{name: "alter add", stmt: `ALTER TABLE ks.t ADD c int`, same: true},
		{name: "other statement", stmt: `DROP TABLE ks.t`, same: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := parse(t, tt.stmt)
			var inOpts map[string]string
			switch st := in.(type) {
			case *schema.CreateTable:
				inOpts = maps.Clone(st.Options)
			case *schema.CreateTableLike:
				inOpts = maps.Clone(st.Options)
			case *schema.AlterTable:
				inOpts = maps.Clone(st.Options)
			}
			snapshot := parse(t, tt.stmt) // an equal, independent copy
			out, warnings := guardrails.Prepare(g, in)
			if diff := cmp.Diff(snapshot, in); diff != "" {
				t.Fatalf("Prepare modified its input (-before +after):\n%s", diff)
			}
			switch st := in.(type) {
			case *schema.CreateTable:
				if !maps.Equal(st.Options, inOpts) {
					t.Fatalf("input options changed to %v", st.Options)
				}
			case *schema.CreateTableLike:
				if !maps.Equal(st.Options, inOpts) {
					t.Fatalf("input options changed to %v", st.Options)
				}
			case *schema.AlterTable:
				if !maps.Equal(st.Options, inOpts) {
					t.Fatalf("input options changed to %v", st.Options)
				}
			}
			if tt.same {
				if out != in || warnings != nil {
					t.Fatalf("got %v, %v; want the input and no warnings", out, warnings)
				}
				return
			}
			if len(warnings) != 1 || warnings[0].Guardrail != "table_properties_ignored" {
				t.Fatalf("warnings %v", warnings)
			}
			if tt.nilStmt {
				if out != nil {
					t.Fatalf("got %v, want nil", out)
				}
				return
			}
			if out == in {
				t.Fatal("Prepare returned its input after stripping")
			}
			var got map[string]string
			switch st := out.(type) {
			case *schema.CreateTable:
				got = st.Options
			case *schema.CreateTableLike:
				got = st.Options
			case *schema.AlterTable:
				got = st.Options
			}
			if !maps.Equal(got, tt.wantOpts) {
				t.Fatalf("options %v, want %v", got, tt.wantOpts)
			}
		})
	}
	// Without ignored properties Prepare is the identity.
	st := parse(t, `CREATE TABLE ks.u (id int PRIMARY KEY) WITH comment = 'x'`)
	if out, w := guardrails.Prepare(guardrails.Defaults(), st); out != st || w != nil {
		t.Fatalf("defaults: %v %v", out, w)
	}
}
