// Package describe writes the CQL text that recreates a schema: what
// cqlsh's DESCRIBE prints, for the whole schema, a keyspace, a table with
// its indexes, triggers and views, or one object.
//
// It renders from the exported read API of package schema only. A
// table's columns come in Cassandra's DESCRIBE order (the key columns in
// key order, then the static and the regular ones, simple before
// complex, by name; see createOrder), not in the order the model stores
// them, so a table grown by ALTER TABLE ... ADD describes as the same
// table written in one CREATE TABLE. The text parses back (package
// schema/cql) to an equal schema, up to that order and except for
// dropped-column records, which are in the encoding and the digest but
// not in DESCRIBE output; describing that schema gives the same text.
// Options leave a table's id out, for a table whose id the cluster is to
// assign.
//
//	fmt.Print(describe.Schema(s))
//	fmt.Print(describe.TableElements(k, t)) // the table, its indexes, triggers and views
//	fmt.Print(describe.Options{OmitID: true}.Table(t))
//
// It does not own the model, its validation or the lexical rules of CQL
// (quoting is package cqltext's). Every function walks only what it
// prints.
package describe
