package metadata

import (
	"strings"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// KindSetGuardrailsEvent is the Kind of the event of a guardrail change.
const KindSetGuardrailsEvent = "SET GUARDRAILS"

// Record is what one epoch changed: the history kept of it. Every epoch
// has exactly one Record. The records of published metadata are never
// modified; readers may keep them.
type Record struct {
	// Epoch is the epoch the change made.
	Epoch uint64
	// Index is the log index of the entry that carried it.
	Index uint64
	// Time is when the proposing member received the request, in Unix
	// nanoseconds; 0 for entries logged before times were recorded.
	Time int64
	// Principal is who asked (see Command.Principal).
	Principal string
	// Role is the scoped grants the change used (see Command.Role); empty
	// for an unscoped caller.
	Role string
	// RequestID is the request's id.
	RequestID string
	// Events are the statements that made the change, in order: one, or
	// several for an atomic request. In a record Feed or Filter returned
	// they are the feed's events: each statement's followed by its
	// derived events (Event.Cause set).
	Events []Event

	// feed holds what Feed returns once it was asked, so that every
	// reader of one record (the watchers of an epoch) gets the same
	// *Record and converts it once; nil but for the records the apply
	// makes (newRecord): Feed builds the result of others on each call.
	feed *feedMemo
	// fed is true for a record whose Events are the feed's already.
	fed bool
}

// Event is one statement of a Record, or a guardrail change.
type Event struct {
	// Kind is the statement kind, e.g. "CREATE TABLE", or
	// KindSetGuardrailsEvent.
	Kind string
	// Keyspace, Table and Name say what changed, as schema.Result does:
	// Table for a table or index, Name for a user type or index (a
	// table's name is in Table).
	Keyspace, Table, Name string
	// Statement is the statement's text as sent; for a guardrail change,
	// the settings asked for (SetGuardrailsText).
	Statement string
	// Changes are the schema changes the statement made, in order; their
	// values are the objects after the change.
	Changes []schema.Change
	// Priors has, for each change, the changed object before it
	// (schema.Prior): what undoing the change puts back.
	Priors []any
	// Guardrails are the settings before and after a guardrail change;
	// nil for a statement.
	Guardrails *GuardrailChange
	// Cause is set on a derived event (Record.Feed): the event of the
	// statement whose change created, altered or dropped this event's
	// object beside the object the statement names (an index CREATE
	// TABLE ... LIKE ... WITH INDEXES copied, a table DROP KEYSPACE
	// dropped). Nil on a statement's own event. A derived event has no
	// Statement, and one change: its object's.
	Cause *Event
}

// GuardrailChange is the before and after of a guardrail change.
type GuardrailChange struct {
	Before, After guardrails.Settings
	// Scope is the keyspace scope of a change of a per-keyspace override
	// (KindSetKeyspaceGuardrails), empty for the cluster's settings; then
	// OverrideBefore and OverrideAfter are the scope's override before and
	// after (empty when there was none, or it was removed), and Before and
	// After the cluster's settings, unchanged.
	Scope                         string
	OverrideBefore, OverrideAfter guardrails.Override
}

// When returns the record's time, the zero Time when it is unknown.
func (r *Record) When() time.Time {
	if r.Time == 0 {
		return time.Time{}
	}
	return time.Unix(0, r.Time).UTC()
}

// newEvent is the event of a statement that applied with diff on the
// schema before it.
func newEvent(before schema.Schema, text string, res schema.Result, diff schema.Diff) Event {
	ev := Event{Kind: res.Kind, Keyspace: res.Keyspace, Table: res.Table, Name: res.Name, Statement: text, Changes: diff.Changes}
	if n := len(diff.Changes); n > 0 {
		ev.Priors = make([]any, n)
		for i, c := range diff.Changes {
			ev.Priors[i] = schema.Prior(before, c)
		}
	}
	return ev
}

// primary is the position in Changes of the change to the object the
// event is about, or -1 for an event without changes: the last one (DROP
// TABLE drops the table's indexes first), except for a table statement
// that also changes other objects, whose event is about the change of its
// own table (CREATE TABLE ... LIKE ... WITH INDEXES puts indexes after
// it; an ALTER TABLE puts the views it reaches before it, and a view is a
// table too: the change's table name tells them apart).
func (e *Event) primary() int {
	i := len(e.Changes) - 1
	if e.Name == "" && e.Table != "" {
		for j := i; j >= 0; j-- {
			c := &e.Changes[j]
			if (c.Op == schema.OpPutTable || c.Op == schema.OpDropTable) && c.Table == e.Table {
				return j
			}
		}
	}
	return i
}

// Before returns the DESCRIBE CQL of the changed object before the change:
// empty when the statement created it. A keyspace's is its CREATE
// KEYSPACE statement alone. For a guardrail change it is every setting, one
// name=value per line.
func (e *Event) Before() string {
	if e.Guardrails != nil {
		if e.Guardrails.Scope != "" {
			return overrideText(e.Guardrails.OverrideBefore)
		}
		return settingsText(e.Guardrails.Before)
	}
	return describeObject(e.BeforeObject())
}

// After returns the DESCRIBE CQL of the changed object after the change:
// empty when the statement dropped it. Like Before otherwise.
func (e *Event) After() string {
	if e.Guardrails != nil {
		if e.Guardrails.Scope != "" {
			return overrideText(e.Guardrails.OverrideAfter)
		}
		return settingsText(e.Guardrails.After)
	}
	return describeObject(e.AfterObject())
}

// BeforeObject returns the object the event is about as it was before
// the change, nil when the change created it (and for a guardrail
// change): a *schema.Keyspace (of which only its own properties are the
// event's: the objects in it have events of their own), a *schema.Table
// (a table with its triggers, or a materialized view), a
// *schema.UserType, a *schema.Index or a *schema.Function (a function or
// an aggregate). The value is shared: it must not be modified.
func (e *Event) BeforeObject() any {
	i := e.primary()
	if i < 0 || e.Guardrails != nil {
		return nil
	}
	return e.Priors[i]
}

// AfterObject returns the object the event is about as it is after the
// change, nil when the change dropped it; like BeforeObject otherwise.
func (e *Event) AfterObject() any {
	i := e.primary()
	if i < 0 || e.Guardrails != nil {
		return nil
	}
	return changeValue(e.Changes[i])
}

// changeValue is the object a put change stores, nil for a drop.
func changeValue(c schema.Change) any {
	switch c.Op {
	case schema.OpPutKeyspace:
		return c.KeyspaceValue
	case schema.OpPutTable:
		return c.TableValue
	case schema.OpPutType:
		return c.TypeValue
	case schema.OpPutIndex:
		return c.IndexValue
	case schema.OpPutFunction:
		return c.FunctionValue
	}
	return nil
}

// describeObject is the DESCRIBE CQL of one object; a keyspace's without
// its objects, a table's with its triggers (which live in the table, so
// that the event of CREATE or DROP TRIGGER shows the change), a
// materialized view's its CREATE MATERIALIZED VIEW statement; empty for
// nil.
func describeObject(v any) string {
	switch v := v.(type) {
	case *schema.Keyspace:
		if v == nil {
			return ""
		}
		return describe.KeyspaceOnly(v)
	case *schema.Table:
		if v == nil {
			return ""
		}
		if v.IsView() {
			return describe.View(v)
		}
		return describe.Table(v) + describe.Triggers(v)
	case *schema.UserType:
		if v != nil {
			return describe.UserType(v)
		}
	case *schema.Index:
		if v != nil {
			return describe.Index(v)
		}
	case *schema.Function:
		if v != nil {
			return describe.Function(v)
		}
	}
	return ""
}

// settingsText is every guardrail setting, one name=value per line.
func settingsText(s guardrails.Settings) string {
	var b strings.Builder
	for _, v := range s.Values() {
		b.WriteString(v.Name)
		b.WriteByte('=')
		b.WriteString(v.Value)
		b.WriteByte('\n')
	}
	return b.String()
}

// Scope returns the keyspace scope of a change of a per-keyspace
// guardrail override, empty for every other event.
func (e *Event) Scope() string {
	if e.Guardrails == nil {
		return ""
	}
	return e.Guardrails.Scope
}

// Matches reports whether the event is about keyspace ks (any of its
// objects, or the keyspace itself) and, when table is not empty, about
// that table or one of its indexes. An empty ks matches every event; a
// guardrail change matches only then.
func (e *Event) Matches(ks, table string) bool {
	if ks == "" {
		return true
	}
	if e.Keyspace != ks {
		return false
	}
	return table == "" || e.Table == table
}

// Filter returns the record as the feed shows it (Feed) with only the
// events f keeps, and false when none is kept: a derived event is kept
// or not on its own, so that a table's filter sees the DROP TABLE of a
// DROP KEYSPACE. The record is not copied when all are kept, and a filter
// that keeps everything (the zero EventFilter) looks at no event.
func (r *Record) Filter(f EventFilter) (*Record, bool) {
	r = r.Feed()
	if f.all() {
		return r, true
	}
	if !f.keepsRecord(r) {
		return nil, false
	}
	var kept []Event
	for i := range r.Events {
		if f.Keep(&r.Events[i]) {
			kept = append(kept, r.Events[i])
		}
	}
	switch len(kept) {
	case 0:
		return nil, false
	case len(r.Events):
		return r, true
	}
	c := *r
	c.Events = kept
	c.feed = nil
	return &c, true
}
