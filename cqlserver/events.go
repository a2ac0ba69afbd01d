package cqlserver

import (
	"errors"
	"strings"

	"github.com/metalog/metalog/cqlserver/internal/wire"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
)

// eventBacklog is how many EVENT frames of a connection may wait for its
// writer; a feed that would queue more closes the connection instead.
const eventBacklog = 1024

// errEventBacklog ends a feed whose connection's writer is backed up.
var errEventBacklog = errors.New("cqlserver: too many events waiting for a slow connection")

// register answers REGISTER: READY, after which the writer sends the
// connection's events; on the first registration for SCHEMA_CHANGE it
// starts the connection's feed, and TOPOLOGY_CHANGE and STATUS_CHANGE
// join it to the Server's membership events (topology.go).
func (c *conn) register(f wire.Frame, m *wire.Register) *pending {
	schemaChanges := false
	var node uint32
	for _, ev := range m.Events {
		switch ev {
		case wire.EventSchemaChange:
			schemaChanges = true
		case wire.EventTopologyChange:
			node |= registeredTopology
		case wire.EventStatusChange:
			node |= registeredStatus
		default:
			return c.errorf(f, wire.CodeProtocol, "unknown event type %q", ev)
		}
	}
	c.node.add(node, c.version)
	c.life.registered.Store(true)
	p := c.reply(f, &wire.Ready{}, nil)
	p.events = true
	if !schemaChanges || c.watching {
		return p
	}
	c.watching = true
	c.srv.wg.Add(1) // the reader's own count keeps Close waiting meanwhile
	go c.watch(c.version)
	return p
}

// watch follows the member's change feed from its current epoch, queueing
// one EVENT frame of version v per schema change, until the connection
// ends. A feed that fails closes the connection: a driver whose events
// stopped would otherwise never learn of later changes.
func (c *conn) watch(v wire.Version) {
	defer c.srv.wg.Done()
	r := c.srv.cfg.Reader
	visible := c.session.visible()
	md, err := r.Read(c.ctx, 0, "", visible)
	if err == nil {
		from := md.Epoch
		err = r.Watch(c.ctx, member.WatchQuery{From: &from, Visible: visible}, func(msg member.WatchMessage) error {
			return c.queueEvents(v, msg)
		})
	}
	if c.ctx.Err() != nil {
		return
	}
	c.srv.cfg.Logger.Warn("cql connection: event feed ended", "remote", c.nc.RemoteAddr().String(), "err", err)
	c.nc.Close()
}

// queueEvents hands the EVENT frames of one feed message to the writer,
// without waiting: errEventBacklog when it has too many already.
func (c *conn) queueEvents(v wire.Version, msg member.WatchMessage) error {
	for _, sc := range feedChanges(msg) {
		select {
		case <-c.ctx.Done():
			return c.ctx.Err()
		default:
		}
		select {
		case c.events <- wire.ResponseFrame(v, wire.EventStream, &wire.SchemaChangeEvent{Change: *sc}, nil):
		default:
			return errEventBacklog
		}
	}
	return nil
}

// feedChanges maps a feed message to Cassandra's schema changes, in order:
// the schema events of its records, or for a resync (the feed fell behind
// the history kept) an UPDATED KEYSPACE per keyspace, so that a driver
// reloads them.
func feedChanges(msg member.WatchMessage) []*wire.SchemaChange {
	var out []*wire.SchemaChange
	switch msg.Type {
	case member.WatchEvents:
		for _, rec := range msg.Records {
			for i := range rec.Events {
				if sc := eventChange(&rec.Events[i]); sc != nil {
					out = append(out, sc)
				}
			}
		}
	case member.WatchResync:
		for _, ks := range msg.Schema.Keyspaces() {
			out = append(out, &wire.SchemaChange{Change: wire.Updated, Target: wire.TargetKeyspace, Keyspace: ks.Name})
		}
	}
	return out
}

// eventChange maps one feed event to Cassandra's schema change, nil for
// an event that has none: a guardrail change, or an index or trigger
// change derived from a statement about its table or keyspace, whose own
// event says as much.
func eventChange(ev *metadata.Event) *wire.SchemaChange {
	if ev.Guardrails != nil || ev.Kind == metadata.KindSetGuardrailsEvent || ev.Keyspace == "" {
		return nil
	}
	_, noun, _ := strings.Cut(ev.Kind, " ")
	if ev.Cause != nil && (noun == "INDEX" || noun == "TRIGGER") {
		return nil
	}
	return changeOf(schema.Result{Kind: ev.Kind, Keyspace: ev.Keyspace, Table: ev.Table, Name: ev.Name, Applied: true})
}
