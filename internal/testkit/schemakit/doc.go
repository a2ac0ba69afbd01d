// Package schemakit parses CQL with schema/cql and applies it to a
// schema.Schema for tests, failing the test on any error the test did
// not ask to see.
//
// It is a package of its own because it imports schema and schema/cql:
// their in-package tests cannot import it (schema's external tests can).
//
//	s, _ := schemakit.Exec(t, schema.Schema{}, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
//	_, _, _, err := schemakit.ApplyOne(t, s, "DROP TABLE ks.t", schema.Env{Epoch: 9})
package schemakit
