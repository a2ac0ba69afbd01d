package cql

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// viewTermsBase is conformanceBase with a table whose clustering columns
// have the types the terms are checked against.
const viewTermsBase = conformanceBase + `;
CREATE TABLE k.e (id int, ts timestamp, d date, tx text, b blob, u uuid, tu timeuuid, bi bigint, fl frozen<list<int>>, PRIMARY KEY (id, ts, d, tx, b, u, tu, bi, fl))`

// viewOn returns a CREATE MATERIALIZED VIEW of k.e restricting its key
// columns with where and IS NOT NULL.
func viewOn(where string) string {
	return "CREATE MATERIALIZED VIEW k.mv AS SELECT * FROM k.e WHERE id IS NOT NULL AND ts IS NOT NULL AND d IS NOT NULL AND tx IS NOT NULL AND " +
		"b IS NOT NULL AND u IS NOT NULL AND tu IS NOT NULL AND bi IS NOT NULL AND fl IS NOT NULL AND " + where +
		" PRIMARY KEY (id, ts, d, tx, b, u, tu, bi, fl)"
}

// TestViewWhereTerms: the terms of Parser.g's term rule in a view's WHERE
// clause (arithmetic, negation, function calls, type hints, durations)
// are taken as Cassandra takes them and stored in canonical text, which
// DESCRIBE prints and which applies again to the same text; what
// Cassandra refuses is refused with its message.
func TestViewWhereTerms(t *testing.T) {
	base, err := applyText(t, schema.Schema{}, viewTermsBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		where, want string // want: the stored relation, or an error's text
	}{
		{"id = 1 + 2 * 3 - 10 % 4 / 2", "id = 1 + 2 * 3 - 10 % 4 / 2"},
		{"id = - 1", "id = -1"},
		{"id = - -1", "id = 1"},
		{"id = -abs(-2)", "id = -abs(-2)"},
		{"id = (int) 1", "id = (int)1"},
		{"id = (int)-1 + system.abs(1)", "id = (int)-1 + system.abs(1)"},
		{"id IN (abs(1), (int) 2, 3 * 4)", "id IN (abs(1), (int)2, 3 * 4)"},
		{`id = "abs"(1)`, "id = abs(1)"},
		{"ts = currenttimestamp()", "ts = currenttimestamp()"},
		{"ts > '2024-01-01' - 1d AND ts < totimestamp(now()) + P1DT2H", "ts > '2024-01-01' - 1d"},
		{"d = todate(now())", "d = todate(now())"},
		{"tx = 'a' + 'b'", "tx = 'a' + 'b'"},
		{"b = intasblob(1)", "b = intasblob(1)"},
		{"b = now()", "b = now()"},
		{"b = 0x01", "b = 0x01"},
		{"u = 5a1c395e-b41f-11e5-9f22-ba0be0483c18", "u = 5a1c395e-b41f-11e5-9f22-ba0be0483c18"},
		{"u = now()", "u = now()"},
		{"u = uuid()", "u = uuid()"},
		{"tu = mintimeuuid('2024-01-01')", "tu = mintimeuuid('2024-01-01')"},
		{"bi = tounixtimestamp(now()) * 1000", "bi = tounixtimestamp(now()) * 1000"},
		{"bi = abs(1)", "bi = abs(1)"},
		{"fl = (frozen<list<int>>) [1, abs(-2)]", "fl = (frozen<list<int>>)[1, abs(-2)]"},
		{"(ts, d) > ((timestamp) 0, todate(now()))", "(ts, d) > ((timestamp)0, todate(now()))"},

		{"id = abs(1, 2)", "Invalid call to function system.abs, none of its type signatures match"},
		{"ts = todate(now())", "Type error: cannot assign result of function system.todate (type date) to ts (type timestamp)"},
		{"d = mintimeuuid(1, 2)", "Invalid number of arguments in call to function system.mintimeuuid: 1 required but 2 provided"},
		{"tu = mintimeuuid(true)", "Type error: true cannot be passed as argument 0 of function system.mintimeuuid of type timestamp"},
		{"tu = now() + 1", "Type error: cannot assign result of operation + to tu (type timeuuid)"},
		{"ts = '2024-01-01' * 2", "Type error: cannot assign result of operation * to ts (type timestamp)"},
		{"ts = '2024-01-01' + 'x'", `Invalid STRING constant (x) for "ts" of type duration`},
		{"tx = -'a'", "Type error: cannot assign result of operation - to tx (type text)"},
		{"id = (tuple<int>) (1)", "Cannot assign value (tuple<int>)(1) to id of type int"},
		{"id = (addr) {street: 'x'}", "Cannot assign value (addr){street: 'x'} to id of type int"},
		{"id = (k.nope) 1", "Unknown type k.nope"},
		{"id = (other.addr) {zip: 1}", "type hint other.addr: user type other.addr is in another keyspace"},
		{"id = (list<list<int>>) [[1]]", "type hint list<list<int>>: non-frozen collections are not allowed inside collections"},
		{"id = (int) 1.5", "Cannot cast value 1.5 to type int"},
		{"id = sum(1)", "Aggregation function are not supported in the where clause"},
		{"id = system.nope()", "Unknown function system.nope called"},
		{"id = tojson(1)", "native function tojson is not supported in the WHERE clause of a materialized view"},
		{"id = " + strings.Repeat("1 + ", 20) + "1", "nested too deeply"},
	} {
		text := viewOn(tc.where)
		s, err := applyText(t, base, text)
		if !strings.Contains(tc.want, " = ") && !strings.Contains(tc.want, " > ") && !strings.Contains(tc.want, " IN ") {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an error with %q", tc.where, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		v, _ := s.Table("k", "mv")
		where := schema.WhereText(v.View().Where)
		if !strings.Contains(where, " AND "+tc.want) {
			t.Errorf("%s: stored %q, want it to hold %q", tc.where, where, tc.want)
		}
		// DESCRIBE prints the stored text, which applies again to the
		// same relations.
		desc := describe.Table(v)
		again, err := applyText(t, base, desc)
		if err != nil {
			t.Errorf("%s: DESCRIBE does not apply again: %v\n%s", tc.where, err, desc)
			continue
		}
		v2, _ := again.Table("k", "mv")
		if got := schema.WhereText(v2.View().Where); got != where || describe.Table(v2) != desc {
			t.Errorf("%s: DESCRIBE applied again stores %q, want %q", tc.where, got, where)
		}
	}
}
