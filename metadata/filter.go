package metadata

import (
	"strings"
	"time"
)

// EventFilter says which events of the history a read or a change feed
// keeps: those about one keyspace (or one of its tables), and of those,
// the ones about a keyspace the caller may see; for a history read, also
// those made by one principal, within a time range, or of one statement
// kind (an auditor's questions: who changed what, when). The zero
// EventFilter keeps every event.
type EventFilter struct {
	// Keyspace and Table, when set, keep only the events that match them
	// (Event.Matches); Table needs Keyspace.
	Keyspace, Table string
	// Visible, when set, keeps only the events about a keyspace it reports
	// true for, the changes of per-keyspace guardrail overrides whose scope
	// it covers (ScopeVisible), and the cluster-level events, which are
	// about no keyspace (the cluster's guardrails): a scoped reader's scope,
	// in which the other keyspaces do not exist. Nil: every keyspace.
	Visible func(keyspace string) bool
	// Principal, when set, keeps only the changes it made: the records
	// whose Principal is exactly it.
	Principal string
	// Since and Until, when not zero, keep only the changes made at or
	// after Since and before Until, by the records' Time (the proposing
	// member's clock when it received the request). A record of unknown
	// time (logged before times were recorded) is kept by neither.
	Since, Until time.Time
	// Kind, when set, keeps only the events of that statement kind
	// (Event.Kind, e.g. "CREATE TABLE" or KindSetGuardrailsEvent), spelt
	// as NormalizeKind spells it (the caller normalises it once).
	Kind string
}

// NormalizeKind returns a statement kind as events spell it: upper case,
// words separated by one space ("create  table" is "CREATE TABLE").
func NormalizeKind(kind string) string {
	return strings.Join(strings.Fields(strings.ToUpper(kind)), " ")
}

// keepsRecord reports whether f's record-level filters (Principal, Since,
// Until) keep r.
func (f EventFilter) keepsRecord(r *Record) bool {
	if f.Principal != "" && r.Principal != f.Principal {
		return false
	}
	if f.Since.IsZero() && f.Until.IsZero() {
		return true
	}
	if r.Time == 0 {
		return false
	}
	// Compared as times, not as UnixNano, which has no value for a bound
	// outside 1678-2262 (an auditor's "until 2999-01-01").
	at := time.Unix(0, r.Time)
	if !f.Since.IsZero() && at.Before(f.Since) {
		return false
	}
	return f.Until.IsZero() || at.Before(f.Until)
}

// ScopeVisible reports whether a reader that sees the keyspaces visible
// reports true for (nil: all) sees the per-keyspace guardrail override of
// scope: a keyspace name it sees, or a pattern its own scopes hold
// (visible is asked about the pattern itself, which a reader's scope
// "tenant_*" matches and "shop" or "tenant_a" do not). The overrides of
// other scopes still apply to its keyspaces; it is only not shown them.
func ScopeVisible(visible func(keyspace string) bool, scope string) bool {
	return visible == nil || visible(scope)
}

// all reports whether f keeps every event.
func (f EventFilter) all() bool {
	return f.Keyspace == "" && f.Visible == nil && f.Principal == "" && f.Since.IsZero() && f.Until.IsZero() && f.Kind == ""
}

// Keep reports whether f keeps e, by the filters that look at the event
// itself (Keyspace, Table, Visible, Kind); Record.Filter applies the
// others.
func (f EventFilter) Keep(e *Event) bool {
	if !e.Matches(f.Keyspace, f.Table) {
		return false
	}
	if f.Kind != "" && e.Kind != f.Kind {
		return false
	}
	if f.Visible == nil {
		return true
	}
	if scope := e.Scope(); scope != "" {
		return ScopeVisible(f.Visible, scope)
	}
	return e.Keyspace == "" || f.Visible(e.Keyspace)
}

// Visible returns m as a reader that sees only the keyspaces visible
// reports true for sees it: the same metadata with its Schema filtered
// (schema.Schema.Filter), at the cost of one visible call per keyspace
// and no walk of their objects. A nil visible returns m itself. The result
// is for reading and dry runs only: it is never published or applied to.
func (m *ClusterMetadata) Visible(visible func(keyspace string) bool) *ClusterMetadata {
	if visible == nil {
		return m
	}
	s := m.Schema.Filter(visible)
	c := *m
	c.Schema = s
	return &c
}
