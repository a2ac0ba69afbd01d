package cqlserver

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/metadata"
)

// column is a column of a result.
type column struct {
	name string
	typ  *wire.Type
}

// table is a result before projection and encoding: rows hold the values
// EncodeValue takes, one per column.
type table struct {
	keyspace, name string
	cols           []column
	rows           [][]any
	next           []byte // the paging state of the next page; nil: no more rows
}

// pageRequest is what a SELECT asks of paging: size rows at most (0: all
// of them), after the position of state (nil: from the first row). With
// noRows, only the columns are wanted (PREPARE).
type pageRequest struct {
	size   int
	state  []byte
	noRows bool
}

// queryError is a refusal of a SELECT, answered as INVALID.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &queryError{msg: fmt.Sprintf(format, args...)}
}

// selectQuery answers a SELECT of a system table, one page of it when
// params carry a page size.
func (c *conn) selectQuery(f wire.Frame, text string, params *wire.QueryParams, ks string) *pending {
	c.srv.cfg.Logger.Debug("cql select", "query", text, "values", len(params.Values))
	st, err := parseSelect(text)
	if err != nil {
		return c.errorf(f, wire.CodeInvalid, "%v", unsupported(err, text))
	}
	if err := bind(st, params.Values); err != nil {
		return c.errorf(f, wire.CodeInvalid, "%v", err)
	}
	pr := pageRequest{}
	if params.Has(wire.QueryPageSize) && params.PageSize > 0 {
		pr.size = int(params.PageSize)
	}
	if params.Has(wire.QueryPagingState) && len(params.PagingState) > 0 {
		pr.state = params.PagingState
	}
	t, err := c.selectTable(st, ks, pr)
	if err != nil {
		return c.reply(f, errorResponse(err, params.Consistency), nil)
	}
	rows, err := t.encode(st.columns)
	if err != nil {
		return c.errorf(f, wire.CodeInvalid, "%v", err)
	}
	rows.Metadata.PagingState = t.next
	if params.Has(wire.QuerySkipMetadata) {
		rows.Metadata = wire.RowsMetadata{NoMetadata: true, ColumnCount: len(rows.Metadata.Columns), PagingState: t.next}
	}
	return c.reply(f, rows, nil)
}

// unsupported is the refusal of a SELECT the parser does not know.
func unsupported(err error, text string) error {
	return invalidf("unsupported SELECT (%v): metalog serves the SELECTs of system tables drivers make: %q", err, clipText(text))
}

// selectTable computes the rows st selects, in the connection's keyspace
// ks when st names none. Its errors are *queryError (INVALID) or the
// member's. Only system_schema tables page: the system tables hold a
// row or none and refuse a paging state, which the server never issues
// for them. system_virtual_schema's tables have no rows.
func (c *conn) selectTable(st *selectStmt, ks string, pr pageRequest) (*table, error) {
	if st.keyspace == "" {
		st.keyspace = ks
	}
	if st.keyspace == virtualSchemaKeyspace {
		if pr.state != nil {
			return nil, invalidf("paging state is not one this server issued for this query (%s.%s is not paged)", virtualSchemaKeyspace, st.table)
		}
		return virtualSchemaTable(st)
	}
	if st.keyspace != "system" && st.keyspace != systemschema.KeyspaceName {
		return nil, invalidf("data statements are not served: metalog holds schemas, not data (SELECT from %s.%s)", st.keyspace, st.table)
	}
	if st.keyspace == "system" {
		if pr.state != nil {
			return nil, invalidf("paging state is not one this server issued for this query (system.%s is not paged)", st.table)
		}
		return c.nodeView().systemTable(st)
	}
	md, err := c.srv.cfg.Reader.Read(c.srv.ctx, 0, "", c.session.visible())
	if err != nil {
		return nil, err
	}
	return schemaTable(st, md, pr)
}

// bind puts the bound values in the conditions that have markers.
func bind(st *selectStmt, values []wire.Value) error {
	if st.markers != len(values) {
		return invalidf("there were %d markers(?) in CQL but %d bound variables", st.markers, len(values))
	}
	for i := range st.where {
		w := &st.where[i]
		if !w.marker {
			continue
		}
		v := values[w.index]
		if v.Null || v.Unset {
			return invalidf("invalid null or unset value for column %s", w.column)
		}
		w.value = string(v.Bytes)
	}
	return nil
}

// encode projects t on columns (nil: all) and encodes its rows.
func (t *table) encode(columns []string) (*wire.Rows, error) {
	idx := make([]int, 0, len(t.cols))
	if columns == nil {
		for i := range t.cols {
			idx = append(idx, i)
		}
	}
	for _, name := range columns {
		i := t.column(name)
		if i < 0 {
			return nil, invalidf("Undefined column name %s in table %s.%s", name, t.keyspace, t.name)
		}
		idx = append(idx, i)
	}
	out := &wire.Rows{Rows: make([][][]byte, 0, len(t.rows))}
	for _, i := range idx {
		out.Metadata.Columns = append(out.Metadata.Columns,
			wire.ColumnSpec{Keyspace: t.keyspace, Table: t.name, Name: t.cols[i].name, Type: t.cols[i].typ})
	}
	for _, r := range t.rows {
		cells := make([][]byte, len(idx))
		for j, i := range idx {
			b, err := wire.EncodeValue(t.cols[i].typ, r[i])
			if err != nil {
				return nil, fmt.Errorf("column %s of %s.%s: %w", t.cols[i].name, t.keyspace, t.name, err)
			}
			cells[j] = b
		}
		out.Rows = append(out.Rows, cells)
	}
	return out, nil
}

func (t *table) column(name string) int {
	for i, c := range t.cols {
		if c.name == name {
			return i
		}
	}
	return -1
}

// schemaTable answers a SELECT of system_schema, restricted by
// keyspace_name and the table's first clustering column: one page when
// pr has a size, computed with systemschema's Page (never the whole
// result), with the paging state of the next page when rows remain.
func schemaTable(st *selectStmt, md *metadata.ClusterMetadata, pr pageRequest) (*table, error) {
	sys, ok := systemschema.Lookup(st.table)
	if !ok {
		return nil, invalidf("table %s.%s is not served", systemschema.KeyspaceName, st.table)
	}
	q, ksSet, err := schemaQuery(st, sys)
	if err != nil {
		return nil, err
	}
	q.Own = true // cqlsh looks up system_schema itself in its driver's metadata
	t := &table{keyspace: systemschema.KeyspaceName, name: sys.Name, cols: columnsOf(sys)}
	if pr.state != nil {
		ps, err := decodePagingState(pr.state)
		if err != nil {
			return nil, err
		}
		if q.After, err = ps.resume(sys, q); err != nil {
			return nil, err
		}
	}
	if pr.noRows || ksSet && q.Keyspace == "" {
		return t, nil
	}
	if pr.size <= 0 {
		for _, row := range sys.Scan(md.Schema, q) {
			t.rows = append(t.rows, row)
		}
		return t, nil
	}
	rows, next, more := sys.Page(md.Schema, q, pr.size)
	t.rows = make([][]any, len(rows))
	for i, r := range rows {
		t.rows[i] = r
	}
	if more {
		ps := pagingState{table: sys.Name, keyspace: q.Keyspace, name: q.Name, after: next}
		if t.next, err = ps.encode(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// schemaQuery is the systemschema query of st's WHERE clause on table
// sys; ksSet reports a restriction on keyspace_name.
func schemaQuery(st *selectStmt, sys *systemschema.Table) (q systemschema.Query, ksSet bool, err error) {
	var nameSet bool
	for _, w := range st.where {
		switch {
		case w.column == "keyspace_name" && !ksSet:
			q.Keyspace, ksSet = w.value, true
		case len(sys.Columns) > 1 && sys.Columns[1].Kind == systemschema.Clustering && w.column == sys.Columns[1].Name && !nameSet:
			q.Name, nameSet = w.value, true
		default:
			return q, false, invalidf("restriction on %s of %s.%s is not served", w.column, systemschema.KeyspaceName, st.table)
		}
	}
	if nameSet && !ksSet {
		return q, false, invalidf("a restriction on %s needs one on keyspace_name", sys.Columns[1].Name)
	}
	return q, ksSet, nil
}

// columnsOf returns the result columns of the system table sys.
func columnsOf(sys *systemschema.Table) []column {
	cols := make([]column, len(sys.Columns))
	for i, c := range sys.Columns {
		typ, err := parseType(c.Type)
		if err != nil {
			panic(fmt.Sprintf("system table %s, column %s: %v", sys.Name, c.Name, err)) // the declarations are wrong
		}
		cols[i] = column{name: c.Name, typ: typ}
	}
	return cols
}

// natives are the native types system tables use, by CQL name.
var natives = map[string]wire.TypeID{
	"text": wire.TypeVarchar, "ascii": wire.TypeASCII, "boolean": wire.TypeBoolean, "int": wire.TypeInt,
	"bigint": wire.TypeBigint, "double": wire.TypeDouble, "float": wire.TypeFloat, "timestamp": wire.TypeTimestamp,
	"uuid": wire.TypeUUID, "timeuuid": wire.TypeTimeUUID, "blob": wire.TypeBlob, "inet": wire.TypeInet,
}

// parseType reads the CQL type of a system table's column: natives,
// list, set and map, frozen or not.
func parseType(s string) (*wire.Type, error) {
	s = strings.TrimSpace(s)
	if id, ok := natives[s]; ok {
		return wire.Native(id), nil
	}
	open := strings.IndexByte(s, '<')
	if open < 0 || !strings.HasSuffix(s, ">") {
		return nil, fmt.Errorf("type %q is not served", s)
	}
	inner := s[open+1 : len(s)-1]
	switch s[:open] {
	case "frozen":
		return parseType(inner)
	case "list", "set":
		elem, err := parseType(inner)
		if err != nil {
			return nil, err
		}
		if s[:open] == "list" {
			return wire.ListOf(elem), nil
		}
		return wire.SetOf(elem), nil
	case "map":
		_, args := splitSignature("(" + inner + ")")
		if len(args) != 2 {
			return nil, fmt.Errorf("type %q is not served", s)
		}
		k, err := parseType(args[0])
		if err != nil {
			return nil, err
		}
		v, err := parseType(args[1])
		if err != nil {
			return nil, err
		}
		return wire.MapOf(k, v), nil
	}
	return nil, fmt.Errorf("type %q is not served", s)
}

// addrOf is the address a connection's server side has, for the address
// columns of system.local.
func addrOf(a net.Addr) netip.Addr {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.IPv4Unspecified()
}

// tokenOf is the one token the member owns, derived from its host id.
func tokenOf(id [16]byte) string {
	var v int64
	for _, b := range id[:8] {
		v = v<<8 | int64(b)
	}
	return strconv.FormatInt(v, 10)
}
