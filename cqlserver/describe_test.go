package cqlserver_test

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

const describeDDL = `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE audit WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE shop.addr (street text, zip int);
CREATE FUNCTION shop.plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;';
CREATE AGGREGATE shop.total(int) SFUNC plus STYPE int INITCOND 0;
CREATE TABLE shop.orders (id int PRIMARY KEY, note text, ship frozen<addr>);
CREATE INDEX orders_note ON shop.orders (note);
CREATE TRIGGER orders_trg ON shop.orders USING 'org.example.Trigger';
CREATE MATERIALIZED VIEW shop.by_note AS SELECT * FROM shop.orders WHERE note IS NOT NULL AND id IS NOT NULL PRIMARY KEY (note, id);
CREATE TABLE shop.items (id int PRIMARY KEY);
CREATE TABLE audit.log (id int PRIMARY KEY);`

// describeRow is one row of a DESCRIBE result.
type describeRow struct{ keyspace, typ, name, stmt string }

// decodeDescribe reads the rows of a DESCRIBE result, failing t on
// anything else.
func decodeDescribe(t *testing.T, f wire.Frame) []describeRow {
	t.Helper()
	if f.Opcode != wire.OpResult {
		t.Fatalf("answered %v: %s", f.Opcode, decodeError(f))
	}
	d := wire.NewDecoder(f.Body)
	if k := wire.ResultKind(d.Int()); k != wire.KindRows {
		t.Fatalf("result kind %v, want rows", k)
	}
	flags, n := d.Int(), d.Int()
	if flags&0x0001 == 0 || n != 4 {
		t.Fatalf("flags %#x, %d columns, want global table spec and 4", flags, n)
	}
	d.Str()
	d.Str()
	var names []string
	for i := int32(0); i < n; i++ {
		names = append(names, d.Str())
		if o := d.Option(); o == nil {
			t.Fatalf("column %d has no type", i)
		}
	}
	if got := strings.Join(names, ","); got != "keyspace_name,type,name,create_statement" {
		t.Fatalf("columns %s", got)
	}
	var rows []describeRow
	for i, count := int32(0), d.Int(); i < count; i++ {
		rows = append(rows, describeRow{string(d.Bytes()), string(d.Bytes()), string(d.Bytes()), string(d.Bytes())})
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// describeWant is the expected rows of the DESCRIBE forms over s.
func describeWant(t *testing.T, s schema.Schema) map[string][]describeRow {
	shop, _ := s.Keyspace("shop")
	audit, _ := s.Keyspace("audit")
	orders, _ := shop.Table("orders")
	items, _ := shop.Table("items")
	view, _ := shop.Table("by_note")
	log, _ := audit.Table("log")
	addr, _ := shop.UserType("addr")
	ix, _ := shop.Index("orders_note")
	var plus, total *schema.Function
	for _, f := range shop.Functions() {
		if f.Name == "plus" {
			plus = f
		} else {
			total = f
		}
	}
	if orders == nil || items == nil || view == nil || log == nil || addr == nil || ix == nil || plus == nil || total == nil {
		t.Fatal("schema lacks an object")
	}
	ordersRows := []describeRow{
		{"shop", "table", "orders", describe.Table(orders)},
		{"shop", "index", "orders_note", describe.Index(ix)},
		{"shop", "trigger", "orders_trg", describe.Trigger(orders, orders.Triggers[0])},
		{"shop", "materialized_view", "by_note", describe.View(view)},
	}
	shopRows := append([]describeRow{
		{"shop", "keyspace", "shop", describe.KeyspaceOnly(shop)},
		{"shop", "type", "addr", describe.UserType(addr)},
		{"shop", "function", plus.Signature(), describe.Function(plus)},
		{"shop", "aggregate", total.Signature(), describe.Function(total)},
		{"shop", "table", "items", describe.Table(items)},
	}, ordersRows...)
	auditRows := []describeRow{
		{"audit", "keyspace", "audit", describe.KeyspaceOnly(audit)},
		{"audit", "table", "log", describe.Table(log)},
	}
	return map[string][]describeRow{
		"DESCRIBE KEYSPACES":                        {{"audit", "keyspace", "audit", "audit"}, {"shop", "keyspace", "shop", "shop"}},
		"describe keyspace shop;":                   shopRows,
		"DESC KEYSPACE":                             shopRows,
		"DESCRIBE SCHEMA":                           append(auditRows, shopRows...),
		"DESCRIBE TABLES":                           {shopRows[4], ordersRows[0]},
		"DESCRIBE TABLE orders":                     ordersRows,
		"DESCRIBE COLUMNFAMILY audit.log":           auditRows[1:],
		"DESCRIBE TYPES":                            {shopRows[1]},
		"DESCRIBE TYPE shop.addr":                   {shopRows[1]},
		"DESCRIBE FUNCTIONS":                        {shopRows[2]},
		"DESCRIBE AGGREGATES":                       {shopRows[3]},
		"DESCRIBE INDEX orders_note":                {ordersRows[1]},
		`DESCRIBE MATERIALIZED VIEW "shop".by_note`: {ordersRows[3]},
		"DESCRIBE TABLE by_note":                    {ordersRows[3]},
	}
}

// TestDescribe runs each DESCRIBE form in keyspace shop and checks its
// rows against package describe's statements.
func TestDescribe(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, describeDDL, nil)
	c.started()
	c.send(2, &wire.Query{Query: "USE shop"})
	if r := decode(t, c.recv()); r.code != 0 {
		t.Fatalf("USE: %s", r.message)
	}
	for query, want := range describeWant(t, schemakit.Build(t, describeDDL)) {
		c.send(3, &wire.Query{Query: query})
		got := decodeDescribe(t, c.recv())
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, want %d: %+v", query, len(got), len(want), got)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: row %d is\n%+v\nwant\n%+v", query, i, got[i], want[i])
			}
		}
	}
}

// TestDescribeErrors checks that a missing object, a missing keyspace
// and a form not served are INVALID, naming what is wrong.
func TestDescribeErrors(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, describeDDL, nil)
	c.started()
	for i, tc := range []struct{ query, words string }{
		{"DESCRIBE TABLE shop.nope", "'shop.nope' not found"},
		{"DESCRIBE TYPE shop.orders", "'shop.orders' not found"},
		{"DESCRIBE INDEX shop.nope", "'shop.nope' not found"},
		{"DESCRIBE MATERIALIZED VIEW shop.orders", "'shop.orders' not found"},
		{"DESCRIBE KEYSPACE nope", "'nope' not found"},
		{"DESCRIBE TABLES", "no current keyspace"},
		{"DESCRIBE TABLE orders", "no current keyspace"},
		{"DESCRIBE CLUSTER", "not served"},
		{"DESCRIBE FULL SCHEMA", "not served"},
		{"DESC", "not served"},
		{"DESCRIBE TABLE a.b.c", "takes one name"},
	} {
		c.send(int16(i+2), &wire.Query{Query: tc.query})
		r := decode(t, c.recv())
		if r.code != wire.CodeInvalid || !strings.Contains(r.message, tc.words) {
			t.Errorf("%s: answered %+v, want INVALID saying %q", tc.query, r, tc.words)
		}
	}
}
