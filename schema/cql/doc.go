// Package cql parses CQL DDL text into schema transformations. It has a
// hand-written lexer and recursive-descent parser; it checks syntax only and
// leaves semantics (names, types, keys) to schema.Apply.
//
// Supported now: CREATE KEYSPACE, DROP KEYSPACE, CREATE TABLE, DROP TABLE,
// with native and collection types (list, set, map, frozen, tuple, vector).
// Keywords are case-insensitive, unquoted identifiers are lowercased, and
// "Quoted" identifiers keep their case. Comments (--, //, /* */), string
// constants (quoted with doubled quotes inside, or $$raw$$), numbers,
// booleans, UUIDs, blobs and map literals are recognised.
//
// Usage:
//
//	stmts, err := cql.Parse("CREATE TABLE shop.orders (id int PRIMARY KEY, v text);")
//	if err != nil {
//		var se *cql.SyntaxError
//		errors.As(err, &se) // se.Line, se.Column, se.Token, se.Expected
//	}
//	for i, p := range stmts {
//		s, diff, res, err = schema.Apply(s, p.Statement, schema.Env{Epoch: epoch, Seq: uint32(i)})
//	}
package cql
