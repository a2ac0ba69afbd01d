package cqlserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// schemaReader answers Read with a fixed schema.
type schemaReader struct {
	noFeed
	md *metadata.ClusterMetadata
}

// noFeed is the Watch of the Readers of tests that register for no
// events: a feed asked of it is an error.
type noFeed struct{}

func (noFeed) Watch(context.Context, member.WatchQuery, func(member.WatchMessage) error) error {
	return fmt.Errorf("no change feed expected")
}

func (r schemaReader) Read(context.Context, uint64, string, func(string) bool) (*metadata.ClusterMetadata, error) {
	return r.md, nil
}

// refuseWrites is a Writer the allocation tests never call.
type refuseWrites struct{}

func (refuseWrites) Execute(context.Context, member.Request) (metadata.Outcome, error) {
	return metadata.Outcome{}, fmt.Errorf("no writes expected")
}

// pageAllocs returns the allocations of answering, through selectQuery,
// the second page of size rows of text over keyspace shop with n tables
// of three columns.
func pageAllocs(t *testing.T, n, size int, text string) float64 {
	t.Helper()
	var b strings.Builder
	b.WriteString("CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n")
	for i := range n {
		fmt.Fprintf(&b, "CREATE TABLE shop.t%05d (id int, at int, note text, PRIMARY KEY (id, at));\n", i)
	}
	s, _ := schemakit.Exec(t, schema.Schema{}, b.String())
	srv := New(Config{Writer: refuseWrites{}, Reader: schemaReader{md: &metadata.ClusterMetadata{Epoch: 1, Schema: s}}})
	if srv.cfgErr != nil {
		t.Fatal(srv.cfgErr)
	}
	c := &conn{srv: srv, version: wire.Version4}
	f := wire.Frame{Header: wire.Header{Version: wire.Version4, Stream: 1, Opcode: wire.OpQuery}}
	params := wire.QueryParams{Flags: wire.QueryPageSize, PageSize: int32(size)}
	first := c.selectQuery(f, text, &params, "")
	d := wire.NewDecoder(first.frame.Body)
	if f.Opcode = first.frame.Opcode; f.Opcode != wire.OpResult || wire.ResultKind(d.Int()) != wire.KindRows {
		t.Fatalf("%s answered %v", text, f.Opcode)
	}
	if flags := d.Int(); flags&0x0002 == 0 {
		t.Fatalf("%s: first page of %d tables has no more pages", text, n)
	}
	d.Int()
	params.Flags |= wire.QueryPagingState
	params.PagingState = d.Bytes()
	f.Opcode = wire.OpQuery
	return testing.AllocsPerRun(50, func() {
		if p := c.selectQuery(f, text, &params, ""); p.frame.Opcode != wire.OpResult {
			t.Fatalf("%s: second page answered %v", text, p.frame.Opcode)
		}
	})
}

// TestPageAllocsFlat checks that a page costs as many allocations over
// eight times the tables: paging never builds the whole result.
func TestPageAllocsFlat(t *testing.T) {
	const n, size = 40, 5
	for _, text := range []string{
		"SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'shop'",
		"SELECT * FROM system_schema.tables",
		"SELECT * FROM system_schema.columns WHERE keyspace_name = 'shop'",
		"SELECT column_name, type FROM system_schema.columns",
	} {
		small, large := pageAllocs(t, n, size, text), pageAllocs(t, 8*n, size, text)
		t.Logf("%s: %v allocations a page at %d tables, %v at %d", text, small, n, large, 8*n)
		if large > small {
			t.Errorf("%s: %v allocations a page at %d tables, %v at %d: not flat", text, small, n, large, 8*n)
		}
	}
}
