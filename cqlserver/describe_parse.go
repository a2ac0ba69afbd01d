package cqlserver

import (
	"fmt"
	"strings"
)

// The forms of DESCRIBE, as Cassandra's grammar (Parser.g
// describeStatement) names them.
const (
	descCluster    = "cluster"
	descSchema     = "schema"
	descKeyspaces  = "keyspaces"
	descKeyspace   = "keyspace"
	descTables     = "tables"
	descTable      = "table"
	descIndex      = "index"
	descView       = "materialized view"
	descTypes      = "types"
	descType       = "type"
	descFunctions  = "functions"
	descFunction   = "function"
	descAggregates = "aggregates"
	descAggregate  = "aggregate"
	descGeneric    = "" // DESCRIBE name: a keyspace, table, index or view
)

// describeStmt is a parsed DESCRIBE: its form, the object it names, if
// any (keyspace empty when the name is not qualified), and its flags.
type describeStmt struct {
	form           string
	keyspace, name string
	full           bool // DESCRIBE FULL SCHEMA
	only           bool // DESCRIBE ONLY KEYSPACE
	internals      bool // WITH INTERNALS
}

// describeWords maps the word after DESCRIBE to its form; the forms
// whose word is followed by a name are in describeNamed.
var describeWords = map[string]string{
	"cluster": descCluster, "schema": descSchema, "keyspaces": descKeyspaces, "keyspace": descKeyspace,
	"tables": descTables, "table": descTable, "columnfamily": descTable, "index": descIndex,
	"types": descTypes, "type": descType, "functions": descFunctions, "function": descFunction,
	"aggregates": descAggregates, "aggregate": descAggregate,
}

// describeNamed are the forms that take a name ([keyspace.]name).
var describeNamed = map[string]bool{descTable: true, descIndex: true, descView: true, descType: true,
	descFunction: true, descAggregate: true, descGeneric: true}

// describeSyntaxError is DESCRIBE text that Cassandra's grammar does not
// take, answered as SYNTAX_ERROR.
type describeSyntaxError struct{ msg string }

func (e *describeSyntaxError) Error() string { return e.msg }

// parseDescribe parses DESCRIBE (or DESC) text as Parser.g's
// describeStatement does: a form word (unquoted, any case), or a name
// alone, which is the generic DESCRIBE; then WITH INTERNALS, then an
// optional ";". Text it does not take is a *describeSyntaxError.
func parseDescribe(text string) (*describeStmt, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, &describeSyntaxError{fmt.Sprintf("%v in %q", err, clipText(text))}
	}
	if n := len(toks); n > 0 && toks[n-1].kind == tokPunct && toks[n-1].text == ";" {
		toks = toks[:n-1]
	}
	st := &describeStmt{}
	if n := len(toks); n >= 2 && isWord(toks[n-2], "with") && isWord(toks[n-1], "internals") {
		st.internals, toks = true, toks[:n-2]
	}
	if len(toks) < 2 {
		return nil, describeSyntax(text, "a form or a name after DESCRIBE")
	}
	rest := toks[1:]
	switch {
	case isWord(rest[0], "full") && len(rest) > 1 && isWord(rest[1], "schema"):
		st.full, rest = true, rest[1:]
	case isWord(rest[0], "only") && len(rest) > 1 && isWord(rest[1], "keyspace"):
		st.only, rest = true, rest[1:]
	case isWord(rest[0], "materialized") && len(rest) > 1 && isWord(rest[1], "view"):
		st.form, rest = descView, rest[2:]
		return st, st.parseName(text, rest)
	}
	form, ok := describeWords[rest[0].text]
	if !ok || rest[0].kind != tokIdent {
		st.form = descGeneric
		return st, st.parseName(text, rest)
	}
	st.form, rest = form, rest[1:]
	switch {
	case describeNamed[form]:
		return st, st.parseName(text, rest)
	case form == descKeyspace && len(rest) == 1 && isName(rest[0]):
		st.keyspace = rest[0].text
	case len(rest) > 0:
		return nil, describeSyntax(text, fmt.Sprintf("the end after DESCRIBE %s, not %q", strings.ToUpper(rest[0].text), rest[0].text))
	}
	return st, nil
}

// parseName reads [keyspace.]name, the whole of toks, into st.
func (st *describeStmt) parseName(text string, toks []token) error {
	switch {
	case len(toks) == 1 && isName(toks[0]):
		st.name = toks[0].text
	case len(toks) == 3 && isName(toks[0]) && toks[1].text == "." && isName(toks[2]):
		st.keyspace, st.name = toks[0].text, toks[2].text
	default:
		return describeSyntax(text, "one name, [keyspace.]name")
	}
	return nil
}

// describeSyntax is the error of text where want was expected.
func describeSyntax(text, want string) error {
	return &describeSyntaxError{fmt.Sprintf("DESCRIBE expects %s: %q", want, clipText(text))}
}

// isWord says whether t is the unquoted word w (lowercase).
func isWord(t token, w string) bool { return t.kind == tokIdent && t.text == w }

// isName says whether t can be a keyspace or object name.
func isName(t token) bool { return t.kind == tokIdent || t.kind == tokQuoted }
