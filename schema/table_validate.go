package schema

import "github.com/metalog/metalog/internal/clip"

// validateTable checks the structural invariants of a table and returns a
// reason when one is broken. It runs after CREATE TABLE builds a table, in
// PutTable and when decoding, so every Table in a Schema satisfies it. The
// checks run in a fixed order (identity, columns, primary key, column mix,
// options, dropped columns, triggers, masks, and for a materialized view
// its view), so a table with several faults always gets the same reason.
func validateTable(t *Table) string {
	if r := tableIdentityReason(t); r != "" {
		return r
	}
	n, r := checkColumns(t)
	if r != "" {
		return r
	}
	if r := primaryKeyReason(t, &n); r != "" {
		return r
	}
	if r := n.mixReason(); r != "" {
		return r
	}
	if r := optionsReason(t.Options()); r != "" {
		return r
	}
	if r := droppedColumnsReason(t); r != "" {
		return r
	}
	if r := triggersReason(t); r != "" {
		return r
	}
	if r := masksReason(t); r != "" {
		return r
	}
	if t.View() != nil {
		return viewReason(t)
	}
	return ""
}

// tableIdentityReason checks the names of t (its id, 16 bytes, needs no
// check).
func tableIdentityReason(t *Table) string {
	if r := nameReason("keyspace", t.Keyspace); r != "" {
		return r
	}
	if r := nameReason("table", t.Name); r != "" {
		return r
	}
	return ""
}

// columnCounts counts a table's columns by role, for the checks that look
// at the table as a whole.
type columnCounts struct {
	partitionKey, clustering, static int
	counter, regular                 int // of the columns outside the primary key
}

// checkColumns checks every column of t (its name, that it is the only one
// of that name, its type and its kind) and counts them by role.
func checkColumns(t *Table) (columnCounts, string) {
	var n columnCounts
	if len(t.Columns) == 0 {
		return n, "a table needs at least one column"
	}
	var seen map[string]bool // for wide tables, to stay linear
	if len(t.Columns) > 16 {
		seen = make(map[string]bool, len(t.Columns))
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if r := columnNameReason("column", c.Name); r != "" {
			return n, r
		}
		if duplicateColumn(t, i, seen) {
			return n, "duplicate column name " + clip.String(c.Name)
		}
		if r := validateType(c.Type, 0); r != "" {
			return n, "column " + clip.String(c.Name) + ": " + r
		}
		if r := n.add(c); r != "" {
			return n, r
		}
	}
	return n, ""
}

// duplicateColumn reports whether column i of t has the name of an earlier
// column. A narrow table compares with the earlier columns, which costs
// less than a map; a wide one records the names in seen, so that the check
// stays linear.
func duplicateColumn(t *Table, i int, seen map[string]bool) bool {
	name := t.Columns[i].Name
	if seen != nil {
		if seen[name] {
			return true
		}
		seen[name] = true
		return false
	}
	for j := 0; j < i; j++ {
		if t.Columns[j].Name == name {
			return true
		}
	}
	return false
}

// add counts c by its kind and refuses a primary key column of a type a key
// cannot hold (counters, non-frozen user types and collections, durations).
func (n *columnCounts) add(c *Column) string {
	isCounter := c.Type == TypeCounter
	switch c.Kind {
	case PartitionKey, Clustering:
		if c.Kind == PartitionKey {
			n.partitionKey++
		} else {
			n.clustering++
		}
		if isCounter {
			return "counter column " + clip.String(c.Name) + " cannot be part of the PRIMARY KEY"
		}
		if _, udt := c.Type.(UserTypeRef); udt {
			return "non-frozen user type column " + clip.String(c.Name) + " cannot be part of the PRIMARY KEY"
		}
		if IsMultiCell(c.Type) {
			return "non-frozen collection column " + clip.String(c.Name) + " cannot be part of the PRIMARY KEY"
		}
		if containsDuration(c.Type) {
			return "duration column " + clip.String(c.Name) + " cannot be part of the PRIMARY KEY"
		}
	case Static, Regular:
		if c.Kind == Static {
			n.static++
		}
		if isCounter {
			n.counter++
		} else {
			n.regular++
		}
	default:
		return "column " + clip.String(c.Name) + " has an invalid kind"
	}
	return ""
}

// primaryKeyReason checks that t's partition key and clustering lists name
// exactly the columns of those kinds, each once, with a valid order.
func primaryKeyReason(t *Table, n *columnCounts) string {
	if len(t.PartitionKey) == 0 {
		return "PRIMARY KEY is missing"
	}
	if n.partitionKey != len(t.PartitionKey) || n.clustering != len(t.Clustering) {
		return "primary key does not match the column kinds"
	}
	for i, name := range t.PartitionKey {
		c, ok := t.Column(name)
		if !ok || c.Kind != PartitionKey {
			return "partition key column " + clip.String(name) + " is not a partition key column"
		}
		for _, prev := range t.PartitionKey[:i] {
			if prev == name {
				return "column " + clip.String(name) + " appears twice in the PRIMARY KEY"
			}
		}
	}
	for i, cc := range t.Clustering {
		c, ok := t.Column(cc.Name)
		if !ok || c.Kind != Clustering {
			return "clustering column " + clip.String(cc.Name) + " is not a clustering column"
		}
		if cc.Order != Asc && cc.Order != Desc {
			return "clustering column " + clip.String(cc.Name) + " has an invalid order"
		}
		for _, prev := range t.Clustering[:i] {
			if prev.Name == cc.Name {
				return "column " + clip.String(cc.Name) + " appears twice in the PRIMARY KEY"
			}
		}
	}
	return ""
}

// mixReason refuses the combinations of columns CQL forbids: static columns
// without clustering columns (each partition is one row), and counters
// beside other non-key columns (counter tables hold only counters).
func (n *columnCounts) mixReason() string {
	if n.static > 0 && n.clustering == 0 {
		return "static columns are only allowed in tables with clustering columns"
	}
	if n.counter > 0 && n.regular > 0 {
		return "cannot mix counter and non-counter columns outside the PRIMARY KEY"
	}
	return ""
}

// droppedColumnsReason checks t's dropped-column records: valid, distinct
// names, and types with user types expanded to tuples (a record must stay
// meaningful after the user type is altered or dropped).
func droppedColumnsReason(t *Table) string {
	dropped := t.DroppedColumns()
	for i := range dropped {
		d := &dropped[i]
		if r := columnNameReason("column", d.Name); r != "" {
			return "dropped " + r
		}
		for _, prev := range dropped[:i] {
			if prev.Name == d.Name {
				return "dropped column " + clip.String(d.Name) + " recorded twice"
			}
		}
		if r := validateType(d.Type, 0); r != "" {
			return "dropped column " + clip.String(d.Name) + ": " + r
		}
		if len(typeRefs(nil, d.Type)) > 0 {
			return "dropped column " + clip.String(d.Name) + " refers to a user type"
		}
		if r := droppedKindReason(d); r != "" {
			return r
		}
	}
	return ""
}
