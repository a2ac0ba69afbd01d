package cqlserver

import (
	"strings"

	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// describeStmt is a parsed DESCRIBE: its form ("keyspaces", "keyspace",
// "table", ...) and the object it names, if any.
type describeStmt struct {
	form, keyspace, name string
}

// describeColumns are the columns of a DESCRIBE result, as Cassandra 4.0
// answers a server-side DESCRIBE.
var describeColumns = []column{
	{"keyspace_name", wire.Native(wire.TypeVarchar)},
	{"type", wire.Native(wire.TypeVarchar)},
	{"name", wire.Native(wire.TypeVarchar)},
	{"create_statement", wire.Native(wire.TypeVarchar)},
}

// describeQuery answers DESCRIBE (or DESC) with every row in one page,
// the statements as package describe prints them; ks is the connection's
// keyspace, which unqualified names are in.
func (c *conn) describeQuery(f wire.Frame, text string, params *wire.QueryParams, ks string) *pending {
	st, err := parseDescribe(text)
	if err != nil {
		return c.errorf(f, wire.CodeInvalid, "%v", err)
	}
	md, err := c.srv.cfg.Reader.Read(c.srv.ctx, 0, "", c.session.visible())
	if err != nil {
		return c.reply(f, errorResponse(err, params.Consistency), nil)
	}
	if st.keyspace == "" && st.form != "keyspace" || st.form == "keyspace" && st.name == "" {
		st.keyspace = ks
	}
	rows, err := describeRows(md.Schema, st)
	if err != nil {
		return c.reply(f, errorResponse(err, params.Consistency), nil)
	}
	t := &table{cols: describeColumns, rows: rows}
	out, err := t.encode(nil)
	if err != nil {
		return c.errorf(f, wire.CodeServer, "%v", err)
	}
	return c.reply(f, out, nil)
}

// describeForms are the words after DESCRIBE that take no name.
var describeForms = map[string]bool{"keyspaces": true, "tables": true, "types": true,
	"functions": true, "aggregates": true, "schema": true}

// describeNamed are the words after DESCRIBE that take a name.
var describeNamed = map[string]bool{"keyspace": true, "table": true, "columnfamily": true,
	"type": true, "index": true, "materialized": true}

// parseDescribe parses DESCRIBE text; a form it does not serve is a
// *queryError.
func parseDescribe(text string) (*describeStmt, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, invalidf("DESCRIBE: %v", err)
	}
	if n := len(toks); n > 0 && toks[n-1].kind == tokPunct && toks[n-1].text == ";" {
		toks = toks[:n-1]
	}
	if len(toks) < 2 || toks[1].kind != tokIdent {
		return nil, notServed(text)
	}
	st := &describeStmt{form: toks[1].text}
	rest := toks[2:]
	switch {
	case describeForms[st.form] && len(rest) == 0:
		return st, nil
	case !describeNamed[st.form]:
		return nil, notServed(text)
	case st.form == "columnfamily":
		st.form = "table"
	case st.form == "materialized":
		if len(rest) == 0 || rest[0].kind != tokIdent || rest[0].text != "view" {
			return nil, notServed(text)
		}
		st.form, rest = "view", rest[1:]
	}
	switch {
	case st.form == "keyspace" && len(rest) == 0:
	case st.form == "keyspace" && len(rest) == 1 && isName(rest[0]):
		st.keyspace, st.name = rest[0].text, rest[0].text
	case len(rest) == 1 && isName(rest[0]):
		st.name = rest[0].text
	case st.form != "keyspace" && len(rest) == 3 && isName(rest[0]) && rest[1].text == "." && isName(rest[2]):
		st.keyspace, st.name = rest[0].text, rest[2].text
	default:
		return nil, invalidf("DESCRIBE %s takes one name: %q", strings.ToUpper(st.form), clipText(text))
	}
	return st, nil
}

// isName says whether t can be a keyspace or object name.
func isName(t token) bool { return t.kind == tokIdent || t.kind == tokQuoted }

// notServed is the refusal of a DESCRIBE form the server does not know.
func notServed(text string) error {
	return invalidf("DESCRIBE form not served: metalog serves DESCRIBE KEYSPACES, KEYSPACE, TABLES, TABLE, TYPES, TYPE, FUNCTIONS, AGGREGATES, INDEX, MATERIALIZED VIEW and SCHEMA: %q", clipText(text))
}

// describeRows computes the rows of st over s: keyspace_name, type,
// name and create_statement.
func describeRows(s schema.Schema, st *describeStmt) ([][]any, error) {
	var rows [][]any
	switch st.form {
	case "keyspaces":
		for _, k := range s.Keyspaces() {
			rows = append(rows, []any{k.Name, "keyspace", k.Name, k.Name})
		}
		return rows, nil
	case "schema":
		for _, k := range s.Keyspaces() {
			rows = keyspaceRows(rows, k)
		}
		return rows, nil
	}
	if st.keyspace == "" {
		return nil, invalidf("No keyspace specified and no current keyspace")
	}
	k, ok := s.Keyspace(st.keyspace)
	if !ok {
		return nil, invalidf("Keyspace '%s' not found", st.keyspace)
	}
	switch st.form {
	case "keyspace":
		return keyspaceRows(nil, k), nil
	case "tables", "types", "functions", "aggregates":
		return listRows(k, st.form), nil
	}
	return objectRows(k, st)
}

// listRows are the rows of DESCRIBE TABLES, TYPES, FUNCTIONS or
// AGGREGATES in keyspace k: one per object, its statement in full.
func listRows(k *schema.Keyspace, form string) [][]any {
	var rows [][]any
	switch form {
	case "tables":
		for _, t := range k.Tables() {
			if t.View == nil {
				rows = append(rows, []any{k.Name, "table", t.Name, describe.Table(t)})
			}
		}
	case "types":
		for _, ut := range schema.TypesInDependencyOrder(k) {
			rows = append(rows, []any{k.Name, "type", ut.Name, describe.UserType(ut)})
		}
	default:
		kind := schema.ScalarFunction
		if form == "aggregates" {
			kind = schema.AggregateFunction
		}
		rows = functionRows(nil, k, kind)
	}
	return rows
}

// functionRows appends a row per function of k of the given kind.
func functionRows(rows [][]any, k *schema.Keyspace, kind schema.FunctionKind) [][]any {
	if k.FunctionCount() == 0 {
		return rows
	}
	for _, f := range k.Functions() {
		if f.Kind == kind {
			rows = append(rows, []any{k.Name, strings.ToLower(kind.String()), f.Signature(), describe.Function(f)})
		}
	}
	return rows
}

// keyspaceRows appends the rows of DESCRIBE KEYSPACE k: the keyspace,
// its types, functions, aggregates, then each table with its elements,
// and the views whose base is missing, in the order of describe.Keyspace.
func keyspaceRows(rows [][]any, k *schema.Keyspace) [][]any {
	rows = append(rows, []any{k.Name, "keyspace", k.Name, describe.KeyspaceOnly(k)})
	for _, ut := range schema.TypesInDependencyOrder(k) {
		rows = append(rows, []any{k.Name, "type", ut.Name, describe.UserType(ut)})
	}
	rows = functionRows(rows, k, schema.ScalarFunction)
	rows = functionRows(rows, k, schema.AggregateFunction)
	for _, t := range k.Tables() {
		if t.View == nil {
			rows = tableRows(rows, k, t)
		}
	}
	if k.ViewCount() > 0 {
		for _, v := range k.AllViews() {
			if base, ok := k.Table(v.View.Base); !ok || base.View != nil {
				rows = append(rows, []any{k.Name, "materialized_view", v.Name, describe.View(v)})
			}
		}
	}
	return rows
}

// tableRows appends the rows of DESCRIBE TABLE t: the table, its
// indexes, its triggers and its views, as describe.TableElements.
func tableRows(rows [][]any, k *schema.Keyspace, t *schema.Table) [][]any {
	if t.View != nil {
		return append(rows, []any{k.Name, "materialized_view", t.Name, describe.View(t)})
	}
	rows = append(rows, []any{k.Name, "table", t.Name, describe.Table(t)})
	for _, ix := range k.TableIndexes(t.Name) {
		rows = append(rows, []any{k.Name, "index", ix.Name, describe.Index(ix)})
	}
	for _, tr := range t.Triggers {
		rows = append(rows, []any{k.Name, "trigger", tr.Name, describe.Trigger(t, tr)})
	}
	for _, v := range k.Views(t.Name) {
		rows = append(rows, []any{k.Name, "materialized_view", v.Name, describe.View(v)})
	}
	return rows
}

// objectRows are the rows of DESCRIBE TABLE, TYPE, INDEX or
// MATERIALIZED VIEW of one object of k.
func objectRows(k *schema.Keyspace, st *describeStmt) ([][]any, error) {
	switch st.form {
	case "table", "view":
		t, ok := k.Table(st.name)
		if !ok || st.form == "view" && t.View == nil {
			break
		}
		return tableRows(nil, k, t), nil
	case "type":
		if ut, ok := k.UserType(st.name); ok {
			return [][]any{{k.Name, "type", ut.Name, describe.UserType(ut)}}, nil
		}
	case "index":
		if ix, ok := k.Index(st.name); ok {
			return [][]any{{k.Name, "index", ix.Name, describe.Index(ix)}}, nil
		}
	}
	what := map[string]string{"table": "Table", "view": "Materialized view", "type": "User type", "index": "Index"}[st.form]
	return nil, invalidf("%s '%s.%s' not found", what, k.Name, st.name)
}
