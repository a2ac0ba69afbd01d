package schema

import "strconv"

// AdmitChange checks the admission rules that depend on what a statement
// of a new request does to the schema: st, applied to before, made after
// with result res. Like Admit it runs on the member that receives the
// request, before it is proposed, never when the log applies an entry, so
// that entries logged before a rule replay as they applied. The rules:
//
//   - a table with counters has no default_time_to_live (Cassandra's
//     rule, for CREATE TABLE, CREATE TABLE LIKE and ALTER TABLE WITH);
//   - a user type used in the primary key of a table is not altered
//     (ScyllaDB's rule: a key compares by its fields, so adding or
//     renaming one changes the keys of the rows stored).
func AdmitChange(before, after Schema, st Statement, res Result) error {
	if !res.Applied {
		return nil
	}
	switch st := st.(type) {
	case *CreateTable, *CreateTableLike, *AlterTable:
		t, ok := after.Table(res.Keyspace, res.Table)
		if ok && isCounterTable(t) {
			if ttl, err := strconv.ParseInt(t.Options["default_time_to_live"], 10, 64); err == nil && ttl > 0 {
				return newError(st.Kind(), t.QualifiedName(), ErrInvalid, "cannot set default_time_to_live on a table with counters (Cassandra refuses it: counters cannot expire)")
			}
		}
	case *AlterType:
		k, ok := before.Keyspace(res.Keyspace)
		if !ok {
			return nil
		}
		if table, column := KeyUserOf(k, res.Name); table != "" {
			return newError(st.Kind(), qualify(res.Keyspace, res.Name), ErrInvalid,
				"the type is part of the primary key of table "+Clip(qualify(k.Name, table))+" (column "+Clip(column)+
					"): altering it would change how the keys of stored rows compare (ScyllaDB refuses it; create a new type and table instead)")
		}
	}
	return nil
}

// KeyUserOf returns the first table of k, and its column, whose primary
// key uses user type name, directly or through other types; "" when none.
// Such a type is not altered (AdmitChange), so the planner recreates it.
func KeyUserOf(k *Keyspace, name string) (table, column string) {
	for _, t := range k.Tables() {
		for i := range t.Columns {
			c := &t.Columns[i]
			if c.Kind != PartitionKey && c.Kind != Clustering {
				continue
			}
			for _, ref := range typeRefs(nil, c.Type) {
				if reaches(k, ref, name, map[string]bool{}) {
					return t.Name, c.Name
				}
			}
		}
	}
	return "", ""
}
