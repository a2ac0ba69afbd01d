// Package schema holds metalog's schema model: keyspaces, tables, user
// types and indexes as immutable, structurally shared values, the CQL
// types, the DDL transformations (CREATE/ALTER/DROP KEYSPACE, TABLE and
// TYPE, CREATE/DROP INDEX, USE) and their deterministic application with
// Cassandra's validation rules, the canonical binary encoding used by the
// store and snapshots, an incremental digest and encoded size of the whole
// schema, and DESCRIBE output.
//
// The package is pure: no I/O, no clocks, no randomness. Apply costs
// O(log n) in the size of the schema plus the size of the changed objects
// and returns a Diff naming only what changed, so nothing on the apply path
// walks all tables: DROP TYPE finds the type's users, DROP TABLE its indexes
// and the digest its old value through per-keyspace indexes, and DROP
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
//	fmt.Print(schema.DescribeSchema(s))
//
// Errors are *Error values naming the statement, the object and the reason;
// test them with errors.Is against ErrAlreadyExists, ErrNotFound and
// ErrInvalid.
package schema
