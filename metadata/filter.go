package metadata

// EventFilter says which events of the history a read or a change feed
// keeps: those about one keyspace (or one of its tables), and of those,
// the ones about a keyspace the caller may see. The zero EventFilter
// keeps every event.
type EventFilter struct {
	// Keyspace and Table, when set, keep only the events that match them
	// (Event.Matches); Table needs Keyspace.
	Keyspace, Table string
	// Visible, when set, keeps only the events about a keyspace it reports
	// true for, the changes of per-keyspace guardrail overrides whose scope
	// it covers (ScopeVisible), and the cluster-level events, which are
	// about no keyspace (the cluster's guardrails): a scoped reader's view,
	// in which the other keyspaces do not exist. Nil: every keyspace.
	Visible func(keyspace string) bool
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
func (f EventFilter) all() bool { return f.Keyspace == "" && f.Visible == nil }

// Keep reports whether f keeps e.
func (f EventFilter) Keep(e *Event) bool {
	if !e.Matches(f.Keyspace, f.Table) {
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
