package schema

// This file exports, for the declarative planner (package schema/plan),
// the few rules of this package it must follow exactly; each is a thin
// wrapper, so that the planner decides as Apply does without a copy of
// the rule.

// TypesInDependencyOrder returns k's user types so that every type comes
// after the types it uses, otherwise in name order, as DescribeKeyspace
// lists them. The slice is new and owned by the caller; it walks all
// types of the keyspace.
func TypesInDependencyOrder(k *Keyspace) []*UserType {
	return typesInDependencyOrder(k)
}

// UserTypeRefs returns the names of the user types t refers to directly
// (not through the fields of other user types), each once, in order of
// appearance.
func UserTypeRefs(t Type) []string {
	return typeRefs(nil, t)
}

// DroppedColumnCompatible reports whether ALTER TABLE ... ADD accepts
// column d.Name back with type t, a stored (normalized) type whose user
// types are resolved in k: t must read the values the column held when
// it was dropped. A dropped counter column never comes back (ALTER TABLE
// refuses it whatever the type); that rule is the caller's.
func DroppedColumnCompatible(k *Keyspace, d *DroppedColumn, t Type) bool {
	return valueCompatible(expandUserTypes(t, k, 0), d.Type)
}

// SameViewDefinition reports whether views a and b select the same from
// the same base table: the same base, SELECT * or the same columns with
// the same types, the same primary key and clustering order, and the
// same WHERE relations, in any order. Their properties and ids may
// differ: ALTER MATERIALIZED VIEW changes the properties, while the rest
// is fixed once the view is created. A SELECT * view's other columns are
// the base's, so they are not compared.
func SameViewDefinition(a, b *Table) bool {
	if a.View == nil || b.View == nil || a.View.Base != b.View.Base || a.View.AllColumns != b.View.AllColumns {
		return false
	}
	if len(a.PartitionKey) != len(b.PartitionKey) || len(a.Clustering) != len(b.Clustering) {
		return false
	}
	for i := range a.PartitionKey {
		if a.PartitionKey[i] != b.PartitionKey[i] {
			return false
		}
	}
	for i := range a.Clustering {
		if a.Clustering[i] != b.Clustering[i] {
			return false
		}
	}
	if !a.View.AllColumns && len(a.Columns) != len(b.Columns) {
		return false
	}
	for _, c := range a.Columns {
		d, ok := b.Column(c.Name)
		switch {
		case !ok && (!a.View.AllColumns || isKeyColumn(a, c.Name)):
			return false
		case ok && (d.Kind != c.Kind || !TypesEqual(d.Type, c.Type)):
			return false
		}
	}
	ra, rb := sortedRelations(a.View.Where), sortedRelations(b.View.Where)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if ra[i] != rb[i] {
			return false
		}
	}
	return true
}
