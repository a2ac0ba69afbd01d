package metadata

import (
	"strings"
	"time"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
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
	// several for an atomic request.
	Events []Event
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
// that also puts indexes after its table (CREATE TABLE ... LIKE ... WITH
// INDEXES), whose event is about the table.
func (e *Event) primary() int {
	i := len(e.Changes) - 1
	if e.Name == "" && e.Table != "" {
		for j := i; j >= 0; j-- {
			if op := e.Changes[j].Op; op == schema.OpPutTable || op == schema.OpDropTable {
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
	i := e.primary()
	if i < 0 {
		return ""
	}
	return describeObject(e.Priors[i])
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
	i := e.primary()
	if i < 0 {
		return ""
	}
	c := e.Changes[i]
	switch c.Op {
	case schema.OpPutKeyspace:
		return describeObject(c.KeyspaceValue)
	case schema.OpPutTable:
		return describeObject(c.TableValue)
	case schema.OpPutType:
		return describeObject(c.TypeValue)
	case schema.OpPutIndex:
		return describeObject(c.IndexValue)
	case schema.OpPutFunction:
		return describeObject(c.FunctionValue)
	}
	return ""
}

// describeObject is the DESCRIBE CQL of one object; a keyspace's without
// its objects, a table's with its triggers (which live in the table, so
// that the event of CREATE or DROP TRIGGER shows the change), a
// materialized view's its CREATE MATERIALIZED VIEW statement.
func describeObject(v any) string {
	switch v := v.(type) {
	case *schema.Keyspace:
		return schema.DescribeKeyspaceOnly(v)
	case *schema.Table:
		if v.IsView() {
			return schema.DescribeView(v)
		}
		return schema.DescribeTable(v) + schema.DescribeTriggers(v)
	case *schema.UserType:
		return schema.DescribeUserType(v)
	case *schema.Index:
		return schema.DescribeIndex(v)
	case *schema.Function:
		return schema.DescribeFunction(v)
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

// Filter returns the record with only the events f keeps, and false when
// none is kept. The record is not copied when all are kept, and a filter
// that keeps everything (the zero EventFilter) looks at no event.
func (r *Record) Filter(f EventFilter) (*Record, bool) {
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
	return &c, true
}
