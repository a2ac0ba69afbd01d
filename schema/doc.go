// Package schema is metalog's schema model: keyspaces and what they hold as
// immutable, structurally shared values, and the DDL statements applied to
// them with Cassandra's rules.
//
// It owns the values (Schema, Keyspace, Table, UserType, Index, Function
// and the CQL types), the statements and Apply, which returns the next
// Schema and a Diff of what changed, the per-object binary encoding
// (AppendTable, DecodeTable, ...), the incremental digest, Prior and Undo
// (taking changes back to rebuild an earlier epoch's schema), and Builder,
// which assembles a Schema from stored objects. Parsing CQL text is
// schema/cql's, DESCRIBE schema/describe's, CQL's keywords, quoting and
// terms internal/cqltext's; storing objects and applying the log is
// metadata's, and limits on a schema's size are guardrails'.
//
// The package is pure: no I/O, clocks or randomness, so every member
// computes the same schema from the same statements. Apply costs O(log n)
// in the number of objects plus the size of the changed ones, and nothing
// on its path walks every table. Values handed to it or returned by it
// must not be modified. Errors are *Error values naming the statement,
// the object and the reason; test them with errors.Is against
// ErrAlreadyExists, ErrNotFound and ErrInvalid.
//
//	stmts, err := cql.Parse("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
//	if err != nil {
//		return err
//	}
//	var s schema.Schema // the empty schema
//	s, diff, res, err := schema.Apply(s, stmts[0].Statement, schema.Env{Epoch: 1})
//	// res.Applied is true; diff.Changes names the keyspace put.
package schema
