package cqlserver_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// describeDDL has names that sort differently by bytes and ignoring case
// ("Beta" and "Zoo"), so the tests see Cassandra's order.
const describeDDL = `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE audit WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE "Zoo" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE shop.addr (street text, zip int);
CREATE FUNCTION shop.plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;';
CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int INITCOND 0;
CREATE TABLE shop.orders (id int PRIMARY KEY, note text, ship frozen<addr>);
CREATE INDEX orders_note ON shop.orders (note);
CREATE TRIGGER orders_trg ON shop.orders USING 'org.example.Trigger';
CREATE MATERIALIZED VIEW shop.by_note AS SELECT * FROM shop.orders WHERE note IS NOT NULL AND id IS NOT NULL PRIMARY KEY (note, id);
CREATE TABLE shop.items (id int PRIMARY KEY);
CREATE TABLE shop."Beta" (id int PRIMARY KEY);
CREATE TABLE audit.log (id int PRIMARY KEY);`

// describeResult is a DESCRIBE result: its column names and rows, each
// cell as text (DESCRIBE CLUSTER's range_ownership in fmt's form).
type describeResult struct {
	columns []string
	rows    [][]string
	state   []byte
}

// decodeDescribe reads the Rows result of a DESCRIBE, failing t on
// anything else.
func decodeDescribe(t *testing.T, f wire.Frame) describeResult {
	t.Helper()
	d := rowsBody(t, f)
	flags, n := d.Int(), d.Int()
	var res describeResult
	if flags&0x0002 != 0 {
		res.state = d.Bytes()
	}
	if flags&0x0001 == 0 {
		t.Fatalf("flags %#x, want a global table spec", flags)
	}
	if ks, tb := d.Str(), d.Str(); ks != "system" || tb != "describe" {
		t.Fatalf("table %s.%s, want system.describe", ks, tb)
	}
	var types []*wire.Type
	for i := int32(0); i < n; i++ {
		res.columns = append(res.columns, d.Str())
		types = append(types, d.Option())
	}
	for i, count := int32(0), d.Int(); i < count; i++ {
		row := make([]string, n)
		for j := range row {
			row[j] = cell(t, types[j], d.Bytes())
		}
		res.rows = append(res.rows, row)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

// cell is a value as text: a varchar as it is, a map<text, list<text>>
// as fmt prints a map[string][]string.
func cell(t *testing.T, typ *wire.Type, b []byte) string {
	t.Helper()
	if typ.ID == wire.TypeVarchar {
		return string(b)
	}
	if typ.ID != wire.TypeMap {
		t.Fatalf("column of type %v", typ)
	}
	d := wire.NewDecoder(b)
	m := map[string][]string{}
	for i, n := int32(0), d.Int(); i < n; i++ {
		k, l := string(d.Bytes()), wire.NewDecoder(d.Bytes())
		var vs []string
		for j, ln := int32(0), l.Int(); j < ln; j++ {
			vs = append(vs, string(l.Bytes()))
		}
		m[k] = vs
	}
	return fmt.Sprint(m)
}

const (
	listCols    = "keyspace_name,type,name"
	elementCols = "keyspace_name,type,name,create_statement"
)

// describeCase is one DESCRIBE and what it answers: its columns and rows
// (the statements of package describe), or an error code and message.
type describeCase struct {
	query   string
	columns string
	rows    [][]string
	code    wire.ErrorCode
	message string
}

// describeCases are the cases over describeDDL, keyed by the keyspace the
// connection is in ("": none).
func describeCases(t *testing.T) map[string][]describeCase {
	s := schemakit.Build(t, describeDDL)
	shop, _ := s.Keyspace("shop")
	audit, _ := s.Keyspace("audit")
	zoo, _ := s.Keyspace("Zoo")
	tbl := func(k *schema.Keyspace, name string, internals bool) string {
		tb, ok := k.Table(name)
		if !ok {
			t.Fatalf("no table %s", name)
		}
		return describe.Options{OmitID: !internals, Properties: systemschema.DescribeOptions}.Table(tb) + describe.Triggers(tb)
	}
	addr, _ := shop.UserType("addr")
	ix, _ := shop.Index("orders_note")
	plus, _ := shop.Function("plus(int,int)")
	total, _ := shop.Function("total(int)")
	if audit == nil || zoo == nil || addr == nil || ix == nil || plus == nil || total == nil {
		t.Fatal("schema lacks an object")
	}
	ksShop := []string{"shop", "keyspace", "shop", describe.KeyspaceOnly(shop)}
	ksAudit := []string{"audit", "keyspace", "audit", describe.KeyspaceOnly(audit)}
	ksZoo := []string{`"Zoo"`, "keyspace", `"Zoo"`, describe.KeyspaceOnly(zoo)}
	typAddr := []string{"shop", "type", "addr", describe.UserType(addr)}
	fnPlus := []string{"shop", "function", "plus(int, int)", describe.Function(plus)}
	aggTotal := []string{"shop", "aggregate", "total(int)", describe.Function(total)}
	tBeta := []string{"shop", "table", `"Beta"`, tbl(shop, "Beta", false)}
	tItems := []string{"shop", "table", "items", tbl(shop, "items", false)}
	tOrders := []string{"shop", "table", "orders", tbl(shop, "orders", false)}
	ixNote := []string{"shop", "index", "orders_note", describe.Index(ix)}
	vByNote := []string{"shop", "materialized_view", "by_note", tbl(shop, "by_note", false)}
	tLog := []string{"audit", "table", "log", tbl(audit, "log", false)}
	shopRows := [][]string{ksShop, typAddr, fnPlus, aggTotal, tBeta, tItems, tOrders, ixNote, vByNote}
	schemaRows := append(append([][]string{ksAudit, tLog}, shopRows...), ksZoo)
	l := func(rows ...[]string) [][]string { // the list form of rows
		out := make([][]string, len(rows))
		for i, r := range rows {
			out[i] = r[:3]
		}
		return out
	}
	e := func(rows ...[]string) [][]string { return rows }
	invalid := func(q, msg string) describeCase { return describeCase{query: q, code: wire.CodeInvalid, message: msg} }
	syntax := func(q string) describeCase { return describeCase{query: q, code: wire.CodeSyntax} }
	return map[string][]describeCase{
		"": {
			{query: "DESCRIBE KEYSPACES", columns: listCols, rows: l(ksAudit, ksShop, ksZoo)},
			{query: "DESCRIBE TABLES", columns: listCols, rows: l(tLog, tBeta, tItems, tOrders)},
			{query: "DESCRIBE TYPES", columns: listCols, rows: l(typAddr)},
			{query: "DESCRIBE FUNCTIONS", columns: listCols, rows: l(fnPlus)},
			{query: "DESCRIBE AGGREGATES", columns: listCols, rows: l(aggTotal)},
			{query: "DESCRIBE SCHEMA", columns: elementCols, rows: schemaRows},
			{query: "DESCRIBE FULL SCHEMA", columns: elementCols, rows: schemaRows},
			{query: "describe keyspace shop;", columns: elementCols, rows: shopRows},
			{query: "DESCRIBE ONLY KEYSPACE shop", columns: elementCols, rows: e(ksShop)},
			{query: "DESC TABLE shop.orders", columns: elementCols, rows: e(tOrders, ixNote)},
			{query: "DESCRIBE COLUMNFAMILY audit.log", columns: elementCols, rows: e(tLog)},
			{query: "DESCRIBE TABLE shop.orders WITH INTERNALS", columns: elementCols,
				rows: e([]string{"shop", "table", "orders", tbl(shop, "orders", true)}, ixNote)},
			{query: `DESCRIBE TABLE shop."Beta"`, columns: elementCols, rows: e(tBeta)},
			{query: "DESCRIBE INDEX shop.orders_note", columns: elementCols, rows: e(ixNote)},
			{query: `DESCRIBE MATERIALIZED VIEW "shop".by_note`, columns: elementCols, rows: e(vByNote)},
			{query: "DESCRIBE TYPE shop.addr", columns: elementCols, rows: e(typAddr)},
			{query: "DESCRIBE FUNCTION shop.plus", columns: elementCols, rows: e(fnPlus)},
			{query: "DESCRIBE AGGREGATE shop.total", columns: elementCols, rows: e(aggTotal)},
			{query: "DESCRIBE shop", columns: elementCols, rows: shopRows},
			{query: `DESCRIBE "Zoo"`, columns: elementCols, rows: e(ksZoo)},
			{query: "DESCRIBE shop.orders", columns: elementCols, rows: e(tOrders, ixNote)},
			{query: "DESCRIBE shop.orders_note", columns: elementCols, rows: e(ixNote)},
			{query: "DESCRIBE shop.by_note", columns: elementCols, rows: e(vByNote)},
			{query: "DESCRIBE CLUSTER", columns: "cluster,partitioner,snitch", rows: e([]string{"Test Cluster", "Murmur3Partitioner", "SimpleSnitch"})},
			invalid("DESCRIBE TABLE orders", "No keyspace specified and no current keyspace"),
			invalid("DESCRIBE KEYSPACE", "No keyspace specified and no current keyspace"),
			invalid("DESCRIBE KEYSPACE nope", "'nope' not found in keyspaces"),
			invalid("DESCRIBE TABLE shop.nope", "Table 'nope' not found in keyspace 'shop'"),
			invalid(`DESCRIBE TABLE shop."Orders"`, "Table 'Orders' not found in keyspace 'shop'"),
			invalid("DESCRIBE INDEX shop.nope", "Table for existing index 'nope' not found in 'shop'"),
			invalid("DESCRIBE MATERIALIZED VIEW shop.orders", "Materialized view 'orders' not found in 'shop'"),
			invalid("DESCRIBE TYPE shop.orders", "User defined type 'orders' not found in 'shop'"),
			invalid("DESCRIBE FUNCTION shop.total", "User defined function 'total' not found in 'shop'"),
			invalid("DESCRIBE AGGREGATE shop.plus", "User defined aggregate 'plus' not found in 'shop'"),
			invalid("DESCRIBE nope", "'nope' not found in keyspaces"),
			invalid("DESCRIBE shop.nope", "'nope' not found in keyspace 'shop'"),
			syntax("DESC"),
			syntax("DESCRIBE TABLE"),
			syntax("DESCRIBE TABLE a.b.c"),
			syntax("DESCRIBE KEYSPACES shop"),
			syntax("DESCRIBE SCHEMA WITH"),
		},
		"shop": {
			{query: "DESCRIBE TABLES", columns: listCols, rows: l(tBeta, tItems, tOrders)},
			{query: "DESC TYPES", columns: listCols, rows: l(typAddr)},
			{query: "DESCRIBE KEYSPACE", columns: elementCols, rows: shopRows},
			{query: "DESCRIBE TABLE orders", columns: elementCols, rows: e(tOrders, ixNote)},
			{query: "DESCRIBE TABLE by_note", columns: elementCols, rows: e(vByNote)},
			{query: "DESCRIBE orders", columns: elementCols, rows: e(tOrders, ixNote)},
			{query: "DESCRIBE audit", columns: elementCols, rows: e(ksAudit, tLog)},
			{query: "DESCRIBE TYPE addr", columns: elementCols, rows: e(typAddr)},
			invalid("DESCRIBE nope", "'nope' not found in keyspace 'shop'"),
		},
	}
}

// TestDescribe runs every DESCRIBE form, with and without a current
// keyspace, and checks its columns and rows, or its error.
func TestDescribe(t *testing.T) {
	for ks, cases := range describeCases(t) {
		c := start(t, &fakeWriter{exec: noWrites}, describeDDL, func(cfg *cqlserver.Config) { cfg.ClusterName = "Test Cluster" })
		c.started()
		if ks != "" {
			c.send(2, &wire.Query{Query: "USE " + ks})
			if r := decode(t, c.recv()); r.code != 0 {
				t.Fatalf("USE: %s", r.message)
			}
		}
		for _, tc := range cases {
			c.send(3, &wire.Query{Query: tc.query})
			checkDescribe(t, "in "+ks+": "+tc.query, c.recv(), tc)
		}
	}
}

// checkDescribe checks the answer f against tc.
func checkDescribe(t *testing.T, what string, f wire.Frame, tc describeCase) {
	t.Helper()
	if tc.code != 0 {
		r := decode(t, f)
		if r.code != tc.code || tc.message != "" && r.message != tc.message {
			t.Errorf("%s: answered %#x %q, want %#x %q", what, r.code, r.message, tc.code, tc.message)
		}
		return
	}
	got := decodeDescribe(t, f)
	if cols := strings.Join(got.columns, ","); cols != tc.columns {
		t.Errorf("%s: columns %s, want %s", what, cols, tc.columns)
	}
	if len(got.rows) != len(tc.rows) {
		t.Errorf("%s: %d rows, want %d: %q", what, len(got.rows), len(tc.rows), got.rows)
		return
	}
	for i := range tc.rows {
		if strings.Join(got.rows[i], "|") != strings.Join(tc.rows[i], "|") {
			t.Errorf("%s: row %d is\n%q\nwant\n%q", what, i, got.rows[i], tc.rows[i])
		}
	}
}

// TestDescribeClusterRing checks that DESCRIBE CLUSTER in a keyspace adds
// the ring: the member's token, owned by the address it was reached at.
func TestDescribeClusterRing(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, describeDDL, func(cfg *cqlserver.Config) { cfg.HostID = cqlserver.HostID(7) })
	c.started()
	c.send(2, &wire.Query{Query: "USE shop"})
	decode(t, c.recv())
	c.send(3, &wire.Query{Query: "DESCRIBE CLUSTER"})
	got := decodeDescribe(t, c.recv())
	if cols := strings.Join(got.columns, ","); cols != "cluster,partitioner,snitch,range_ownership" || len(got.rows) != 1 {
		t.Fatalf("columns %s, %d rows", cols, len(got.rows))
	}
	want := fmt.Sprintf("map[%s:[/%s]]", tokenOfHost(cqlserver.HostID(7)), c.nc.RemoteAddr())
	if got.rows[0][3] != want {
		t.Errorf("range_ownership %s, want %s", got.rows[0][3], want)
	}
}

// tokenOfHost is system.local's token of a host id: its first 8 bytes
// as a signed big-endian integer.
func tokenOfHost(id [16]byte) string {
	var v int64
	for _, b := range id[:8] {
		v = v<<8 | int64(b)
	}
	return fmt.Sprint(v)
}

// swapReader answers Read with a schema a test can replace.
type swapReader struct {
	fakeReader            // Watch
	mu         sync.Mutex // guards s
	s          schema.Schema
}

func (r *swapReader) set(s schema.Schema) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s = s
}

func (r *swapReader) Read(context.Context, uint64, string, func(string) bool) (*metadata.ClusterMetadata, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &metadata.ClusterMetadata{Epoch: 1, Schema: r.s}, nil
}

// TestDescribePaging pages DESCRIBE KEYSPACE by offset as Cassandra does:
// the pages together are the whole result, a state is refused for
// another query, and a page after the schema changed is refused with
// Cassandra's message.
func TestDescribePaging(t *testing.T) {
	all := describeCases(t)[""][7] // describe keyspace shop
	c := start(t, &fakeWriter{exec: noWrites}, describeDDL, nil)
	c.started()
	var rows [][]string
	var state []byte
	for i := 0; ; i++ {
		c.send(int16(2+i), pagedQuery(all.query, 4, state, false))
		page := decodeDescribe(t, c.recv())
		if len(page.rows) > 4 || len(page.rows) < 4 && page.state != nil {
			t.Fatalf("page %d: %d rows, state %v", i, len(page.rows), page.state != nil)
		}
		rows = append(rows, page.rows...)
		if state = page.state; state == nil {
			break
		}
		if i == 0 {
			c.send(20, pagedQuery("DESCRIBE SCHEMA", 4, state, false))
			if r := decode(t, c.recv()); r.code != wire.CodeInvalid {
				t.Errorf("a state of another DESCRIBE answered %+v", r)
			}
			c.send(21, pagedQuery("SELECT * FROM system_schema.tables", 4, state, false))
			if r := decode(t, c.recv()); r.code != wire.CodeInvalid {
				t.Errorf("a DESCRIBE state given to a SELECT answered %+v", r)
			}
		}
	}
	checkDescribe(t, "pages of "+all.query, pageFrame(t, rows), all)
}

// pageFrame is not a frame; checkDescribe takes rows through
// describeResult, so this builds the RESULT the pages add up to.
func pageFrame(t *testing.T, rows [][]string) wire.Frame {
	t.Helper()
	md := wire.RowsMetadata{}
	for _, name := range strings.Split(elementCols, ",") {
		md.Columns = append(md.Columns, wire.ColumnSpec{Keyspace: "system", Table: "describe", Name: name, Type: wire.Native(wire.TypeVarchar)})
	}
	out := &wire.Rows{Metadata: md}
	for _, r := range rows {
		var cells [][]byte
		for _, v := range r {
			cells = append(cells, []byte(v))
		}
		out.Rows = append(out.Rows, cells)
	}
	return wire.ResponseFrame(wire.Version4, 0, out, nil)
}

// TestDescribePagingSchemaChanged checks that a page asked for after the
// schema changed is refused, as Cassandra refuses it.
func TestDescribePagingSchemaChanged(t *testing.T) {
	r := &swapReader{s: schemakit.Build(t, describeDDL)}
	c := start(t, &fakeWriter{exec: noWrites}, "", func(cfg *cqlserver.Config) { cfg.Reader = r })
	c.started()
	c.send(2, pagedQuery("DESCRIBE SCHEMA", 2, nil, false))
	page := decodeDescribe(t, c.recv())
	if page.state == nil {
		t.Fatal("no paging state")
	}
	r.set(schemakit.Build(t, describeDDL+"\nCREATE TABLE audit.more (id int PRIMARY KEY);"))
	c.send(3, pagedQuery("DESCRIBE SCHEMA", 2, page.state, false))
	want := "The schema has changed since the previous page of the DESCRIBE statement result. Please retry the DESCRIBE statement."
	if got := decode(t, c.recv()); got.code != wire.CodeInvalid || got.message != want {
		t.Errorf("answered %#x %q, want INVALID %q", got.code, got.message, want)
	}
}

// TestDescribePrepared prepares a DESCRIBE, as a driver may: no bind
// markers, no result metadata, and EXECUTE answers as QUERY does.
func TestDescribePrepared(t *testing.T) {
	tc := describeCases(t)["shop"][3] // DESCRIBE TABLE orders
	c := start(t, &fakeWriter{exec: noWrites}, describeDDL, nil)
	c.started()
	c.send(2, &wire.Query{Query: "USE shop"})
	decode(t, c.recv())
	c.send(3, &wire.Prepare{Query: tc.query})
	f := c.recv()
	d := wire.NewDecoder(f.Body)
	if f.Opcode != wire.OpResult || wire.ResultKind(d.Int()) != wire.KindPrepared {
		t.Fatalf("PREPARE answered with %v: %s", f.Opcode, decodeError(f))
	}
	id := d.ShortBytes()
	if flags, bind, pk := d.Int(), d.Int(), d.Int(); flags&0x0001 == 0 && bind != 0 || bind != 0 || pk != 0 {
		t.Fatalf("bind metadata: flags %#x, %d markers, %d key indexes", flags, bind, pk)
	}
	if flags, n := d.Int(), d.Int(); flags&0x0004 == 0 || n != 0 {
		t.Fatalf("result metadata: flags %#x, %d columns; want none", flags, n)
	}
	c.send(4, &wire.Execute{ID: id})
	checkDescribe(t, "EXECUTE "+tc.query, c.recv(), tc)
	c.send(5, &wire.Prepare{Query: "DESCRIBE TABLE a.b.c"})
	if r := decode(t, c.recv()); r.code != wire.CodeSyntax {
		t.Fatalf("PREPARE of a malformed DESCRIBE answered %+v", r)
	}
}
