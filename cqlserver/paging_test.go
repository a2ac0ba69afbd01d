package cqlserver_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// tablesDDL is keyspace shop with n tables t00 ... of two columns each.
func tablesDDL(n int) string {
	var b strings.Builder
	b.WriteString("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n")
	for i := range n {
		fmt.Fprintf(&b, "CREATE TABLE shop.t%02d (id int PRIMARY KEY, note text);\n", i)
	}
	return b.String()
}

// page is what the paging tests read of a Rows result.
type page struct {
	more  bool     // the has-more-pages flag
	state []byte   // the paging state, when more
	rows  []string // each row's cells, as text, joined by "|"
}

// readPage decodes a Rows result, failing the test on anything else.
func readPage(t *testing.T, f wire.Frame) page {
	t.Helper()
	d := rowsBody(t, f)
	h := readRowsHead(d)
	p := page{more: h.state != nil, state: h.state}
	n := h.columns
	count := d.Int()
	for range count {
		cells := make([]string, n)
		for j := range cells {
			cells[j] = string(d.Bytes())
		}
		p.rows = append(p.rows, strings.Join(cells, "|"))
	}
	if err := d.Err(); err != nil || d.Remaining() != 0 {
		t.Fatalf("decoding rows: %v, %d bytes left", err, d.Remaining())
	}
	return p
}

// pagedQuery is a QUERY of text with a page size and a paging state.
func pagedQuery(text string, size int32, state []byte, skipMetadata bool) *wire.Query {
	q := &wire.Query{Query: text, Params: wire.QueryParams{Flags: wire.QueryPageSize, PageSize: size}}
	if state != nil {
		q.Params.Flags |= wire.QueryPagingState
		q.Params.PagingState = state
	}
	if skipMetadata {
		q.Params.Flags |= wire.QuerySkipMetadata
	}
	return q
}

// readAll sends the request next makes for each page (nil state: the
// first) until a page has no state, and returns the pages.
func readAll(t *testing.T, c *client, next func(state []byte) wire.Message) []page {
	t.Helper()
	var pages []page
	var state []byte
	for i := range 1000 {
		c.send(int16(i+10), next(state))
		p := readPage(t, c.recv())
		pages = append(pages, p)
		if p.more != (p.state != nil) {
			t.Fatalf("page %d: more %v with state %x", i, p.more, p.state)
		}
		if !p.more {
			return pages
		}
		state = p.state
	}
	t.Fatal("paging does not end")
	return nil
}

// joined is the rows of pages, in order.
func joined(pages []page) []string {
	var out []string
	for _, p := range pages {
		out = append(out, p.rows...)
	}
	return out
}

// TestPagedQuery reads system_schema SELECTs over ten tables in pages of
// three: the pages join to the unpaged result, every page but the last
// has three rows and a state, the last has none.
func TestPagedQuery(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, tablesDDL(10), nil)
	c.started()
	for _, text := range []string{
		"SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'shop'",
		"SELECT keyspace_name, table_name, id FROM system_schema.tables",
		"SELECT * FROM system_schema.columns WHERE keyspace_name = 'shop'",
		"SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'shop' AND table_name = 't04'",
		"SELECT * FROM system_schema.keyspaces",
		"SELECT * FROM system_schema.tables WHERE keyspace_name = 'none'",
	} {
		c.send(2, &wire.Query{Query: text})
		whole := readPage(t, c.recv())
		if whole.more {
			t.Fatalf("%s: unpaged query answered with more pages", text)
		}
		for _, skip := range []bool{false, true} {
			pages := readAll(t, c, func(state []byte) wire.Message { return pagedQuery(text, 3, state, skip) })
			if got := joined(pages); !slices.Equal(got, whole.rows) {
				t.Errorf("%s (skip metadata %v): pages join to\n%q\nwant\n%q", text, skip, got, whole.rows)
			}
			if want := max(1, (len(whole.rows)+2)/3); len(pages) != want {
				t.Errorf("%s: %d pages for %d rows, want %d", text, len(pages), len(whole.rows), want)
			}
			for i, p := range pages[:len(pages)-1] {
				if len(p.rows) != 3 {
					t.Errorf("%s: page %d has %d rows, want 3", text, i, len(p.rows))
				}
			}
		}
	}
	// The shop tables query has 10 rows: pages of 3, 3, 3 and 1.
	pages := readAll(t, c, func(state []byte) wire.Message {
		return pagedQuery("SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'shop'", 3, state, false)
	})
	if len(pages) != 4 || len(pages[3].rows) != 1 || pages[3].rows[0] != "t09" || pages[3].state != nil {
		t.Fatalf("pages of ten tables: %+v", pages)
	}
	// No page size, or one below 1: all rows at once.
	for _, size := range []int32{0, -1} {
		c.send(3, pagedQuery("SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'shop'", size, nil, false))
		if p := readPage(t, c.recv()); p.more || len(p.rows) != 10 {
			t.Errorf("page size %d: %d rows, more %v; want 10, none", size, len(p.rows), p.more)
		}
	}
}

// TestPagedExecute pages a prepared SELECT as a QUERY pages.
func TestPagedExecute(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, tablesDDL(10), nil)
	c.started()
	text := "SELECT table_name, column_name FROM system_schema.columns WHERE keyspace_name = ?"
	c.send(2, &wire.Prepare{Query: text})
	f := c.recv()
	d := wire.NewDecoder(f.Body)
	if f.Opcode != wire.OpResult || wire.ResultKind(d.Int()) != wire.KindPrepared {
		t.Fatalf("PREPARE answered with %v: %s", f.Opcode, decodeError(f))
	}
	id := d.ShortBytes()
	c.send(3, &wire.Query{Query: strings.Replace(text, "?", "'shop'", 1)})
	whole := readPage(t, c.recv())
	pages := readAll(t, c, func(state []byte) wire.Message {
		m := &wire.Execute{ID: id, Params: pagedQuery("", 3, state, true).Params}
		m.Params.Flags |= wire.QueryValues
		m.Params.Values = []wire.Value{{Bytes: []byte("shop")}}
		return m
	})
	if got := joined(pages); len(whole.rows) != 20 || !slices.Equal(got, whole.rows) {
		t.Fatalf("EXECUTE pages join to %q, want the 20 rows %q", got, whole.rows)
	}
	if len(pages) != 7 {
		t.Fatalf("%d pages of 3 for 20 rows, want 7", len(pages))
	}
}

// TestPagingStateRefused answers INVALID to paging states the server did
// not issue, or issued for another query: damaged, cut, forged, too
// long, or given to a system table.
func TestPagingStateRefused(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, tablesDDL(10), nil)
	c.started()
	tables := "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'shop'"
	c.send(2, pagedQuery(tables, 3, nil, false))
	good := readPage(t, c.recv()).state
	c.send(3, pagedQuery("SELECT * FROM system_schema.columns WHERE keyspace_name = 'shop'", 3, nil, false))
	other := readPage(t, c.recv()).state
	if good == nil || other == nil {
		t.Fatal("no paging state issued")
	}
	type refusal struct {
		what, query string
		state       []byte
	}
	cases := []refusal{
		{"truncated", tables, good[:len(good)-1]},
		{"one byte", tables, good[:1]},
		{"trailing byte", tables, append(slices.Clone(good), 0)},
		{"forged", tables, []byte("0123456789abcdef")},
		{"too long", tables, make([]byte, 20<<10)},
		{"other table", tables, other},
		{"other keyspace", strings.Replace(tables, "shop", "shop2", 1), good},
		{"other restriction", tables + " AND table_name = 't01'", good},
		{"system table", "SELECT * FROM system.local", good},
	}
	for i := range good {
		for bit := range 8 {
			flipped := slices.Clone(good)
			flipped[i] ^= 1 << bit
			cases = append(cases, refusal{fmt.Sprintf("bit %d of byte %d flipped", bit, i), tables, flipped})
		}
	}
	for i, tc := range cases {
		c.send(int16(i%1000+10), pagedQuery(tc.query, 3, tc.state, false))
		r := decode(t, c.recv())
		if r.code != wire.CodeInvalid || !strings.Contains(r.message, "not one this server issued") {
			t.Errorf("%s state: answered %+v, want INVALID naming the paging state", tc.what, r)
		}
	}
	// The connection still serves, and the good state still resumes.
	c.send(4, pagedQuery(tables, 3, good, false))
	if p := readPage(t, c.recv()); len(p.rows) != 3 || p.rows[0] != "t03" {
		t.Fatalf("resumed page: %q, want t03 ...", p.rows)
	}
}
