package cql

import (
	"errors"
	"testing"
)

// TestNotSchemaStatementsAreRefusedByName: data statements, access
// control and cqlsh commands are refused at their first word with why,
// so that nothing of a file holding one applies; words that only start
// such statements elsewhere (an ADD in ALTER TABLE, a column named
// "select") are not caught.
func TestNotSchemaStatementsAreRefusedByName(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"INSERT INTO ks.t (id) VALUES (1)", "line 1:1: INSERT " + whyData},
		{"update ks.t SET v = 1 WHERE id = 1", "line 1:1: UPDATE " + whyData},
		{"DELETE FROM ks.t WHERE id = 1", "line 1:1: DELETE " + whyData},
		{"SELECT * FROM system.local", "line 1:1: SELECT " + whyData},
		{"TRUNCATE ks.t", "line 1:1: TRUNCATE " + whyData},
		{"BEGIN UNLOGGED BATCH INSERT INTO ks.t (id) VALUES (1); APPLY BATCH", "line 1:1: BEGIN BATCH " + whyData},
		{"GRANT SELECT ON KEYSPACE ks TO app", "line 1:1: GRANT " + whyAuth},
		{"REVOKE ALL ON ALL KEYSPACES FROM app", "line 1:1: REVOKE " + whyAuth},
		{"LIST ROLES", "line 1:1: LIST " + whyAuth},
		{"CREATE ROLE app WITH PASSWORD = 'x' AND LOGIN = true", "line 1:1: CREATE ROLE " + whyAuth},
		{"ALTER USER bob WITH PASSWORD 'x'", "line 1:1: ALTER USER " + whyAuth},
		{"DROP ROLE IF EXISTS app", "line 1:1: DROP ROLE " + whyAuth},
		{"ADD IDENTITY 'spiffe://x' TO ROLE app", "line 1:1: ADD " + whyAuth},
		{"SOURCE 'schema.cql'", "line 1:1: SOURCE " + whyCqlsh + "; give the file to metalog exec -f"},
		{"DESCRIBE KEYSPACE ks", "line 1:1: DESCRIBE " + whyCqlsh + "; print the schema with metalog describe"},
		{"desc tables", "line 1:1: DESC " + whyCqlsh + "; print the schema with metalog describe"},
		{"CONSISTENCY QUORUM", "line 1:1: CONSISTENCY " + whyCqlsh},
		{"COPY ks.t (id) FROM 'rows.csv' WITH HEADER = true", "line 1:1: COPY " + whyCqlsh},
		{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nINSERT INTO ks.t (id) VALUES (1)", "line 2:1: INSERT " + whyData},
	} {
		_, err := Parse(tc.text)
		var syn *SyntaxError
		if !errors.As(err, &syn) || err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
	for _, ok := range []string{
		`CREATE TABLE ks.t (id int PRIMARY KEY, "select" text, list int)`,
		"ALTER TABLE ks.t ADD v text",
		"CREATE TABLE ks.users (id int PRIMARY KEY, role text)",
	} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}
