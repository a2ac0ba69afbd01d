package schema

import "github.com/metalog/metalog/internal/clip"

// Dropped columns remember, as Cassandra's system_schema.dropped_columns
// does, whether the column was static. Cassandra refuses to re-add a
// dropped column as the other kind ("Cannot re-add previously dropped
// column '%s' of kind %s, incompatible with previous kind %s"): the sstables
// may still hold its old cells, in the static row or in the rows.
//
// Records written before metalog kept the kind have none (DroppedUnknown),
// and a log entry applied before then must keep applying to the same bytes
// on every member, old or new. So ALTER TABLE ... DROP records the kind only
// under Env.Rules >= RulesDroppedKind, which the log entry carries
// (metadata.Command.Rules): an entry logged by an older member, which has
// no rules version, drops as it always did and leaves the kind unknown.
// ADD refuses only a known kind that differs; an unknown one is accepted as
// before. A kind is known only after a DROP under these rules, so an entry
// of older rules never meets one where it applied first: checking the kind
// whatever Env.Rules says changes nothing for those entries.

// Rules versions: what Env.Rules (and a log entry's rules version) can say.
// Each version turns on the behaviour changes listed here, and those of
// the versions below it; a member applies an entry with the rules it names,
// so that members of different builds apply it alike.
const (
	// RulesOriginal is the behaviour of entries logged without a rules
	// version.
	RulesOriginal = 0
	// RulesDroppedKind records the kind (static or regular) of the
	// columns ALTER TABLE ... DROP drops.
	RulesDroppedKind = 1
	// RulesClusterTableIDs derives the ids of tables and views created
	// without WITH ID from the proposer's cluster id and clock as well as
	// the epoch (ClusterTableID), so that two clusters do not give the same
	// id to tables created at the same epoch. Earlier entries keep the ids
	// they gave (TableID).
	RulesClusterTableIDs = 2
	// CurrentRules is the newest rules version this build knows.
	CurrentRules = RulesClusterTableIDs
)

// StatementRules returns the rules version to log st under: the oldest
// that gives it this build's behaviour (RulesDroppedKind for an ALTER
// TABLE ... DROP, RulesClusterTableIDs for a CREATE TABLE, CREATE TABLE
// ... LIKE or CREATE MATERIALIZED VIEW without WITH ID, RulesOriginal for
// every other statement). A member
// logs a request under the highest of its statements', so that an entry
// no rule change touches is logged as an older build logs it, and the
// members of an older build, in a rolling upgrade, keep applying it.
func StatementRules(st Statement) uint64 {
	switch st := st.(type) {
	case *AlterTable:
		if len(st.Drop) > 0 {
			return RulesDroppedKind
		}
	case *CreateTable:
		if st.ID == "" {
			return RulesClusterTableIDs
		}
	case *CreateTableLike:
		if st.ID == "" {
			return RulesClusterTableIDs
		}
	case *CreateView:
		if st.ID == "" {
			return RulesClusterTableIDs
		}
	}
	return RulesOriginal
}

// DroppedKind is what a dropped-column record knows of the column's kind.
// Its numeric values are part of the encoding.
type DroppedKind uint8

// Dropped-column kinds.
const (
	// DroppedUnknown is the kind of a record made before kinds were kept
	// (or under RulesOriginal): ADD takes the column back as either kind.
	DroppedUnknown DroppedKind = iota
	// DroppedRegular is a dropped regular column.
	DroppedRegular
	// DroppedStatic is a dropped static column.
	DroppedStatic
)

// String returns the kind as Cassandra's messages spell it: "REGULAR",
// "STATIC" or "UNKNOWN".
func (k DroppedKind) String() string {
	switch k {
	case DroppedRegular:
		return "REGULAR"
	case DroppedStatic:
		return "STATIC"
	}
	return "UNKNOWN"
}

// droppedKindOf is the record kind of a dropped column of kind c.
func droppedKindOf(c ColumnKind) DroppedKind {
	if c == Static {
		return DroppedStatic
	}
	return DroppedRegular
}

// flagDroppedKinds marks a table encoding whose dropped-column records
// each carry a kind byte after their epoch. It is set only when some
// record's kind is known, so a table whose records have none encodes as
// before kinds existed (the same bytes, so the same digest), and older
// records decode with unknown kinds.
const flagDroppedKinds = 1 << 5

// hasDroppedKinds reports whether some record of dropped (a table's
// dropped columns) knows its kind, which sets flagDroppedKinds.
func hasDroppedKinds(dropped []DroppedColumn) bool {
	for i := range dropped {
		if dropped[i].Kind != DroppedUnknown {
			return true
		}
	}
	return false
}

// droppedKindReason checks that a dropped-column record's kind is one of
// the three.
func droppedKindReason(d *DroppedColumn) string {
	if d.Kind > DroppedStatic {
		return "dropped column " + clip.String(d.Name) + " has an invalid kind"
	}
	return ""
}

// DroppedKindCompatible reports whether ALTER TABLE ... ADD accepts column
// d.Name back as static (or regular when !static): always when d's kind is
// unknown, otherwise only as the kind it was dropped as.
func DroppedKindCompatible(d *DroppedColumn, static bool) bool {
	return d.Kind == DroppedUnknown || (d.Kind == DroppedStatic) == static
}

// droppedKindRefusal is ALTER TABLE ... ADD's refusal of column name, which
// was dropped as d's kind, back as static (or regular), in Cassandra's
// words; "" when d's kind allows it.
func droppedKindRefusal(name string, d *DroppedColumn, static bool) string {
	if DroppedKindCompatible(d, static) {
		return ""
	}
	want := DroppedRegular
	if static {
		want = DroppedStatic
	}
	return "cannot re-add previously dropped column " + clip.String(name) + " of kind " + want.String() +
		", incompatible with previous kind " + d.Kind.String()
}

// DroppedColumnCompatible reports whether ALTER TABLE ... ADD accepts
// column d.Name back with type t, a stored (normalized) type whose user
// types are resolved in k: t must read the values the column held when
// it was dropped. A dropped counter column never comes back (ALTER TABLE
// refuses it whatever the type); that rule is the caller's.
func DroppedColumnCompatible(k *Keyspace, d *DroppedColumn, t Type) bool {
	return valueCompatible(expandUserTypes(t, k, 0), d.Type)
}
