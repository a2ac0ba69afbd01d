package cqlserver_test

import (
	"bufio"
	"testing"
	"time"

	"github.com/metalog/metalog/cqlserver/internal/wire"
)

// TestV4Compression starts a v4 connection with lz4: the frames after
// READY are compressed both ways.
func TestV4Compression(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
	c.send(1, &wire.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"}})
	if f := c.recv(); f.Opcode != wire.OpReady {
		t.Fatalf("STARTUP answered with %v", f.Opcode)
	}
	q := &wire.Query{Query: "SELECT keyspace_name FROM system_schema.keyspaces"}
	f := wire.Frame{Header: wire.Header{Version: wire.Version4, Stream: 2, Opcode: wire.OpQuery}, Body: q.AppendBody(nil, wire.Version4)}
	if err := wire.WriteFrame(c.nc, f.Compress()); err != nil {
		t.Fatal(err)
	}
	f = c.recv()
	if f.Flags&wire.FlagCompression == 0 {
		t.Fatal("the answer is not compressed")
	}
	f, err := f.Decompress(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if r := decode(t, f); wire.ResultKind(r.kind) != wire.KindRows || r.rows != 3 {
		t.Fatalf("SELECT answered %+v, want three rows (shop, system, system_schema)", r)
	}
}

// TestV5Segments starts a v5 connection, with and without lz4: STARTUP
// and READY are bare frames, what follows travels in segments.
func TestV5Segments(t *testing.T) {
	for _, compress := range []bool{false, true} {
		c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
		c.v = wire.Version5
		opts := map[string]string{"CQL_VERSION": "3.0.0"}
		if compress {
			opts["COMPRESSION"] = "lz4"
		}
		c.send(1, &wire.Startup{Options: opts})
		br := bufio.NewReader(c.nc)
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		f, err := wire.ReadFrame(br, 1<<20)
		if err != nil || f.Opcode != wire.OpReady {
			t.Fatalf("STARTUP v5 answered with %v, %v", f.Opcode, err)
		}
		q := &wire.Query{Query: "SELECT * FROM system_schema.tables WHERE keyspace_name = ?",
			Params: wire.QueryParams{Flags: wire.QueryValues, Values: []wire.Value{{Bytes: []byte("shop")}}}}
		f = wire.Frame{Header: wire.Header{Version: wire.Version5, Stream: 2, Opcode: wire.OpQuery}, Body: q.AppendBody(nil, wire.Version5)}
		if err := wire.NewSegmentWriter(c.nc, compress).WriteFrames(f); err != nil {
			t.Fatal(err)
		}
		f, err = wire.NewSegmentReader(br, compress, 1<<20).ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if r := decode(t, f); f.Stream != 2 || wire.ResultKind(r.kind) != wire.KindRows || r.rows != 1 {
			t.Fatalf("compress %v: SELECT answered %+v on stream %d, want one row on 2", compress, r, f.Stream)
		}
	}
}

// TestSelects runs the SELECT shapes the server knows and some it
// refuses, counting rows.
func TestSelects(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL+`CREATE TABLE shop."Items" (id int PRIMARY KEY);`, nil)
	c.started()
	for i, tc := range []struct {
		query  string
		values []string
		rows   int32
		code   wire.ErrorCode
	}{
		{query: "SELECT * FROM system.local WHERE key='local'", rows: 1},
		{query: "select host_id, tokens from SYSTEM.LOCAL", rows: 1},
		{query: "SELECT * FROM system.local WHERE key = 'other'", rows: 0},
		{query: "SELECT * FROM system.peers", rows: 0},
		{query: "SELECT * FROM system.peers_v2;", rows: 0},
		{query: "SELECT * FROM system_schema.keyspaces", rows: 3}, // with system and system_schema
		{query: "SELECT * FROM system_schema.tables WHERE keyspace_name = 'system_schema'", rows: 10},
		{query: "SELECT * FROM system_schema.columns WHERE keyspace_name = 'system' AND table_name = 'local'", rows: 15},
		{query: "SELECT * FROM system_schema.tables WHERE keyspace_name = 'shop'", rows: 2},
		{query: `SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`, values: []string{"shop", "Items"}, rows: 1},
		{query: `SELECT "column_name" FROM system_schema.columns WHERE keyspace_name = 'shop' AND table_name = 'orders'`, rows: 2},
		{query: "SELECT * FROM system_schema.tables WHERE keyspace_name = 'none'", rows: 0},
		{query: "SELECT * FROM system_schema.tables WHERE table_name = 'orders'", code: wire.CodeInvalid},
		{query: "SELECT * FROM system_schema.tables WHERE keyspace_name = ?", code: wire.CodeInvalid}, // no value
		{query: "SELECT nope FROM system.local", code: wire.CodeInvalid},
		{query: "SELECT * FROM system.size_estimates", code: wire.CodeInvalid},
		{query: "SELECT * FROM system_schema.tables WHERE keyspace_name > 'a'", code: wire.CodeInvalid},
		{query: "SELECT count(*) FROM system_schema.tables", code: wire.CodeInvalid},
		{query: "SELECT * FROM shop.orders", code: wire.CodeInvalid},
		{query: "SELECT * FROM system.local LIMIT 1", code: wire.CodeInvalid},
	} {
		q := &wire.Query{Query: tc.query}
		for _, v := range tc.values {
			q.Params.Flags |= wire.QueryValues
			q.Params.Values = append(q.Params.Values, wire.Value{Bytes: []byte(v)})
		}
		c.send(int16(i+2), q)
		r := decode(t, c.recv())
		if r.code != tc.code || tc.code == 0 && (wire.ResultKind(r.kind) != wire.KindRows || r.rows != tc.rows) {
			t.Errorf("%s: answered %+v, want code %#x, %d rows", tc.query, r, tc.code, tc.rows)
		}
	}
}

// TestPrepared prepares a SELECT with a marker and executes it; an
// unknown id is UNPREPARED.
func TestPrepared(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
	c.started()
	c.send(2, &wire.Prepare{Query: "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?"})
	f := c.recv()
	d := wire.NewDecoder(f.Body)
	if f.Opcode != wire.OpResult || wire.ResultKind(d.Int()) != wire.KindPrepared {
		t.Fatalf("PREPARE answered with %v: %s", f.Opcode, decodeError(f))
	}
	id := d.ShortBytes()
	c.send(3, &wire.Execute{ID: id, Params: wire.QueryParams{Flags: wire.QueryValues, Values: []wire.Value{{Bytes: []byte("shop")}}}})
	if r := decode(t, c.recv()); wire.ResultKind(r.kind) != wire.KindRows || r.rows != 1 {
		t.Fatalf("EXECUTE answered %+v, want one row", r)
	}
	c.send(4, &wire.Execute{ID: []byte("unknown id"), Params: wire.QueryParams{}})
	if r := decode(t, c.recv()); r.code != wire.CodeUnprepared {
		t.Fatalf("EXECUTE of an unknown id answered %+v", r)
	}
	c.send(5, &wire.Prepare{Query: "CREATE KEYSPACE x WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"})
	if r := decode(t, c.recv()); r.code != wire.CodeInvalid {
		t.Fatalf("PREPARE of DDL answered %+v", r)
	}
}
