// Package cql parses CQL DDL text into schema statements.
//
// It owns the text: the lexer, the grammar of the supported statements
// (docs/cql.md compares it with Cassandra's) and *SyntaxError, which names
// the line, column and token at fault and what was expected. It checks
// syntax only: whether names are valid, objects exist and types, keys and
// property values are allowed is decided by schema.Apply; CQL's keywords,
// quoting and literal terms are internal/cqltext's.
//
// Hostile input fails fast with a positioned error (invalid UTF-8, types
// nested deeper than schema.MaxTypeDepth, literals nested too deep), and
// lexing and parsing are linear in the size of the input.
//
//	stmts, err := cql.Parse("CREATE TABLE shop.orders (id int PRIMARY KEY, v text);")
//	var se *cql.SyntaxError
//	if errors.As(err, &se) {
//		// se.Line, se.Column, se.Token, se.Expected
//	}
//	for i, p := range stmts {
//		s, diff, res, err = schema.Apply(s, p.Statement, schema.Env{Epoch: epoch, Seq: uint32(i)})
//	}
package cql
