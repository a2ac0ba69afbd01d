package schema_test

import (
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// exec applies the CQL statements of text to s and returns the schema and
// the diff of the last one, failing on any error.
func exec(t testing.TB, s schema.Schema, text string) (schema.Schema, schema.Diff) {
	t.Helper()
	parsed, err := cql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var diff schema.Diff
	for i, p := range parsed {
		if s, diff, _, err = schema.Apply(s, p.Statement, schema.Env{Epoch: uint64(i + 1)}); err != nil {
			t.Fatalf("%s: %v", p.Text, err)
		}
	}
	return s, diff
}
