package schemakit

import (
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// EnvFunc is the environment of the i-th statement (from 0) of a text.
type EnvFunc func(i int) schema.Env

// EpochEach applies statement i at epoch first+i: one change each.
func EpochEach(first uint64) EnvFunc {
	return func(i int) schema.Env { return schema.Env{Epoch: first + uint64(i)} }
}

// OneEpoch applies every statement at epoch, statement i as Seq i: one
// change of many statements.
func OneEpoch(epoch uint64) EnvFunc {
	return func(i int) schema.Env { return schema.Env{Epoch: epoch, Seq: uint32(i)} }
}

// Parse parses text, failing t if it does not parse.
func Parse(t testing.TB, text string) []cql.Parsed {
	t.Helper()
	parsed, err := cql.Parse(text)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return parsed
}

// Apply parses text and applies its statements to s in order, statement
// i with env(i), failing t on any error; it returns the schema reached
// and the diff of the last statement.
func Apply(t testing.TB, s schema.Schema, text string, env EnvFunc) (schema.Schema, schema.Diff) {
	t.Helper()
	var diff schema.Diff
	for i, p := range Parse(t, text) {
		var err error
		if s, diff, _, err = schema.Apply(s, p.Statement, env(i)); err != nil {
			t.Fatalf("%s: %v", p.Text, err)
		}
	}
	return s, diff
}

// Exec is Apply with each statement at its own epoch, from 1.
func Exec(t testing.TB, s schema.Schema, text string) (schema.Schema, schema.Diff) {
	t.Helper()
	return Apply(t, s, text, EpochEach(1))
}

// Build is Exec on the empty schema, returning the schema reached.
func Build(t testing.TB, text string) schema.Schema {
	t.Helper()
	s, _ := Exec(t, schema.Schema{}, text)
	return s
}

// DescribeRoundTrip parses DESCRIBE of s and applies it to the empty
// schema, statement i at epoch 1000+i (ids come from WITH ID), failing t
// on any error. DESCRIBE lists a table's columns in Cassandra's order, not
// in the order s stores them, so the schema returned equals s up to that
// order (and dropped-column records, which DESCRIBE leaves out), and its
// digest is that of s only when s stores them in that order already; a
// second round trip returns a schema equal to the first, digest included.
func DescribeRoundTrip(t testing.TB, s schema.Schema) schema.Schema {
	t.Helper()
	out, _ := Apply(t, schema.Schema{}, describe.Schema(s), EpochEach(1000))
	return out
}

// ApplyOne parses text, which must hold one statement, failing t
// otherwise, and applies it to s with env, returning the outcome.
func ApplyOne(t testing.TB, s schema.Schema, text string, env schema.Env) (schema.Schema, schema.Diff, schema.Result, error) {
	t.Helper()
	parsed := Parse(t, text)
	if len(parsed) != 1 {
		t.Fatalf("%q: %d statements, want one", text, len(parsed))
	}
	return schema.Apply(s, parsed[0].Statement, env)
}

// ApplyLast parses text and applies its statements to s in order, each
// but the last with env(i), failing t on their errors and on a text that
// does not parse; the last is applied with last, and its outcome
// returned.
func ApplyLast(t testing.TB, s schema.Schema, text string, env EnvFunc, last schema.Env) (schema.Schema, schema.Diff, schema.Result, error) {
	t.Helper()
	parsed := Parse(t, text)
	if len(parsed) == 0 {
		t.Fatalf("%q: no statement", text)
	}
	for i, p := range parsed[:len(parsed)-1] {
		var err error
		if s, _, _, err = schema.Apply(s, p.Statement, env(i)); err != nil {
			t.Fatalf("%s: %v", p.Text, err)
		}
	}
	return schema.Apply(s, parsed[len(parsed)-1].Statement, last)
}
