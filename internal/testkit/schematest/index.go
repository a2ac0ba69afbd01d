package schematest

import (
	"github.com/metalog/metalog/schema"
	"pgregory.net/rapid"
)

// CreateIndex draws a CREATE INDEX on a column of table tbl that Cassandra
// can index, with a target suited to the column's type (values, keys or
// entries of a collection, full of a frozen one), sometimes a storage-
// attached (SAI) index with options, named from names (or by a fresh
// Name when names is empty). It returns nil when no column of tbl can be
// indexed (a counter table, or only the single partition key column).
// Apply accepts it unless an index of that name exists or one of the same
// target and class does.
func CreateIndex(t *rapid.T, tbl *schema.Table, names []string) *schema.CreateIndex {
	var cols []schema.Column
	for _, c := range tbl.Columns {
		if c.Type == schema.TypeCounter {
			return nil
		}
		if indexable(tbl, c) {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	c := rapid.SampledFrom(cols).Draw(t, "indexed column")
	st := &schema.CreateIndex{Keyspace: tbl.Keyspace, Table: tbl.Name, Target: schema.IndexTarget{Column: c.Name, Kind: targetKind(t, c.Type)}}
	if len(names) > 0 {
		st.Name = rapid.SampledFrom(names).Draw(t, "index name")
	} else {
		st.Name = rapid.StringMatching(`[a-zA-Z][a-zA-Z0-9_]{0,10}`).Draw(t, "index name")
	}
	if rapid.IntRange(0, 3).Draw(t, "sai") == 0 {
		st.Class = rapid.SampledFrom([]string{"sai", "StorageAttachedIndex", schema.SAIIndexClass}).Draw(t, "class")
		st.Custom = rapid.Bool().Draw(t, "custom")
		if rapid.Bool().Draw(t, "index options") {
			st.Options = map[string]string{"case_sensitive": rapid.SampledFrom([]string{"true", "false"}).Draw(t, "case")}
		}
	}
	return st
}

// indexable reports whether CREATE INDEX accepts column c of tbl: not the
// only partition key column, no duration, not a non-frozen user type.
func indexable(tbl *schema.Table, c schema.Column) bool {
	if c.Kind == schema.PartitionKey && len(tbl.PartitionKey) == 1 {
		return false
	}
	if _, udt := c.Type.(schema.UserTypeRef); udt {
		return false
	}
	return !hasDuration(c.Type)
}

// targetKind draws what of a column of type typ an index covers.
func targetKind(t *rapid.T, typ schema.Type) schema.TargetKind {
	switch typ := typ.(type) {
	case schema.ListType, schema.SetType:
		return rapid.SampledFrom([]schema.TargetKind{schema.TargetSimple, schema.TargetValues}).Draw(t, "target")
	case schema.MapType:
		return rapid.SampledFrom([]schema.TargetKind{schema.TargetValues, schema.TargetKeys, schema.TargetEntries}).Draw(t, "target")
	case schema.FrozenType:
		switch typ.Inner.(type) {
		case schema.ListType, schema.SetType, schema.MapType:
			return schema.TargetFull
		}
	}
	return schema.TargetSimple
}

// hasDuration reports whether typ is or holds a duration (not through
// user types, as CREATE INDEX checks).
func hasDuration(typ schema.Type) bool {
	switch typ := typ.(type) {
	case schema.NativeType:
		return typ == schema.TypeDuration
	case schema.ListType:
		return hasDuration(typ.Elem)
	case schema.SetType:
		return hasDuration(typ.Elem)
	case schema.MapType:
		return hasDuration(typ.Key) || hasDuration(typ.Value)
	case schema.FrozenType:
		return hasDuration(typ.Inner)
	case schema.TupleType:
		for _, e := range typ.Elems {
			if hasDuration(e) {
				return true
			}
		}
	case schema.VectorType:
		return hasDuration(typ.Elem)
	}
	return false
}
