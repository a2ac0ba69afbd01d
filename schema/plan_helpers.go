package schema

import "strings"

// This file exports, for the declarative planner (package schema/plan),
// the few rules of this package it must follow exactly; each is a thin
// wrapper, so that the planner decides as Apply does without a copy of
// the rule.

// DescribeTableWithoutID returns the CREATE TABLE statement of t as
// DescribeTable does, but without the WITH ID clause, for a table whose
// id the cluster is to assign. The properties that followed the id, if
// any, follow the column list after WITH.
func DescribeTableWithoutID(t *Table) string {
	var props strings.Builder
	writeTableProperties(&props, t)
	head := strings.TrimSuffix(DescribeTable(t), ") WITH ID = "+t.ID+props.String()+";\n")
	rest, ok := strings.CutPrefix(props.String(), "\n    AND ")
	if !ok {
		return head + ");\n"
	}
	return head + ") WITH " + rest + ";\n"
}

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
