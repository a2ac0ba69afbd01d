// Package ddlgen draws random CQL DDL statement texts for property tests:
// CREATE, ALTER and DROP of keyspaces, tables, types and materialized
// views, and CREATE and DROP INDEX, with and without IF [NOT] EXISTS, over
// small fixed pools of names (keyspaces ks1 and ks2, tables t1 to t3,
// types u1 and u2, indexes i1 and i2, views mv1 and mv2, a few columns and
// fields), so that a sequence of them run
// against one schema often applies and sometimes fails or is a no-op:
// drops of what exists, creates of what is already there, conflicts and
// refused alterations all happen. AnyStatement draws from every kind
// metalog supports: those, and CREATE TABLE ... LIKE (WITH INDEXES or
// not), column masks, triggers, functions and aggregates.
//
// It owns only test input, as text: it imports nothing of metalog's, so
// any package's tests may use it, parsing the text with schema/cql or
// sending it to a server. It checks nothing; the caller ignores the
// statements that fail. Given rapid's draws, the text is deterministic.
//
// Usage, in a property test:
//
//	rapid.Check(t, func(t *rapid.T) {
//		var s schema.Schema
//		for i := range rapid.IntRange(1, 50).Draw(t, "n") {
//			parsed, err := cql.Parse(ddlgen.Statement(t, "stmt"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			ns, _, _, err := schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: uint64(i + 1)})
//			if err == nil {
//				s = ns
//			}
//		}
//		// check a property of s
//	})
package ddlgen
