// Package schema holds metalog's schema model: keyspaces, tables (with
// their triggers, and materialized views, which are tables with a View),
// user types and indexes as immutable, structurally shared values, the CQL
// types, the DDL transformations (CREATE/ALTER/DROP KEYSPACE, TABLE, TYPE
// and MATERIALIZED VIEW, CREATE/DROP INDEX and TRIGGER, USE) and their
// deterministic application with Cassandra's validation rules, the
// canonical binary encoding used by the store and snapshots, and an
// incremental digest and encoded size of the whole schema.
//
// It owns the values (Schema, Keyspace, Table, UserType, Index and the
// Type implementations, in benbjohnson/immutable maps), the statements
// and Apply, which returns the new Schema and a Diff of what changed, the
// per-object encoding (AppendTable, DecodeTable and the others) and the
// digest. It does not own I/O, Raft or configuration: parsing CQL text is
// package schema/cql's, the DESCRIBE text package schema/describe's,
// CQL's keywords, quoting and terms package internal/cqltext's, the cut
// of user input in messages package internal/clip's, storing the encoded
// objects and applying the log is package metadata's, and the limits on
// schema size are package guardrails'. It imports nothing of
// metalog's but those two leaf packages.
//
// The package is pure: no I/O, no clocks, no randomness. Apply costs
// O(log n) in the size of the schema plus the size of the changed objects
// and returns a Diff naming only what changed, so nothing on the apply path
// walks all tables: DROP TYPE finds the type's users, DROP TABLE its indexes
// and views, ALTER TABLE its views, and the digest its old value through
// per-keyspace indexes, and DROP
// KEYSPACE subtracts the keyspace's digest as a whole.
//
// Usage:
//
//	var s schema.Schema // the empty schema
//	s, _, _, err := schema.Apply(s, &schema.CreateKeyspace{
//		Name:          "shop",
//		Replication:   schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}},
//		DurableWrites: true,
//	}, schema.Env{Epoch: 1})
//	if err != nil { ... }
//	s, diff, res, err := schema.Apply(s, &schema.CreateTable{
//		Keyspace: "shop", Name: "orders",
//		Columns: []schema.ColumnDef{
//			{Name: "id", Type: schema.TypeInt, PrimaryKey: true},
//			{Name: "v", Type: schema.TypeText},
//		},
//	}, schema.Env{Epoch: 2})
//	// diff.Changes[0] is an OpPutTable of shop.orders; res.Applied is true.
//	b := schema.AppendTable(nil, diff.Changes[0].TableValue) // store b
//	fmt.Print(describe.Schema(s))
//
// A change history keeps, per change, the changed object's value before it
// (Prior) and can take changes back newest-first (Undo) to rebuild the
// schema of an earlier epoch in O(changes); a dropped keyspace's prior is
// stored whole with AppendKeyspaceObjects and comes back through its
// digest, without a walk:
//
//	prior := schema.Prior(s, diff.Changes[0]) // before applying
//	old, err := schema.Undo(next, diff.Changes[0], prior)
//
// Errors are *Error values naming the statement, the object and the reason;
// test them with errors.Is against ErrAlreadyExists, ErrNotFound and
// ErrInvalid.
package schema
