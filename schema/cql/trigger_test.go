package cql

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// TestParseTrigger checks every form of CREATE and DROP TRIGGER: IF [NOT]
// EXISTS, quoted names, and an unqualified table, which USE qualifies.
func TestParseTrigger(t *testing.T) {
	tests := []struct {
		in   string
		want []schema.Statement
	}{
		{"CREATE TRIGGER audit ON ks.t USING 'org.example.Audit'",
			[]schema.Statement{&schema.CreateTrigger{Keyspace: "ks", Table: "t", Name: "audit", Class: "org.example.Audit"}}},
		{"create trigger if not exists Audit on T using $$it's$$",
			[]schema.Statement{&schema.CreateTrigger{Table: "t", Name: "audit", Class: "it's", IfNotExists: true}}},
		{`CREATE TRIGGER "Au dit" ON "KS"."T" USING 'C'`,
			[]schema.Statement{&schema.CreateTrigger{Keyspace: "KS", Table: "T", Name: "Au dit", Class: "C"}}},
		{"DROP TRIGGER audit ON ks.t",
			[]schema.Statement{&schema.DropTrigger{Keyspace: "ks", Table: "t", Name: "audit"}}},
		{`DROP TRIGGER IF EXISTS "A" ON t`,
			[]schema.Statement{&schema.DropTrigger{Table: "t", Name: "A", IfExists: true}}},
		{"USE ks; CREATE TRIGGER a ON t USING 'C'; DROP TRIGGER a ON t; DROP TRIGGER a ON other.t", []schema.Statement{
			&schema.Use{Keyspace: "ks"},
			&schema.CreateTrigger{Keyspace: "ks", Table: "t", Name: "a", Class: "C"},
			&schema.DropTrigger{Keyspace: "ks", Table: "t", Name: "a"},
			&schema.DropTrigger{Keyspace: "other", Table: "t", Name: "a"},
		}},
	}
	for _, tt := range tests {
		parsed, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		var got []schema.Statement
		for _, p := range parsed {
			got = append(got, p.Statement)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

// TestTriggerSyntaxErrors checks the errors of malformed trigger
// statements, each at the token that is wrong.
func TestTriggerSyntaxErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CREATE TRIGGER a ON ks.t", `line 1:25: unexpected end of input, expected USING`},
		{"CREATE TRIGGER a ON ks.t USING ''", `line 1:32: empty trigger class`},
		{"CREATE TRIGGER a ON ks.t USING C", `line 1:32: unexpected "C", expected the trigger class as a string`},
		{"CREATE TRIGGER a ON ks.t USING 'C' WITH x", `line 1:36: unexpected "WITH", expected ';' or end of input`},
		{"CREATE TRIGGER a ks.t USING 'C'", `line 1:18: unexpected "ks", expected ON`},
		{"CREATE TRIGGER ON ks.t USING 'C'", `line 1:16: unexpected "ON", expected a trigger name`},
		{"CREATE TRIGGER a ON USING 'C'", `line 1:21: unexpected "USING", expected a table name`},
		{"CREATE TRIGGER IF EXISTS a ON t USING 'C'", `line 1:19: unexpected "EXISTS", expected NOT`},
		{"CREATE TRIGGER a ON ks. USING 'C'", `line 1:25: unexpected "USING", expected a table name`},
		{"DROP TRIGGER a", `line 1:15: unexpected end of input, expected ON`},
		{"DROP TRIGGER IF NOT EXISTS a ON t", `line 1:17: unexpected "NOT", expected EXISTS`},
		{"DROP TRIGGER a ON t USING 'C'", `line 1:21: unexpected "USING", expected ';' or end of input`},
		{"DROP TRIGGER\n  table ON t", `line 2:3: unexpected "table", expected a trigger name`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v, want %s", tt.in, err, tt.want)
		}
	}
}

// TestTriggerDescribeRoundTrip checks that the DESCRIBE output of a schema
// with triggers (quoted names, a class with a quote, two tables) parses
// and applies to the same schema up to the order of a table's columns,
// whose own round trip keeps its digest.
func TestTriggerDescribeRoundTrip(t *testing.T) {
	parsed, err := Parse(fuzzBase + `
CREATE TABLE ks."Other" (id int PRIMARY KEY);
CREATE INDEX by_v ON ks.t (v);
CREATE TRIGGER audit ON ks.t USING 'org.apache.cassandra.triggers.AuditTrigger';
CREATE TRIGGER "Second" ON ks.t USING 'it''s';
CREATE TRIGGER "select" ON ks."Other" USING 'C'`)
	if err != nil {
		t.Fatal(err)
	}
	s := applyAll(t, schema.Schema{}, parsed, 1)
	if tbl, _ := s.Table("ks", "t"); len(tbl.Triggers()) != 2 {
		t.Fatalf("triggers of ks.t: %+v", tbl.Triggers())
	}
	s2, desc := reapplyDescribe(t, s, 500)
	checkDigestFixed(t, s2)
	_, tables, _, _ := flatten(s)
	_, tables2, _, _ := flatten(s2)
	if d := cmp.Diff(tables, tables2, anyColumnOrder); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if desc2 := describe.Schema(s2); desc2 != desc {
		t.Errorf("DESCRIBE differs after the round trip:\n%s\nwant:\n%s", desc2, desc)
	}
}
