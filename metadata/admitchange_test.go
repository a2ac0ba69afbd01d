package metadata

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema/cql"
)

// TestChangeAdmissionRules: the admission rules that depend on the change
// refuse a new request in the pre-check (and so in a dry run), while the
// log's apply of the same command, as when replaying an entry logged
// before the rule, applies it.
func TestChangeAdmissionRules(t *testing.T) {
	setup := ksDDL + "; CREATE TYPE shop.code (a int); CREATE TYPE shop.wrapper (c frozen<code>); CREATE TYPE shop.free (x int); CREATE TYPE shop.ckey (a int); CREATE TYPE shop.span (d duration);" +
		"CREATE TABLE shop.keyed (id frozen<wrapper> PRIMARY KEY, v text);" +
		"CREATE TABLE shop.clustered (p int, c frozen<code>, PRIMARY KEY (p, c));" +
		"CREATE TABLE shop.plain (id int PRIMARY KEY, f frozen<free>);" +
		"CREATE TABLE shop.ordered (p int, c frozen<ckey>, PRIMARY KEY (p, c));" +
		"CREATE TABLE shop.spans (id int PRIMARY KEY, s frozen<span>, loose free, tight frozen<free>);" +
		"CREATE TABLE shop.hits (id int PRIMARY KEY, n counter)"
	m, _, _, err := (&ClusterMetadata{Guardrails: guardrails.Defaults()}).Apply(Command{Text: setup}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, refused string }{
		{"CREATE TABLE shop.c2 (id int PRIMARY KEY, n counter) WITH default_time_to_live = 10", "cannot set default_time_to_live on a table with counters"},
		{"ALTER TABLE shop.hits WITH default_time_to_live = 5", "cannot set default_time_to_live on a table with counters"},
		{"CREATE TABLE shop.hits2 LIKE shop.hits WITH default_time_to_live = 1", "cannot set default_time_to_live on a table with counters"},
		{"CREATE TABLE shop.c3 (id int PRIMARY KEY, n counter) WITH default_time_to_live = 0", ""},
		{"ALTER TYPE shop.ckey ADD b int", ""}, // only in a clustering key
		{"ALTER TYPE shop.code ADD b int", "the type is used in the partition key column id of table shop.keyed"}, // inside wrapper
		{"ALTER TYPE shop.wrapper RENAME c TO d", ""},
		{"ALTER TYPE shop.wrapper ADD e int", "cannot add field e: the type is used in the partition key column id of table shop.keyed"},
		{"ALTER TYPE shop.wrapper ADD IF NOT EXISTS c int", ""}, // it has c: nothing added
		{"ALTER TYPE shop.free ADD y int", ""},
		{"CREATE INDEX ON shop.spans (s)", "secondary indexes are not supported on UDTs containing durations (column s)"},
		{"CREATE INDEX ON shop.spans (tight)", ""},
		{"ALTER TABLE shop.spans DROP loose", "cannot drop non-frozen column loose of user type free"},
		{"ALTER TABLE shop.spans DROP tight", ""},
	} {
		cmd := Command{Text: tc.text}
		stmts, err := cql.Parse(cmd.Text)
		if err != nil {
			t.Fatal(err)
		}
		err = m.Precheck(cmd, stmts)
		if tc.refused == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.text, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.refused) {
			t.Errorf("%s: pre-check %v, want it refused with %q", tc.text, err, tc.refused)
		}
		if _, _, err := m.DryRun(cmd, stmts); err == nil {
			t.Errorf("%s: a dry run accepted what the pre-check refuses", tc.text)
		}
		if next, _, _, err := m.ApplyParsed(cmd, stmts, 2); err != nil || next.Epoch != m.Epoch+1 {
			t.Errorf("%s: the log's apply refused it (%v): entries logged before the rule would not replay", tc.text, err)
		}
	}
}
