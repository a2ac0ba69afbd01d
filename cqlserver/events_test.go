package cqlserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metalog/metalog/cqlserver"
	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// Watch of the plain fake has no changes: it waits for the end.
func (r *fakeReader) Watch(ctx context.Context, _ member.WatchQuery, _ func(member.WatchMessage) error) error {
	<-ctx.Done()
	return ctx.Err()
}

// scriptedReader is a fakeReader whose feed sends msgs, then waits for
// the end of its context.
type scriptedReader struct {
	fakeReader
	msgs []member.WatchMessage

	mu      sync.Mutex
	feeds   int      // Watch calls
	from    []uint64 // their q.From
	sendErr error    // the first error send returned
	ended   chan struct{}
}

func (r *scriptedReader) Watch(ctx context.Context, q member.WatchQuery, send func(member.WatchMessage) error) error {
	r.mu.Lock()
	r.feeds++
	if q.From != nil {
		r.from = append(r.from, *q.From)
	}
	r.mu.Unlock()
	defer close(r.ended)
	for _, msg := range r.msgs {
		if err := send(msg); err != nil {
			r.mu.Lock()
			r.sendErr = err
			r.mu.Unlock()
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// startScripted serves a Server whose feed sends msgs and connects to it,
// started.
func startScripted(t *testing.T, msgs []member.WatchMessage) (*client, *scriptedReader) {
	t.Helper()
	r := &scriptedReader{msgs: msgs, ended: make(chan struct{})}
	c := start(t, &fakeWriter{exec: noWrites}, "", func(cfg *cqlserver.Config) { cfg.Reader = r })
	c.started()
	return c, r
}

// schemaEvent decodes an EVENT frame of type SCHEMA_CHANGE as "change
// target keyspace [name [args]]".
func schemaEvent(t *testing.T, f wire.Frame) string {
	t.Helper()
	if f.Opcode != wire.OpEvent || f.Stream != wire.EventStream {
		t.Fatalf("got %v on stream %d, want an EVENT on stream %d", f.Opcode, f.Stream, wire.EventStream)
	}
	d := wire.NewDecoder(f.Body)
	if typ := d.Str(); typ != wire.EventSchemaChange {
		t.Fatalf("event type %q", typ)
	}
	parts := []string{d.Str(), d.Str(), d.Str()}
	switch parts[1] {
	case wire.TargetKeyspace:
	case wire.TargetFunction, wire.TargetAggregate:
		parts = append(parts, d.Str(), "["+strings.Join(d.StringList(), "; ")+"]")
	default:
		parts = append(parts, d.Str())
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if d.Remaining() != 0 {
		t.Fatalf("%d bytes after the event", d.Remaining())
	}
	return strings.Join(parts, " ")
}

// ev is a feed event of a statement; derived sets its cause.
func ev(kind, ks, table, name string, derived bool) metadata.Event {
	e := metadata.Event{Kind: kind, Keyspace: ks, Table: table, Name: name}
	if derived {
		e.Cause = &metadata.Event{Kind: "CREATE TABLE", Keyspace: ks, Table: table}
	}
	return e
}

// TestSchemaChangeEvents checks the EVENT frames a registered connection
// gets for a scripted feed: Cassandra's change and target of each event,
// in order, none for guardrails or derived index changes, an UPDATED
// KEYSPACE per keyspace of a resync, and one feed per connection, from
// the member's epoch, ended by the connection's close.
func TestSchemaChangeEvents(t *testing.T) {
	msgs := []member.WatchMessage{
		{Type: member.WatchProgress, Epoch: 1},
		{Type: member.WatchEvents, Epoch: 3, Records: []*metadata.Record{
			{Epoch: 2, Events: []metadata.Event{ev("CREATE KEYSPACE", "shop", "", "", false)}},
			{Epoch: 3, Events: []metadata.Event{
				ev("CREATE TABLE", "shop", "t", "", false),
				ev("CREATE INDEX", "shop", "t", "t_v_idx", true),
				ev("CREATE INDEX", "shop", "t", "t_w_idx", false),
				ev("CREATE MATERIALIZED VIEW", "shop", "mv", "", false),
			}},
		}},
		{Type: member.WatchEvents, Epoch: 9, Records: []*metadata.Record{
			{Epoch: 4, Events: []metadata.Event{ev("ALTER TYPE", "shop", "", "addr", false)}},
			{Epoch: 5, Events: []metadata.Event{ev("CREATE FUNCTION", "shop", "", "plus(int,map<int,text>)", false)}},
			{Epoch: 6, Events: []metadata.Event{{Kind: metadata.KindSetGuardrailsEvent, Guardrails: &metadata.GuardrailChange{}}}},
			{Epoch: 7, Events: []metadata.Event{ev("DROP AGGREGATE", "shop", "", "total()", false), ev("CREATE TRIGGER", "shop", "t", "trg", false)}},
			{Epoch: 8, Events: []metadata.Event{ev("ALTER KEYSPACE", "shop", "", "", false)}},
			{Epoch: 9, Events: []metadata.Event{ev("DROP TABLE", "shop", "t", "", false)}},
		}},
		{Type: member.WatchResync, Epoch: 20, Schema: schemakit.Build(t, `
			CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
			CREATE KEYSPACE b WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};`)},
	}
	want := []string{
		"CREATED KEYSPACE shop",
		"CREATED TABLE shop t",
		"UPDATED TABLE shop t",
		"CREATED TABLE shop mv",
		"UPDATED TYPE shop addr",
		"CREATED FUNCTION shop plus [int; map<int,text>]",
		"DROPPED AGGREGATE shop total []",
		"UPDATED TABLE shop t",
		"UPDATED KEYSPACE shop",
		"DROPPED TABLE shop t",
		"UPDATED KEYSPACE a",
		"UPDATED KEYSPACE b",
	}
	c, r := startScripted(t, msgs)
	c.send(7, &wire.Register{Events: []string{wire.EventTopologyChange, wire.EventSchemaChange, wire.EventStatusChange}})
	if f := c.recv(); f.Opcode != wire.OpReady || f.Stream != 7 {
		t.Fatalf("REGISTER answered with %v on stream %d", f.Opcode, f.Stream)
	}
	var got []string
	for range want {
		got = append(got, schemaEvent(t, c.recv()))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A second registration starts no second feed.
	c.send(8, &wire.Register{Events: []string{wire.EventSchemaChange}})
	if f := c.recv(); f.Opcode != wire.OpReady || f.Stream != 8 {
		t.Fatalf("second REGISTER answered with %v on stream %d", f.Opcode, f.Stream)
	}
	c.send(9, &wire.Options{})
	if f := c.recv(); f.Opcode != wire.OpSupported || f.Stream != 9 {
		t.Fatalf("OPTIONS answered with %v on stream %d", f.Opcode, f.Stream)
	}

	c.nc.Close()
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not end with its connection")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.feeds != 1 || !reflect.DeepEqual(r.from, []uint64{1}) {
		t.Errorf("%d feeds from %v, want one from epoch 1", r.feeds, r.from)
	}
}

// TestRegisterUnknownEvent checks that an unknown event type is a
// protocol error and starts no feed.
func TestRegisterUnknownEvent(t *testing.T) {
	c, r := startScripted(t, nil)
	c.send(3, &wire.Register{Events: []string{wire.EventSchemaChange, "KEYSPACE_CHANGE"}})
	f := c.recv()
	if got := decode(t, f); f.Opcode != wire.OpError || got.code != wire.CodeProtocol {
		t.Fatalf("REGISTER of an unknown event answered with %v %v", f.Opcode, got)
	}
	c.send(4, &wire.Options{})
	if f := c.recv(); f.Opcode != wire.OpSupported {
		t.Fatalf("OPTIONS answered with %v: the connection should go on", f.Opcode)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.feeds != 0 {
		t.Errorf("%d feeds started", r.feeds)
	}
}

// TestEventBacklog checks that a connection that does not read its
// events is closed once too many wait, rather than buffered without
// bound.
func TestEventBacklog(t *testing.T) {
	// Far more bytes of events than the socket buffers hold.
	long := strings.Repeat("x", 200)
	rec := &metadata.Record{Epoch: 2}
	for i := 0; i < 50000; i++ {
		rec.Events = append(rec.Events, ev("ALTER TABLE", "shop", long, "", false))
	}
	c, r := startScripted(t, []member.WatchMessage{{Type: member.WatchEvents, Epoch: 2, Records: []*metadata.Record{rec}}})
	c.send(5, &wire.Register{Events: []string{wire.EventSchemaChange}})
	select {
	case <-r.ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the feed did not end")
	}
	r.mu.Lock()
	sendErr := r.sendErr
	r.mu.Unlock()
	if sendErr == nil || errors.Is(sendErr, context.Canceled) {
		t.Fatalf("send returned %v, want the backlog's error", sendErr)
	}
	// The connection is closed: the client reads what was sent, then EOF.
	c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, c.nc)
	if err != nil {
		t.Fatalf("after %d bytes: %v, want EOF", n, err)
	}
	if want := int64(len(long)) * 50000; n >= want {
		t.Errorf("read %d bytes, all %d of the events: nothing was dropped", n, want)
	}
}

// TestSchemaChangeEventsV5 checks that events ride in the connection's
// framing: lz4 compressed v5 segments.
func TestSchemaChangeEventsV5(t *testing.T) {
	r := &scriptedReader{ended: make(chan struct{}), msgs: []member.WatchMessage{{Type: member.WatchEvents, Epoch: 2,
		Records: []*metadata.Record{{Epoch: 2, Events: []metadata.Event{ev("CREATE TYPE", "shop", "", "addr", false)}}}}}}
	c := start(t, &fakeWriter{exec: noWrites}, "", func(cfg *cqlserver.Config) { cfg.Reader = r })
	c.v = wire.Version5
	c.send(1, &wire.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"}})
	br := bufio.NewReader(c.nc)
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if f, err := wire.ReadFrame(br, 1<<20); err != nil || f.Opcode != wire.OpReady {
		t.Fatalf("STARTUP v5 answered with %v, %v", f.Opcode, err)
	}
	reg := &wire.Register{Events: []string{wire.EventSchemaChange}}
	f := wire.Frame{Header: wire.Header{Version: wire.Version5, Stream: 2, Opcode: wire.OpRegister}, Body: reg.AppendBody(nil, wire.Version5)}
	if err := wire.NewSegmentWriter(c.nc, true).WriteFrames(f); err != nil {
		t.Fatal(err)
	}
	sr := wire.NewSegmentReader(br, true, 1<<20)
	if f, err := sr.ReadFrame(); err != nil || f.Opcode != wire.OpReady || f.Stream != 2 {
		t.Fatalf("REGISTER answered with %v on stream %d, %v", f.Opcode, f.Stream, err)
	}
	f, err := sr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := schemaEvent(t, f), "CREATED TYPE shop addr"; got != want || f.Version != wire.Version5 {
		t.Errorf("event %q of version %d, want %q of version 5", got, f.Version, want)
	}
}
