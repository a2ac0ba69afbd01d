package cqlserver

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/cqlserver/internal/systemschema"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// FuzzPagingState decodes arbitrary bytes as a paging state: a state is
// refused with a queryError or decodes to one that encodes to the same
// bytes.
func FuzzPagingState(f *testing.F) {
	for _, p := range []pagingState{
		{table: "tables", keyspace: "shop", after: systemschema.Position{Keyspace: "shop", Object: "orders"}},
		{table: "columns", after: systemschema.Position{Keyspace: "a", Object: "t", Item: "c"}},
		{table: "functions", keyspace: "k", name: "f", after: systemschema.Position{Keyspace: "k", Object: "f(int, text)"}},
	} {
		b, err := p.encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{})
	f.Add([]byte{pagingVersion, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePagingState(b)
		if err != nil {
			var qe *queryError
			if !errors.As(err, &qe) || !strings.Contains(qe.msg, "not one this server issued") {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		again, err := p.encode()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x (%v)", b, p, again, err)
		}
	})
}

// swapReader answers Read with the schema last stored in it.
type swapReader struct {
	noFeed
	md *metadata.ClusterMetadata
}

func (r *swapReader) Read(context.Context, uint64, string, func(string) bool) (*metadata.ClusterMetadata, error) {
	return r.md, nil
}

// TestPagingAcrossSchemaChange changes the schema between two pages: the
// next page resumes from the position in the new schema, so a table
// created or dropped before it is not seen and one after it is.
func TestPagingAcrossSchemaChange(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE shop.b (id int PRIMARY KEY); CREATE TABLE shop.d (id int PRIMARY KEY); CREATE TABLE shop.f (id int PRIMARY KEY);
CREATE TABLE shop.h (id int PRIMARY KEY); CREATE TABLE shop.j (id int PRIMARY KEY);`)
	r := &swapReader{md: &metadata.ClusterMetadata{Epoch: 1, Schema: s}}
	c := &conn{srv: New(Config{Writer: refuseWrites{}, Reader: r}), version: wire.Version4}
	f := wire.Frame{Header: wire.Header{Version: wire.Version4, Stream: 1, Opcode: wire.OpQuery}}
	text := "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'shop'"
	params := wire.QueryParams{Flags: wire.QueryPageSize | wire.QuerySkipMetadata, PageSize: 2}
	var got []string
	for i := 0; ; i++ {
		rows, state := namesPage(t, c.selectQuery(f, text, &params, "").frame)
		got = append(got, rows...)
		if state == nil {
			break
		}
		if i == 0 {
			s, _ = schemakit.Exec(t, s, `DROP TABLE shop.b; CREATE TABLE shop.c (id int PRIMARY KEY);
DROP TABLE shop.f; CREATE TABLE shop.e (id int PRIMARY KEY); CREATE TABLE shop.k (id int PRIMARY KEY);`)
			r.md = &metadata.ClusterMetadata{Epoch: 2, Schema: s}
		}
		params.Flags |= wire.QueryPagingState
		params.PagingState = state
	}
	if want := "b d e h j k"; strings.Join(got, " ") != want {
		t.Fatalf("pages across the change read %q, want %q", got, want)
	}
}

// namesPage reads the one-column text rows and the paging state of a
// Rows result without metadata.
func namesPage(t *testing.T, f wire.Frame) ([]string, []byte) {
	t.Helper()
	d := wire.NewDecoder(f.Body)
	if f.Opcode != wire.OpResult || wire.ResultKind(d.Int()) != wire.KindRows {
		t.Fatalf("answered %v", f.Opcode)
	}
	flags, _ := d.Int(), d.Int()
	var state []byte
	if flags&0x0002 != 0 {
		state = d.Bytes()
	}
	var rows []string
	for n := d.Int(); n > 0; n-- {
		rows = append(rows, string(d.Bytes()))
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, state
}
