// Package cql parses CQL DDL text into schema transformations. It has a
// hand-written lexer and recursive-descent parser; it checks syntax only and
// leaves semantics (names, types, keys) to schema.Apply.
//
// It owns the text: tokens, the grammar of the supported statements, and
// *SyntaxError with the line and column of the offending token. It does
// not own what a statement means (whether names are valid, objects exist,
// types and keys are allowed, property values are right: package schema
// decides that when the statement is applied), nor where the text comes
// from or whether it may run (the API and the guardrails).
//
// Supported: CREATE/ALTER/DROP KEYSPACE, CREATE/ALTER/DROP TABLE,
// CREATE/ALTER/DROP TYPE, CREATE [CUSTOM] INDEX, DROP INDEX, CREATE/DROP
// TRIGGER, CREATE/ALTER/DROP MATERIALIZED VIEW (the WHERE clause's
// relations written back in canonical text) and USE, with
// native, collection (list, set, map, frozen, tuple, vector) and
// user-defined types. Keywords are case-insensitive, unquoted identifiers
// are lowercased, and "Quoted" identifiers keep their case. Comments (--,
// //, /* */), string constants (quoted with doubled quotes inside, or
// $$raw$$), numbers, booleans, UUIDs, blobs and collection literals are
// recognised. Unknown table properties are rejected at their name; their
// values are validated by schema.Apply.
//
// Hostile input fails fast with a positioned error: invalid UTF-8, types
// nested deeper than schema.MaxTypeDepth, literals nested deeper than 16;
// lexing and parsing are linear in the input size.
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
