package plan

import "github.com/metalog/metalog/schema"

// maskChange is a mask set (mask non-nil) or dropped on an existing
// column.
type maskChange struct {
	column string
	mask   *schema.Mask
}

// maskChanges returns the masks to set or drop so that the columns cur
// and want share (key columns included: Cassandra masks those too) get
// want's masks. A column the desired table has without a mask loses its
// mask (DROP MASKED), as a property the desired table leaves out goes back
// to its default: a mask is part of the column's definition, not an
// object of its own. Columns being added carry their masks in ADD.
func maskChanges(cur, want *schema.Table) []maskChange {
	var out []maskChange
	for _, c := range want.Columns {
		if old, ok := cur.Column(c.Name); ok && !schema.MasksEqual(old.Mask, c.Mask) {
			out = append(out, maskChange{column: c.Name, mask: c.Mask})
		}
	}
	return out
}

// alterTableMask is ALTER TABLE t ALTER c MASKED WITH ..., or ... DROP
// MASKED when m drops the mask.
func alterTableMask(t *schema.Table, m maskChange) string {
	s := "ALTER TABLE " + tableName(t) + " ALTER " + q(m.column)
	if m.mask == nil {
		return s + " DROP MASKED"
	}
	return s + " MASKED WITH " + m.mask.String()
}
