package schema

import (
	"slices"
	"strconv"

	"github.com/metalog/metalog/internal/clip"
)

// AdmitChange checks the admission rules that depend on what a statement
// of a new request does to the schema: st, applied to before, made after
// with result res. Like Admit it runs on the member that receives the
// request, before it is proposed, never when the log applies an entry, so
// that entries logged before a rule replay as they applied. The rules:
//
//   - a table with counters has no default_time_to_live (Cassandra's
//     rule, for CREATE TABLE, CREATE TABLE LIKE and ALTER TABLE WITH);
//   - no field is added to a user type used in the partition key of a
//     table, directly or inside other types (Cassandra's and ScyllaDB's
//     rule: a partition key is hashed from its bytes, and a new field
//     changes them). Renaming a field changes no bytes and is allowed, as
//     is adding one to a type used only in clustering columns;
//   - no secondary index is created on a column whose user type holds a
//     duration (Cassandra's rule; a direct duration Apply refuses);
//   - no column of a non-frozen user type is dropped (Cassandra's rule:
//     its type cannot be kept as a frozen tuple among the dropped columns).
func AdmitChange(before, after Schema, st Statement, res Result) error {
	if !res.Applied {
		return nil
	}
	switch st.(type) {
	case *CreateTable, *CreateTableLike, *AlterTable:
		if err := counterTTL(after, st, res); err != nil {
			return err
		}
	}
	switch st := st.(type) {
	case *CreateIndex:
		k, ok := before.Keyspace(res.Keyspace)
		if !ok {
			return nil
		}
		if t, ok := k.Table(res.Table); ok {
			if c, ok := t.Column(st.Target.Column); ok && usesDurationThroughTypes(k, c.Type, 0) {
				return newError(st.Kind(), st.objectIn(res.Keyspace), ErrInvalid,
					"secondary indexes are not supported on UDTs containing durations (column "+clip.String(c.Name)+")")
			}
		}
	case *AlterTable:
		k, ok := before.Keyspace(res.Keyspace)
		if !ok {
			return nil
		}
		if t, ok := k.Table(res.Table); ok {
			for _, name := range st.Drop {
				if c, ok := t.Column(name); ok {
					if ref, ok := c.Type.(UserTypeRef); ok {
						return newError(st.Kind(), t.QualifiedName(), ErrInvalid,
							"cannot drop non-frozen column "+clip.String(c.Name)+" of user type "+clip.String(ref.Name)+
								" (Cassandra refuses it: a dropped column's type is kept as a frozen tuple, which a non-frozen user type is not)")
					}
				}
			}
		}
	case *AlterType:
		k, ok := before.Keyspace(res.Keyspace)
		if !ok || st.Add == nil {
			return nil
		}
		if old, ok := k.UserType(res.Name); ok {
			if ak, ok := after.Keyspace(res.Keyspace); ok {
				if now, ok := ak.UserType(res.Name); ok && len(now.Fields) == len(old.Fields) {
					return nil // ADD IF NOT EXISTS of a field it has
				}
			}
		}
		if table, column := KeyUserOf(k, res.Name); table != "" {
			return newError(st.Kind(), qualify(res.Keyspace, res.Name), ErrInvalid,
				"cannot add field "+clip.String(st.Add.Name)+": the type is used in the partition key column "+clip.String(column)+" of table "+
					clip.String(qualify(k.Name, table))+", and a partition key is hashed from its bytes, which a new field changes "+
					"(Cassandra and ScyllaDB refuse it; create a new type and table instead)")
		}
	}
	return nil
}

// counterTTL refuses a table with counters and a default_time_to_live, as
// st (a CREATE TABLE, CREATE TABLE LIKE or ALTER TABLE) left it in after.
func counterTTL(after Schema, st Statement, res Result) error {
	t, ok := after.Table(res.Keyspace, res.Table)
	if ok && isCounterTable(t) {
		if ttl, err := strconv.ParseInt(t.Options()["default_time_to_live"], 10, 64); err == nil && ttl > 0 {
			return newError(st.Kind(), t.QualifiedName(), ErrInvalid, "cannot set default_time_to_live on a table with counters (Cassandra refuses it: counters cannot expire)")
		}
	}
	return nil
}

// KeyUserOf returns the first table of k, and its column, whose partition
// key uses user type name, directly or through other types; "" when none.
// Such a type gains no fields (AdmitChange), so the planner recreates it.
func KeyUserOf(k *Keyspace, name string) (table, column string) {
	// The tables that can use it are the direct users of name or of a
	// type that holds it, found through the users index rather than by a
	// walk of the keyspace's tables.
	tables := map[string]bool{}
	seen := map[string]bool{}
	var visit func(typ string)
	visit = func(typ string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		k.eachTypeUser(typ, func(kind byte, user string) bool {
			switch kind {
			case 't':
				tables[user] = true
			case 'u':
				visit(user)
			}
			return true
		})
	}
	visit(name)
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t, ok := k.Table(n)
		if !ok {
			continue
		}
		for i := range t.Columns {
			c := &t.Columns[i]
			if c.Kind != PartitionKey {
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
