package schema_test

import (
	"slices"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// TestStatementKinds: the kind of every statement that changes the schema
// is listed, and every kind listed is some statement's.
func TestStatementKinds(t *testing.T) {
	kinds := schema.StatementKinds()
	seen := map[string]bool{}
	for _, text := range []string{
		"CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"ALTER KEYSPACE k WITH durable_writes = false", "DROP KEYSPACE k",
		"CREATE TABLE k.t (a int PRIMARY KEY)", "CREATE TABLE k.t LIKE k.u", "ALTER TABLE k.t ADD b int", "DROP TABLE k.t",
		"CREATE TYPE k.ty (a int)", "ALTER TYPE k.ty ADD b int", "DROP TYPE k.ty",
		"CREATE INDEX ON k.t (a)", "DROP INDEX k.i",
		"CREATE MATERIALIZED VIEW k.v AS SELECT * FROM k.t WHERE a IS NOT NULL PRIMARY KEY (a)",
		"ALTER MATERIALIZED VIEW k.v WITH comment = 'x'", "DROP MATERIALIZED VIEW k.v",
		"CREATE FUNCTION k.f (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", "DROP FUNCTION k.f",
		"CREATE AGGREGATE k.ag (int) SFUNC f STYPE int", "DROP AGGREGATE k.ag",
		"CREATE TRIGGER tr ON k.t USING 'x.Y'", "DROP TRIGGER tr ON k.t",
	} {
		parsed, err := cql.Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		kind := parsed[0].Statement.Kind()
		if !slices.Contains(kinds, kind) {
			t.Errorf("%s: kind %q is not listed", text, kind)
		}
		seen[kind] = true
	}
	for _, k := range kinds {
		if !seen[k] {
			t.Errorf("kind %q is listed but no statement here has it", k)
		}
	}
}
