package cqlserver

import (
	"cmp"
	"slices"
	"strings"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// The columns of a DESCRIBE result, as Cassandra 4.0's DescribeStatement
// answers: the forms that list names have the first three, those that
// print statements all four; all in the table system.describe.
var (
	describeListColumns = []column{
		{"keyspace_name", text}, {"type", text}, {"name", text},
	}
	describeElementColumns = append(slices.Clip(describeListColumns), column{"create_statement", text})
)

// describeQuery answers DESCRIBE (or DESC) with the rows Cassandra's
// DescribeStatement gives, one page of them when params carry a page
// size; ks is the keyspace of the connection (or of the request), which
// unqualified names are in.
func (c *conn) describeQuery(f wire.Frame, text string, params *wire.QueryParams, ks string) *pending {
	st, err := parseDescribe(text)
	if err != nil {
		return c.errorf(f, wire.CodeSyntax, "%v", err)
	}
	md, err := c.srv.cfg.Reader.Read(c.srv.ctx, 0, "", c.session.visible())
	if err != nil {
		return c.reply(f, errorResponse(err, params.Consistency), nil)
	}
	var t *table
	if st.form == descCluster {
		t = c.nodeView().describeCluster(ks)
	} else {
		t, err = describeTable(md.Schema, st, ks)
	}
	if err == nil {
		err = pageDescribe(t, text, SchemaVersion(md.Schema.Digest()), params)
	}
	if err != nil {
		return c.reply(f, errorResponse(err, params.Consistency), nil)
	}
	out, err := t.encode(nil)
	if err != nil {
		return c.errorf(f, wire.CodeServer, "%v", err)
	}
	out.Metadata.PagingState = t.next
	return c.reply(f, out, nil)
}

// describeTable computes every row of st over s in the keyspace ks of
// the connection, as the table system.describe.
func describeTable(s schema.Schema, st *describeStmt, ks string) (*table, error) {
	t := &table{keyspace: "system", name: "describe", cols: describeElementColumns}
	var err error
	switch st.form {
	case descKeyspaces:
		t.cols = describeListColumns
		for _, k := range sortedKeyspaces(s) {
			t.rows = append(t.rows, keyspaceRow(k, false))
		}
	case descTables, descTypes, descFunctions, descAggregates:
		t.cols = describeListColumns
		t.rows, err = listRows(s, st.form, ks)
	case descSchema:
		for _, k := range sortedKeyspaces(s) {
			t.rows = keyspaceRows(t.rows, k, st.internals)
		}
	case descGeneric:
		t.rows, err = genericRows(s, st, ks)
	default:
		t.rows, err = elementRows(s, st, ks)
	}
	return t, err
}

// describeKeyspace resolves the keyspace of an element form: the one
// named, or else ks; Cassandra's messages when there is none.
func describeKeyspace(s schema.Schema, named, ks string) (*schema.Keyspace, error) {
	if named != "" {
		ks = named
	}
	if ks == "" {
		return nil, invalidf("No keyspace specified and no current keyspace")
	}
	k, ok := s.Keyspace(ks)
	if !ok {
		return nil, invalidf("'%s' not found in keyspaces", ks)
	}
	return k, nil
}

// elementRows are the rows of the forms that name one element (or a
// keyspace): DESCRIBE [ONLY] KEYSPACE, TABLE, INDEX, MATERIALIZED VIEW,
// TYPE, FUNCTION and AGGREGATE.
func elementRows(s schema.Schema, st *describeStmt, ks string) ([][]any, error) {
	k, err := describeKeyspace(s, st.keyspace, ks)
	if err != nil {
		return nil, err
	}
	switch st.form {
	case descKeyspace:
		if st.only {
			return [][]any{keyspaceRow(k, true)}, nil
		}
		return keyspaceRows(nil, k, st.internals), nil
	case descTable:
		if t, ok := k.Table(st.name); ok {
			return tableRows(nil, k, t, st.internals, false), nil
		}
		return nil, invalidf("Table '%s' not found in keyspace '%s'", st.name, k.Name)
	case descIndex:
		if ix, ok := k.Index(st.name); ok {
			return [][]any{indexRow(k, ix)}, nil
		}
		return nil, invalidf("Table for existing index '%s' not found in '%s'", st.name, k.Name)
	case descView:
		if v, ok := k.Table(st.name); ok && v.View() != nil {
			return [][]any{tableRow(k, v, st.internals)}, nil
		}
		return nil, invalidf("Materialized view '%s' not found in '%s'", st.name, k.Name)
	case descType:
		if ut, ok := k.UserType(st.name); ok {
			return [][]any{typeRow(k, ut)}, nil
		}
		return nil, invalidf("User defined type '%s' not found in '%s'", st.name, k.Name)
	}
	kind, what := schema.ScalarFunction, "function"
	if st.form == descAggregate {
		kind, what = schema.AggregateFunction, "aggregate"
	}
	rows := functionRows(nil, k.FunctionsNamed(st.name), kind)
	if len(rows) == 0 {
		return nil, invalidf("User defined %s '%s' not found in '%s'", what, st.name, k.Name)
	}
	return rows, nil
}

// genericRows are the rows of DESCRIBE name, resolved as Cassandra does:
// an unqualified name that is a keyspace's describes the keyspace;
// otherwise the name is looked up in its keyspace (the one named, else
// the connection's, else a keyspace of the name itself) as a table, an
// index, then a materialized view.
func genericRows(s schema.Schema, st *describeStmt, ks string) ([][]any, error) {
	named := st.keyspace
	if named == "" {
		if k, ok := s.Keyspace(st.name); ok {
			return keyspaceRows(nil, k, st.internals), nil
		}
		if named = ks; named == "" {
			named = st.name
		}
	}
	k, err := describeKeyspace(s, named, "")
	if err != nil {
		return nil, err
	}
	t, isTable := k.Table(st.name)
	if isTable && t.View() == nil {
		return tableRows(nil, k, t, st.internals, false), nil
	}
	if ix, ok := k.Index(st.name); ok {
		return [][]any{indexRow(k, ix)}, nil
	}
	if isTable {
		return [][]any{tableRow(k, t, st.internals)}, nil
	}
	return nil, invalidf("'%s' not found in keyspace '%s'", st.name, k.Name)
}

// listRows are the rows of DESCRIBE TABLES, TYPES, FUNCTIONS or
// AGGREGATES: those of keyspace ks, or of every keyspace when there is no
// current keyspace; by keyspace, then by name, ignoring case.
func listRows(s schema.Schema, form, ks string) ([][]any, error) {
	kss := sortedKeyspaces(s)
	if ks != "" {
		k, err := describeKeyspace(s, ks, "")
		if err != nil {
			return nil, err
		}
		kss = []*schema.Keyspace{k}
	}
	var rows [][]any
	for _, k := range kss {
		var elems [][]any
		switch form {
		case descTables:
			for _, t := range k.Tables() {
				if t.View() == nil {
					elems = append(elems, []any{quote(k.Name), "table", quote(t.Name)})
				}
			}
		case descTypes:
			for _, ut := range k.UserTypes() {
				elems = append(elems, []any{quote(k.Name), "type", quote(ut.Name)})
			}
		default:
			kind := schema.ScalarFunction
			if form == descAggregates {
				kind = schema.AggregateFunction
			}
			for _, r := range functionRows(nil, k.Functions(), kind) {
				elems = append(elems, r[:3])
			}
		}
		rows = append(rows, sortByName(elems)...)
	}
	return rows, nil
}

// keyspaceRows appends the rows of DESCRIBE KEYSPACE k: the keyspace,
// its types (each after those it uses), functions and aggregates, then
// each table followed by its indexes and its views, each group by name
// ignoring case as Cassandra sorts them; then the views whose base is
// missing (which only a schema loaded from inconsistent records holds).
func keyspaceRows(rows [][]any, k *schema.Keyspace, internals bool) [][]any {
	rows = append(rows, keyspaceRow(k, true))
	for _, ut := range schema.TypesInDependencyOrder(k) {
		rows = append(rows, typeRow(k, ut))
	}
	if k.FunctionCount() > 0 {
		all := k.Functions()
		rows = append(rows, sortByName(functionRows(nil, all, schema.ScalarFunction))...)
		rows = append(rows, sortByName(functionRows(nil, all, schema.AggregateFunction))...)
	}
	var tables []*schema.Table
	for _, t := range k.Tables() {
		if t.View() == nil {
			tables = append(tables, t)
		}
	}
	slices.SortStableFunc(tables, func(a, b *schema.Table) int { return compareNames(a.Name, b.Name) })
	for _, t := range tables {
		rows = tableRows(rows, k, t, internals, true)
	}
	if k.ViewCount() > 0 {
		for _, v := range k.AllViews() {
			if base, ok := k.Table(v.View().Base); !ok || base.View() != nil {
				rows = append(rows, tableRow(k, v, internals))
			}
		}
	}
	return rows
}

// tableRows appends the rows of table t: the table (or view), then its
// indexes, and with views its materialized views, each by name ignoring
// case.
func tableRows(rows [][]any, k *schema.Keyspace, t *schema.Table, internals, views bool) [][]any {
	rows = append(rows, tableRow(k, t, internals))
	var elems [][]any
	for _, ix := range k.TableIndexes(t.Name) {
		elems = append(elems, indexRow(k, ix))
	}
	rows = append(rows, sortByName(elems)...)
	if !views || t.View() != nil {
		return rows
	}
	elems = elems[:0]
	for _, v := range k.Views(t.Name) {
		elems = append(elems, tableRow(k, v, internals))
	}
	return append(rows, sortByName(elems)...)
}

// keyspaceRow is the row of keyspace k, its statement when withStmt.
func keyspaceRow(k *schema.Keyspace, withStmt bool) []any {
	if !withStmt {
		return []any{quote(k.Name), "keyspace", quote(k.Name)}
	}
	return []any{quote(k.Name), "keyspace", quote(k.Name), describe.KeyspaceOnly(k)}
}

// tableRow is the row of table or view t. The table id is in the
// statement only WITH INTERNALS, as in Cassandra. Cassandra's DESCRIBE
// has no trigger rows (its elements have no such type): a table's
// CREATE TRIGGER statements follow its CREATE TABLE in the same
// create_statement, so that the rows still recreate the schema.
func tableRow(k *schema.Keyspace, t *schema.Table, internals bool) []any {
	stmt := describe.Options{OmitID: !internals, Properties: systemschema.DescribeOptions}.Table(t)
	if t.View() != nil {
		return []any{quote(k.Name), "materialized_view", quote(t.Name), stmt}
	}
	return []any{quote(k.Name), "table", quote(t.Name), stmt + describe.Triggers(t)}
}

// indexRow is the row of index ix.
func indexRow(k *schema.Keyspace, ix *schema.Index) []any {
	return []any{quote(k.Name), "index", quote(ix.Name), describe.Index(ix)}
}

// typeRow is the row of user type ut.
func typeRow(k *schema.Keyspace, ut *schema.UserType) []any {
	return []any{quote(k.Name), "type", quote(ut.Name), describe.UserType(ut)}
}

// functionRows appends a row per function of fs of the given kind, named
// as Cassandra names them: name(type, type), the name quoted as needed.
func functionRows(rows [][]any, fs []*schema.Function, kind schema.FunctionKind) [][]any {
	for _, f := range fs {
		if f.Kind != kind {
			continue
		}
		var b strings.Builder
		b.WriteString(quote(f.Name))
		b.WriteByte('(')
		for i, t := range f.ArgTypes {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(t.String())
		}
		b.WriteByte(')')
		rows = append(rows, []any{quote(f.Keyspace), strings.ToLower(kind.String()), b.String(), describe.Function(f)})
	}
	return rows
}

// sortedKeyspaces are the keyspaces of s by name, ignoring case.
func sortedKeyspaces(s schema.Schema) []*schema.Keyspace {
	kss := s.Keyspaces()
	slices.SortStableFunc(kss, func(a, b *schema.Keyspace) int { return compareNames(a.Name, b.Name) })
	return kss
}

// sortByName sorts rows by their name column (the third) ignoring case,
// as Cassandra's SchemaElement.NAME_COMPARATOR does, keeping the order
// of names equal but for case.
func sortByName(rows [][]any) [][]any {
	slices.SortStableFunc(rows, func(a, b []any) int {
		return compareNames(unquote3(a[2].(string)), unquote3(b[2].(string)))
	})
	return rows
}

// unquote3 is a row's name without the quotes quote added (a quoted
// name sorts by its text, as Cassandra sorts element names).
func unquote3(name string) string {
	if strings.HasPrefix(name, `"`) {
		if s, n, ok := unquote(name, '"'); ok {
			return s + name[n:]
		}
	}
	return name
}

// compareNames compares names ignoring ASCII case.
func compareNames(a, b string) int {
	return cmp.Compare(strings.ToLower(a), strings.ToLower(b))
}

// quote is a name as Cassandra's rows give it: quoted when CQL needs.
func quote(name string) string { return cqltext.QuoteIdentifier(name) }
