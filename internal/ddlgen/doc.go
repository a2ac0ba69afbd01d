// Package ddlgen draws random CQL DDL statement texts for property tests.
//
// The names come from small pools (Keyspaces, Tables, ...), so that a
// sequence of statements run against one schema often applies and sometimes
// fails or does nothing: drops of what exists, creates of what is already
// there, conflicts. Statement draws the kinds Kinds lists, AnyStatement
// those of AllKinds. The package imports nothing of metalog's and checks
// nothing: the caller parses the text (schema/cql) or sends it to a server,
// and ignores the statements that fail. Given rapid's draws, the text is
// deterministic.
//
//	rapid.Check(t, func(t *rapid.T) {
//		var s schema.Schema
//		for i := range rapid.IntRange(1, 50).Draw(t, "n") {
//			parsed, err := cql.Parse(ddlgen.Statement(t, "stmt"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			if ns, _, _, err := schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: uint64(i + 1)}); err == nil {
//				s = ns
//			}
//		}
//		// check a property of s
//	})
package ddlgen
