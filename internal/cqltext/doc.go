// Package cqltext is CQL's lexical layer shared by the parser
// (schema/cql) and the schema model (schema): the keywords, how a name or
// a string is quoted, and terms (constants, collections, tuples, user
// type literals and the expressions of a view's WHERE clause) with their
// canonical text.
//
// It holds one keyword table, reserved and unreserved words together
// (IsReserved, IsUnreserved, Keywords); the quoting the model and every
// message use (QuoteIdentifier, QuoteString, QuoteQualified,
// QuoteSignature); the DURATION and UUID constant forms (DurationLen,
// CanonicalUUID); and Term, the one value of a parsed term, which the
// parser builds from tokens and Read and ReadCanonical build from text,
// and which Write writes back in canonical form.
//
//	cqltext.QuoteIdentifier("Orders") // "\"Orders\""
//	t, reason := cqltext.Read("{'a': 1}", isName)
//	fmt.Println(t) // {'a': 1}
//
// It does not own types or their checks: what a term means for a column
// or a function is package schema's, and reading statements is package
// schema/cql's. It imports neither.
package cqltext
