package plan

import (
	"github.com/metalog/metalog/schema"
)

// inPlaceImpossible is the tests' own account, written apart from the
// planner's, of the objects of both schemas that cannot change in place
// from a to b: the tables whose key (names, types, clustering order)
// differs, whose common columns differ in type or kind, that would change
// between counter and non-counter, or that would re-add a dropped column
// with a type ALTER TABLE refuses, and the tables that would become a
// materialized view; and the types whose fields are not
// a's followed by new ones, or that gain fields while a table's primary
// key uses them. Keys are the names as the planner quotes
// them.
func inPlaceImpossible(a, b schema.Schema) map[string]bool {
	out := map[string]bool{}
	for _, bk := range b.Keyspaces() {
		ak, ok := a.Keyspace(bk.Name)
		if !ok {
			continue
		}
		for _, bt := range bk.UserTypes() {
			at, ok := ak.UserType(bt.Name)
			if !ok {
				continue
			}
			if len(bt.Fields) < len(at.Fields) {
				out[typeName(bk.Name, bt.Name)] = true
				continue
			}
			for i, f := range at.Fields {
				if bt.Fields[i].Name != f.Name || bt.Fields[i].Type.String() != f.Type.String() {
					out[typeName(bk.Name, bt.Name)] = true
				}
			}
			if len(bt.Fields) > len(at.Fields) && inSomeKey(ak, bt.Name) {
				out[typeName(bk.Name, bt.Name)] = true
			}
		}
		for _, bt := range bk.Tables() {
			at, ok := ak.Table(bt.Name)
			switch {
			case !ok:
			case bt.IsView() && !at.IsView():
				// A table cannot become a view; a view's changes (and a
				// view becoming a table) are drops and creations.
				out[tableName(at)] = true
			case bt.IsView() || at.IsView():
			case !tableInPlace(at, bt, bk):
				out[tableName(bt)] = true
			}
		}
	}
	return out
}

// inSomeKey reports whether a partition key column of a table of k uses
// user type name, directly or inside other types of k (ALTER TYPE ADD of
// such a type is refused, Cassandra's and ScyllaDB's rule).
func inSomeKey(k *schema.Keyspace, name string) bool {
	var uses func(refs []string, seen map[string]bool) bool
	uses = func(refs []string, seen map[string]bool) bool {
		for _, ref := range refs {
			if ref == name {
				return true
			}
			if ut, ok := k.UserType(ref); ok && !seen[ref] {
				seen[ref] = true
				for _, f := range ut.Fields {
					if uses(schema.UserTypeRefs(f.Type), seen) {
						return true
					}
				}
			}
		}
		return false
	}
	for _, t := range k.Tables() {
		for _, c := range t.Columns {
			if c.Kind == schema.PartitionKey && uses(schema.UserTypeRefs(c.Type), map[string]bool{}) {
				return true
			}
		}
	}
	return false
}

// keySignature is t's primary key as text: partition key columns, then
// clustering columns with their order.
func keySignature(t *schema.Table) string {
	sig := ""
	for _, name := range t.PartitionKey {
		c, _ := t.Column(name)
		sig += "p " + name + " " + c.Type.String() + "\n"
	}
	for _, cc := range t.Clustering {
		c, _ := t.Column(cc.Name)
		sig += "c " + cc.Name + " " + c.Type.String() + " " + cc.Order.String() + "\n"
	}
	return sig
}

// tableInPlace reports whether a can be altered into b (whose keyspace
// is bk) by ALTER TABLE.
func tableInPlace(a, b *schema.Table, bk *schema.Keyspace) bool {
	if keySignature(a) != keySignature(b) {
		return false
	}
	aCounter := false
	for _, c := range a.Columns {
		aCounter = aCounter || c.Type == schema.TypeCounter
	}
	for _, c := range b.Columns {
		if c.Kind == schema.PartitionKey || c.Kind == schema.Clustering {
			continue
		}
		if old, ok := a.Column(c.Name); ok {
			if old.Type.String() != c.Type.String() || old.Kind != c.Kind {
				return false
			}
			continue
		}
		if (c.Type == schema.TypeCounter) != aCounter {
			return false
		}
		if d, dropped := a.DroppedColumn(c.Name); dropped {
			if c.Type == schema.TypeCounter || !schema.DroppedColumnCompatible(bk, d, c.Type) {
				return false
			}
		}
	}
	return true
}
