package member

import (
	"testing"

	"github.com/metalog/metalog/schema"
)

// TestCommandRules: a request is logged under the rules its statements
// need, so that one without an ALTER TABLE ... DROP is logged as before
// the rules versions, and an older member of a rolling upgrade applies it.
func TestCommandRules(t *testing.T) {
	m := startMember(t, nil)
	for _, tc := range []struct {
		cql  string
		want uint64
	}{
		{"CREATE TABLE ks.t (id int PRIMARY KEY)", schema.RulesOriginal},
		{"ALTER TABLE ks.t ADD v int; DROP TABLE ks.u", schema.RulesOriginal},
		{"ALTER TABLE ks.t RENAME id TO k", schema.RulesOriginal},
		{"ALTER TABLE ks.t DROP v", schema.RulesDroppedKind},
		{"CREATE TABLE ks.u (id int PRIMARY KEY); ALTER TABLE ks.t DROP (v, w)", schema.RulesDroppedKind},
	} {
		cmd, _, err := m.command(Request{Statements: tc.cql})
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Rules != tc.want {
			t.Errorf("%s: rules %d, want %d", tc.cql, cmd.Rules, tc.want)
		}
	}
}
