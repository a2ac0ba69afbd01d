// Package schema holds metalog's schema model: keyspaces and tables as
// immutable, structurally shared values, the CQL types, the DDL
// transformations and their deterministic application, the canonical binary
// encoding used by the store and snapshots, and DESCRIBE output.
//
// The package is pure: no I/O, no clocks, no randomness. Apply costs
// O(log n) in the size of the schema and returns a Diff naming only what
// changed, so nothing on the apply path walks all tables.
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
