package schema

// statementKinds are the Kind of every statement that can change the
// schema (USE changes nothing), in the order of the CQL reference: what a
// history read may filter on.
var statementKinds = []string{
	"CREATE KEYSPACE", "ALTER KEYSPACE", "DROP KEYSPACE",
	"CREATE TABLE", "ALTER TABLE", "DROP TABLE",
	"CREATE TYPE", "ALTER TYPE", "DROP TYPE",
	"CREATE INDEX", "DROP INDEX",
	"CREATE MATERIALIZED VIEW", "ALTER MATERIALIZED VIEW", "DROP MATERIALIZED VIEW",
	"CREATE FUNCTION", "DROP FUNCTION",
	"CREATE AGGREGATE", "DROP AGGREGATE",
	"CREATE TRIGGER", "DROP TRIGGER",
}

// StatementKinds returns the Kind of every statement that can change the
// schema, in a new slice: "CREATE TABLE", "DROP INDEX" and so on.
func StatementKinds() []string { return append([]string(nil), statementKinds...) }
