package metadata

import (
	"sync"

	"github.com/metalog/metalog/schema"
)

// feedMemo is the result of a record's Feed, built once.
type feedMemo struct {
	once sync.Once
	rec  *Record
}

// newFeedMemo is the memo of a record made by the apply: one the history
// keeps in memory, which every feed of its epoch reads. A record decoded
// from the store is read afresh for each reader and has none.
func newFeedMemo() *feedMemo { return new(feedMemo) }

// Feed returns the record as the change feed and the history show it:
// each statement's event followed by a derived event (Event.Cause set)
// for every further object its change created, altered or dropped, so
// that a consumer who applies every event's after image to a mirror of
// the objects keeps an exact copy of the schema. The derived events of
// a statement are, in this order:
//
//   - CREATE TABLE ... LIKE ... WITH INDEXES: a CREATE INDEX per index
//     copied;
//   - DROP TABLE: a DROP INDEX per index of the table (its triggers live
//     in the table and go with it: the table's before image lists them);
//   - ALTER TABLE that reaches the table's materialized views (ADD,
//     RENAME, a column's mask): an ALTER MATERIALIZED VIEW per view;
//   - DROP KEYSPACE: a DROP of every object it held: indexes, views,
//     tables, aggregates, functions, then user types.
//
// An ALTER TYPE changes only its type: columns refer to a user type by
// name, so their tables are unchanged.
//
// Feed returns r itself when no event has derived ones, and otherwise the
// same *Record on every call for a record the apply made (the newest
// epochs', which every feed reads from memory);
// the derived events are built on the first call, not on the apply path,
// and share the objects of r's changes. Its cost is O(objects changed).
func (r *Record) Feed() *Record {
	if r.fed || !r.hasDerived() {
		return r
	}
	if r.feed == nil {
		return r.expand()
	}
	r.feed.once.Do(func() { r.feed.rec = r.expand() })
	return r.feed.rec
}

// hasDerived reports whether an event of r may have derived events: one
// with more than one change, or a DROP KEYSPACE.
func (r *Record) hasDerived() bool {
	for i := range r.Events {
		c := r.Events[i].Changes
		if len(c) > 1 || len(c) == 1 && c[0].Op == schema.OpDropKeyspace {
			return true
		}
	}
	return false
}

// expand builds the record Feed returns.
func (r *Record) expand() *Record {
	c := *r
	c.feed, c.fed = nil, true
	c.Events = make([]Event, 0, len(r.Events)+1)
	for i := range r.Events {
		e := &r.Events[i]
		c.Events = append(c.Events, *e)
		c.Events = e.appendDerived(c.Events)
	}
	return &c
}

// appendDerived appends the derived events of e (see Record.Feed) to out.
func (e *Event) appendDerived(out []Event) []Event {
	p := e.primary()
	for i, c := range e.Changes {
		if i != p {
			out = append(out, derivedEvent(e, c, e.Priors[i]))
		}
	}
	if p >= 0 && e.Changes[p].Op == schema.OpDropKeyspace {
		if k, ok := e.Priors[p].(*schema.Keyspace); ok && k != nil {
			out = appendKeyspaceDrops(out, e, k)
		}
	}
	return out
}

// appendKeyspaceDrops appends a derived drop of every object of k, which
// e dropped: dependents before what they depend on (an index before its
// table, a view before its base, an aggregate before its functions).
func appendKeyspaceDrops(out []Event, e *Event, k *schema.Keyspace) []Event {
	drop := func(c schema.Change, prior any) {
		c.Keyspace = k.Name
		out = append(out, derivedEvent(e, c, prior))
	}
	for _, ix := range k.Indexes() {
		drop(schema.Change{Op: schema.OpDropIndex, Table: ix.Table, Name: ix.Name}, ix)
	}
	tables := k.Tables()
	for _, views := range []bool{true, false} {
		for _, t := range tables {
			if t.IsView() == views {
				drop(schema.Change{Op: schema.OpDropTable, Table: t.Name}, t)
			}
		}
	}
	functions := k.Functions()
	for _, aggregates := range []bool{true, false} {
		for _, f := range functions {
			if (f.Kind == schema.AggregateFunction) == aggregates {
				drop(schema.Change{Op: schema.OpDropFunction, Name: f.Signature()}, f)
			}
		}
	}
	for _, ut := range k.UserTypes() {
		drop(schema.Change{Op: schema.OpDropType, Name: ut.Name}, ut)
	}
	return out
}

// derivedEvent is the event of change c, with prior the object before it,
// that cause's statement made beside its own object. Its Keyspace, Table
// and Name follow the statement events' rule (Table for a table, a view
// or an index's table, Name for a type, an index or a function's
// signature).
func derivedEvent(cause *Event, c schema.Change, prior any) Event {
	ev := Event{Kind: derivedKind(c, prior), Keyspace: c.Keyspace, Table: c.Table, Cause: cause,
		Changes: []schema.Change{c}, Priors: []any{prior}}
	switch c.Op {
	case schema.OpPutType, schema.OpDropType, schema.OpPutIndex, schema.OpDropIndex, schema.OpPutFunction, schema.OpDropFunction:
		ev.Name = c.Name
	}
	return ev
}

// derivedKind names what a derived change did as a statement would:
// "CREATE INDEX", "ALTER MATERIALIZED VIEW", "DROP AGGREGATE"; a put of
// an object that existed is an ALTER.
func derivedKind(c schema.Change, prior any) string {
	verb := "CREATE "
	switch {
	case isDrop(c.Op):
		verb = "DROP "
	case prior != nil:
		verb = "ALTER "
	}
	return verb + objectKind(c, prior)
}

// isDrop reports whether op deletes an object.
func isDrop(op schema.ChangeOp) bool {
	switch op {
	case schema.OpDropKeyspace, schema.OpDropTable, schema.OpDropType, schema.OpDropIndex, schema.OpDropFunction:
		return true
	}
	return false
}

// objectKind is the CQL name of the kind of c's object: "TABLE",
// "MATERIALIZED VIEW", "AGGREGATE" and so on.
func objectKind(c schema.Change, prior any) string {
	v := changeValue(c)
	if v == nil {
		v = prior
	}
	switch v := v.(type) {
	case *schema.Table:
		if v != nil && v.IsView() {
			return "MATERIALIZED VIEW"
		}
		return "TABLE"
	case *schema.Function:
		if v != nil && v.Kind == schema.AggregateFunction {
			return "AGGREGATE"
		}
		return "FUNCTION"
	case *schema.UserType:
		return "TYPE"
	case *schema.Index:
		return "INDEX"
	}
	return "KEYSPACE"
}
