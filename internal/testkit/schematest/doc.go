// Package schematest has rapid (pgregory.net/rapid) generators of valid
// schema statements, shared by the property tests of schema, schema/cql
// and schema/plan: names that exercise quoting, column types, table
// options, CREATE KEYSPACE, TABLE, TYPE and INDEX statements that
// schema.Apply accepts, and whole schemas built from such statements over
// small pools of names (Schema), so that two drawn schemas share objects.
//
// It owns only test input. It does not check anything itself (the tests
// that draw from it state the properties). It imports schema and rapid
// only, so that the in-package tests of schema/cql and schema/plan can
// use it too; snapshot's tests draw their schemas from it.
//
// Usage, in a property test:
//
//	rapid.Check(t, func(t *rapid.T) {
//		ks := schematest.CreateKeyspace(t)
//		s, _, _, err := schema.Apply(schema.Schema{}, ks, schema.Env{Epoch: 1})
//		if err != nil {
//			t.Fatal(err)
//		}
//		st := schematest.CreateTable(t, ks.Name)
//		// apply st, then check a property of the result
//	})
package schematest
