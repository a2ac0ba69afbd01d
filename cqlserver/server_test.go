package cqlserver_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// fakeWriter answers Execute with exec.
type fakeWriter struct {
	exec func(ctx context.Context, req member.Request) (metadata.Outcome, error)
}

func (w *fakeWriter) Execute(ctx context.Context, req member.Request) (metadata.Outcome, error) {
	return w.exec(ctx, req)
}

// fakeReader answers Read with a fixed schema.
type fakeReader struct{ s schema.Schema }

func (r *fakeReader) Read(context.Context, uint64, string, func(string) bool) (*metadata.ClusterMetadata, error) {
	return &metadata.ClusterMetadata{Epoch: 1, Schema: r.s}, nil
}

// client is a connection speaking hand-made frames.
type client struct {
	t  *testing.T
	nc net.Conn
	v  wire.Version
}

// start serves a Server over w and a schema made of ddl, and connects to it.
func start(t *testing.T, w cqlserver.Writer, ddl string, mod func(*cqlserver.Config)) *client {
	t.Helper()
	cfg := cqlserver.Config{Writer: w, Reader: &fakeReader{s: schemakit.Build(t, ddl)}}
	if mod != nil {
		mod(&cfg)
	}
	addr := serve(t, cqlserver.New(cfg))
	nc, err := net.DialTimeout("tcp", addr.String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, v: wire.Version4}
}

func (c *client) send(stream int16, m wire.Message) {
	c.t.Helper()
	f := wire.Frame{Header: wire.Header{Version: c.v, Stream: stream, Opcode: m.Opcode()}, Body: m.AppendBody(nil, c.v)}
	if err := wire.WriteFrame(c.nc, f); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads one response, waiting at most ten seconds.
func (c *client) recv() wire.Frame {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := wire.ReadFrame(c.nc, 1<<20)
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

// started sends STARTUP and checks READY.
func (c *client) started() {
	c.t.Helper()
	c.send(1, &wire.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	if f := c.recv(); f.Opcode != wire.OpReady {
		c.t.Fatalf("STARTUP answered with %v: %v", f.Opcode, decodeError(f))
	}
}

// response is what the tests read of a response body.
type response struct {
	warnings []string
	code     wire.ErrorCode // ERROR
	message  string         // ERROR
	detail   []string       // ERROR: ALREADY_EXISTS keyspace and table
	kind     int32          // RESULT
	strings  []string       // RESULT: SetKeyspace, SchemaChange
	rows     int32          // RESULT Rows: the row count
}

func decode(t *testing.T, f wire.Frame) response {
	t.Helper()
	d := wire.NewDecoder(f.Body)
	var r response
	if f.Flags&wire.FlagWarning != 0 {
		r.warnings = d.StringList()
	}
	switch f.Opcode {
	case wire.OpError:
		r.code, r.message = wire.ErrorCode(d.Int()), d.Str()
		if r.code == wire.CodeAlreadyExists {
			r.detail = []string{d.Str(), d.Str()}
		}
	case wire.OpResult:
		r.kind = d.Int()
		switch wire.ResultKind(r.kind) {
		case wire.KindSetKeyspace:
			r.strings = []string{d.Str()}
		case wire.KindSchemaChange:
			r.strings = []string{d.Str(), d.Str(), d.Str()}
			if r.strings[1] != wire.TargetKeyspace {
				r.strings = append(r.strings, d.Str())
			}
		case wire.KindRows:
			r.rows = skipMetadata(d)
		}
	}
	if err := d.Err(); err != nil {
		t.Fatalf("decoding %v: %v", f.Opcode, err)
	}
	return r
}

// rowsBody returns a decoder of the Rows result f after its kind,
// failing the test on an ERROR or another result.
func rowsBody(t *testing.T, f wire.Frame) *wire.Decoder {
	t.Helper()
	if f.Opcode != wire.OpResult {
		t.Fatalf("answered %v: %s", f.Opcode, decodeError(f))
	}
	d := wire.NewDecoder(f.Body)
	if k := wire.ResultKind(d.Int()); k != wire.KindRows {
		t.Fatalf("answered a result of kind %v, want rows", k)
	}
	return d
}

// rowsHead is the metadata of a Rows result, as the tests read it.
type rowsHead struct {
	columns int32    // the column count
	state   []byte   // the paging state, nil when none
	specs   []string // "name type" per column; none with no metadata
}

// readRowsHead reads a Rows result's metadata, after its kind.
func readRowsHead(d *wire.Decoder) rowsHead {
	flags, n := d.Int(), d.Int()
	h := rowsHead{columns: n}
	if flags&0x0002 != 0 {
		h.state = d.Bytes()
	}
	if flags&0x0004 != 0 {
		return h
	}
	if flags&0x0001 != 0 {
		d.Str()
		d.Str()
	}
	for range n {
		if flags&0x0001 == 0 {
			d.Str()
			d.Str()
		}
		name := d.Str()
		h.specs = append(h.specs, name+" "+d.Option().String())
	}
	return h
}

// skipMetadata reads a Rows result's metadata and returns its row count.
func skipMetadata(d *wire.Decoder) int32 {
	readRowsHead(d)
	return d.Int()
}

func decodeError(f wire.Frame) string {
	if f.Opcode != wire.OpError {
		return ""
	}
	d := wire.NewDecoder(f.Body)
	d.Int()
	return d.Str()
}

const shopDDL = `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE shop.orders (id int PRIMARY KEY, note text);`

func noWrites(context.Context, member.Request) (metadata.Outcome, error) {
	return metadata.Outcome{}, errors.New("no writes expected")
}

func TestHandshake(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
	c.send(3, &wire.Options{})
	f := c.recv()
	if f.Opcode != wire.OpSupported || f.Stream != 3 {
		t.Fatalf("OPTIONS answered with %v on stream %d", f.Opcode, f.Stream)
	}
	opts := wire.NewDecoder(f.Body).StringMultimap()
	if got := opts["PROTOCOL_VERSIONS"]; len(got) != 2 || got[0] != "4/v4" || got[1] != "5/v5" {
		t.Errorf("PROTOCOL_VERSIONS %v", got)
	}
	if got := opts["COMPRESSION"]; len(got) != 1 || got[0] != "lz4" {
		t.Errorf("COMPRESSION %v", got)
	}
	c.started()
	c.send(7, &wire.Register{Events: []string{"SCHEMA_CHANGE"}})
	if f := c.recv(); f.Opcode != wire.OpReady || f.Stream != 7 {
		t.Fatalf("REGISTER answered with %v on stream %d", f.Opcode, f.Stream)
	}
	c.send(8, &wire.Query{Query: "USE shop"})
	if r := decode(t, c.recv()); wire.ResultKind(r.kind) != wire.KindSetKeyspace || r.strings[0] != "shop" {
		t.Errorf("USE shop: %+v", r)
	}
	c.send(9, &wire.Query{Query: `USE "nope"`})
	if r := decode(t, c.recv()); r.code != wire.CodeInvalid {
		t.Errorf("USE of a missing keyspace: %+v", r)
	}
	c.send(10, &wire.Query{Query: "SELECT * FROM orders"})
	if r := decode(t, c.recv()); r.code != wire.CodeInvalid {
		t.Errorf("SELECT of data: %+v", r)
	}
}

func TestQueryBeforeStartup(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
	c.send(2, &wire.Query{Query: "SELECT * FROM system.local"})
	if r := decode(t, c.recv()); r.code != wire.CodeProtocol {
		t.Fatalf("QUERY before STARTUP: %+v", r)
	}
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := wire.ReadFrame(c.nc, 1<<20); err == nil {
		t.Fatal("the connection stays open after a protocol error")
	}
}

func TestFrameTooLarge(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, func(cfg *cqlserver.Config) { cfg.MaxFrameBytes = 100 })
	c.started()
	c.send(5, &wire.Query{Query: "CREATE TABLE shop.t (id int PRIMARY KEY, " + string(make([]byte, 200)) + ")"})
	f := c.recv()
	if r := decode(t, f); r.code != wire.CodeProtocol || f.Stream != 5 {
		t.Fatalf("a frame over the limit: %+v on stream %d", r, f.Stream)
	}
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := wire.ReadFrame(c.nc, 1<<20); err == nil {
		t.Fatal("the connection stays open after a frame over the limit")
	}
}

func TestUnsupportedVersion(t *testing.T) {
	c := start(t, &fakeWriter{exec: noWrites}, shopDDL, nil)
	c.v = 3
	c.send(1, &wire.Options{})
	// The answer comes in the client's version, which the codec does
	// not read: read its header by hand.
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var h [wire.HeaderLen + 4]byte
	if _, err := io.ReadFull(c.nc, h[:]); err != nil {
		t.Fatal(err)
	}
	if h[0] != 0x83 || wire.Opcode(h[4]) != wire.OpError || wire.ErrorCode(binary.BigEndian.Uint32(h[9:])) != wire.CodeProtocol {
		t.Fatalf("a v3 frame answered with header % x", h)
	}
}

func TestDDL(t *testing.T) {
	var got member.Request
	w := &fakeWriter{exec: func(_ context.Context, req member.Request) (metadata.Outcome, error) {
		got = req
		return metadata.Outcome{Epoch: 2, Results: []metadata.StatementResult{
			{Result: schema.Result{Kind: "CREATE TABLE", Keyspace: "shop", Table: "items", Applied: true}},
		}, Warnings: []guardrails.Warning{{Guardrail: "tables_warn_threshold", Message: "Guardrail tables_warn_threshold violated"}}}, nil
	}}
	c := start(t, w, shopDDL, nil)
	c.started()
	c.send(2, &wire.Query{Query: "USE shop"})
	c.recv()
	c.send(3, &wire.Query{Query: "CREATE TABLE items (id int PRIMARY KEY)"})
	r := decode(t, c.recv())
	want := []string{wire.Created, wire.TargetTable, "shop", "items"}
	if wire.ResultKind(r.kind) != wire.KindSchemaChange || len(r.strings) != 4 || r.strings[0] != want[0] || r.strings[1] != want[1] || r.strings[2] != want[2] || r.strings[3] != want[3] {
		t.Errorf("CREATE TABLE answered %+v, want a schema change %v", r, want)
	}
	if len(r.warnings) != 1 || r.warnings[0] != "Guardrail tables_warn_threshold violated" {
		t.Errorf("warnings %v", r.warnings)
	}
	if got.Keyspace != "shop" || got.Statements != "CREATE TABLE items (id int PRIMARY KEY)" {
		t.Errorf("Execute got %+v", got)
	}
}

func TestDDLErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		code   wire.ErrorCode
		detail []string
	}{
		{"exists", &schema.Error{Statement: "CREATE TABLE", Object: "shop.orders", Reason: "table already exists", Code: schema.ErrAlreadyExists}, wire.CodeAlreadyExists, []string{"shop", "orders"}},
		{"keyspace exists", &schema.Error{Statement: "CREATE KEYSPACE", Object: `"Shop"`, Reason: "keyspace already exists", Code: schema.ErrAlreadyExists}, wire.CodeAlreadyExists, []string{"Shop", ""}},
		{"not found", &schema.Error{Statement: "DROP TABLE", Object: "shop.x", Reason: "table does not exist", Code: schema.ErrNotFound}, wire.CodeInvalid, nil},
		{"invalid", &schema.Error{Statement: "CREATE TABLE", Object: "shop.x", Reason: "no primary key", Code: schema.ErrInvalid}, wire.CodeInvalid, nil},
		{"deadline", context.DeadlineExceeded, wire.CodeWriteTimeout, nil},
		{"other", errors.New("disk on fire"), wire.CodeServer, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWriter{exec: func(context.Context, member.Request) (metadata.Outcome, error) { return metadata.Outcome{}, tc.err }}
			c := start(t, w, shopDDL, nil)
			c.started()
			c.send(4, &wire.Query{Query: "CREATE TABLE shop.orders (id int PRIMARY KEY)"})
			r := decode(t, c.recv())
			if r.code != tc.code || r.message == "" {
				t.Fatalf("answered %+v, want code %#x", r, tc.code)
			}
			if tc.detail != nil && (r.detail[0] != tc.detail[0] || r.detail[1] != tc.detail[1]) {
				t.Errorf("detail %v, want %v", r.detail, tc.detail)
			}
		})
	}
}

// TestOrderAndCap sends DDL that blocks and a request answered at once:
// the quick answer is not held behind the DDL (answers go out as they
// are known, matched by their stream ids), and no more requests than the
// cap run at once.
func TestOrderAndCap(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex // guards running, most
	running, most := 0, 0
	entered := make(chan struct{}, 10)
	w := &fakeWriter{exec: func(ctx context.Context, req member.Request) (metadata.Outcome, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		mu.Lock()
		running--
		mu.Unlock()
		return metadata.Outcome{}, nil
	}}
	c := start(t, w, shopDDL, func(cfg *cqlserver.Config) { cfg.MaxInFlight = 2 })
	c.started()
	c.send(10, &wire.Query{Query: "CREATE KEYSPACE ka"})
	c.send(11, &wire.Options{})
	if f := c.recv(); f.Stream != 11 {
		t.Fatalf("answer on stream %d, want 11 (OPTIONS) while the DDL on 10 runs", f.Stream)
	}
	for s := int16(12); s < 14; s++ {
		c.send(s, &wire.Query{Query: "CREATE KEYSPACE k" + string(rune('a'+s))})
	}
	for range 2 {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the DDL did not start")
		}
	}
	close(release)
	got := map[int16]bool{}
	for range 3 {
		got[c.recv().Stream] = true
	}
	if !got[10] || !got[12] || !got[13] {
		t.Errorf("answers on streams %v, want 10, 12 and 13", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 2 {
		t.Errorf("%d requests ran at once, the cap is 2", most)
	}
}

// TestCloseWithPendingDDL closes the server while a DDL waits: Close
// cancels it and returns, and no goroutine is left (TestMain).
func TestCloseWithPendingDDL(t *testing.T) {
	entered := make(chan struct{})
	w := &fakeWriter{exec: func(ctx context.Context, req member.Request) (metadata.Outcome, error) {
		close(entered)
		<-ctx.Done()
		return metadata.Outcome{}, ctx.Err()
	}}
	cfg := cqlserver.Config{Writer: w, Reader: &fakeReader{}}
	srv := cqlserver.New(cfg)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	nc, err := net.DialTimeout("tcp", lis.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &client{t: t, nc: nc, v: wire.Version4}
	c.started()
	c.send(2, &wire.Query{Query: "CREATE KEYSPACE x"})
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the DDL did not start")
	}
	srv.Close()
	if err := <-done; !errors.Is(err, cqlserver.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
}
