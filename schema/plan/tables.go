package plan

import (
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// Reasons a table cannot change in place, naming Cassandra's rule.
const (
	rulePrimaryKey      = "the primary key of a table cannot be altered (Cassandra: ALTER TABLE cannot add, drop or retype PRIMARY KEY columns, only RENAME them; to rename one, run ALTER TABLE ... RENAME before planning)"
	ruleClusteringOrder = "the clustering order of a table cannot be altered (Cassandra: CLUSTERING ORDER BY is fixed by CREATE TABLE, as rows are stored on disk in that order)"
	ruleColumnType      = "the type of a column cannot be altered (Cassandra disabled ALTER TABLE ... ALTER ... TYPE, CASSANDRA-12443)"
	ruleColumnKind      = "a column cannot become static or regular once created (Cassandra: ALTER TABLE has no such change, and refuses to re-add a dropped column as another kind)"
	ruleCounter         = "a table cannot change between counter and non-counter (Cassandra: counter and non-counter columns cannot be mixed, and ALTER TABLE refuses to add a counter column to a non-counter table or the reverse)"
	ruleDroppedCounter  = "Cassandra refuses to re-add a dropped counter column"
	ruleDroppedType     = "Cassandra re-adds a dropped column only with a type that reads its old values (isValueCompatibleWith)"
	ruleDroppedKind     = "Cassandra re-adds a dropped column only as the kind (static or regular) it was dropped as"
)

// tableDiff is the in-place change of a table of both sides.
type tableDiff struct {
	// add are the columns to add, in the desired table's order.
	add []schema.Column
	// drop names the columns to drop, in the current table's order: with
	// DropColumns, those the desired table lacks.
	drop []string
	// kept names the columns the desired table lacks and the plan keeps,
	// without DropColumns, in the current table's order.
	kept []string
	// masks are the masks set or dropped on columns both tables have, in
	// the desired table's column order.
	masks []maskChange
	// props are the properties to set.
	props []property
	// unknown are the properties set now, left out by the desired table
	// and without a known default.
	unknown []string
}

// analyzeTables compares the tables of both sides: each either changes in
// place or is recreated; the current ones the desired keyspace lacks are
// dropped with Prune, and the columns a desired table lacks with
// DropColumns.
func (kp *ksPlan) analyzeTables() {
	for _, t := range tables(kp.want) {
		old, ok := table(kp.cur, t.Name)
		switch {
		case !ok:
			continue
		case old == t:
			kp.alters[t.Name] = &tableDiff{}
			continue
		}
		d, reasons := tableChange(old, t, kp.want)
		for _, r := range reasons {
			kp.p.cannot(tableName(t), r, true)
		}
		if len(reasons) > 0 {
			kp.recreateTables[t.Name] = reasons
			continue
		}
		if !kp.p.opt.DropColumns && len(d.drop) > 0 {
			d.kept, d.drop = d.drop, nil
			them := "them"
			if len(d.kept) == 1 {
				them = "it"
			}
			kp.p.note("table %s keeps %s, which the desired table lacks (--drop-columns drops %s)", tableName(t), columnList(d.kept), them)
		}
		kp.alters[t.Name] = d
		if !UnassignedID(t.ID) && t.ID != old.ID {
			kp.p.note("table %s keeps its id %s, not the desired %s: a table's id cannot be altered (Cassandra refuses ALTER TABLE ... WITH id)", tableName(t), old.ID, t.ID)
		}
		for _, name := range d.unknown {
			kp.p.note("table %s sets %s = %s, which the desired table leaves out, and it has no known default to reset it to: left as is", tableName(t), name, old.Options()[name])
		}
	}
	for _, t := range tables(kp.cur) {
		if _, ok := kp.want.Table(t.Name); ok {
			continue // a table, or a view (analyzeTableViewClashes)
		}
		if kp.p.opt.Prune {
			kp.dropTables[t.Name] = true
		} else {
			kp.p.note("table %s is not in the desired schema: kept (--prune drops it)", tableName(t))
		}
	}
}

// tableChange returns how cur changes in place into want, whose user
// types are those of keyspace k, or the reasons it cannot.
func tableChange(cur, want *schema.Table, k *schema.Keyspace) (*tableDiff, []string) {
	var reasons []string
	if a, b := partitionKey(cur), partitionKey(want); a != b {
		reasons = append(reasons, "the partition key changes from ("+clip.String(a)+") to ("+clip.String(b)+"): "+rulePrimaryKey)
	}
	if a, b := clustering(cur, false), clustering(want, false); a != b {
		reasons = append(reasons, "the clustering columns change from ("+clip.String(a)+") to ("+clip.String(b)+"): "+rulePrimaryKey)
	} else if a, b := clustering(cur, true), clustering(want, true); a != b {
		reasons = append(reasons, "the clustering order changes from ("+clip.String(a)+") to ("+clip.String(b)+"): "+ruleClusteringOrder)
	}
	d := &tableDiff{}
	counter := isCounterTable(cur)
	for _, c := range want.Columns {
		if isKey(c) {
			continue
		}
		old, ok := cur.Column(c.Name)
		switch {
		case !ok:
			if r := addReason(cur, c, k, counter); r != "" {
				reasons = append(reasons, r)
			}
			d.add = append(d.add, c)
		case isKey(*old):
			// A key column becoming a regular one changes the key, which
			// is reported above.
		case !schema.TypesEqual(old.Type, c.Type):
			reasons = append(reasons, "column "+clipName(c.Name)+" changes type from "+old.Type.String()+" to "+c.Type.String()+": "+ruleColumnType)
		case old.Kind != c.Kind:
			reasons = append(reasons, "column "+clipName(c.Name)+" changes from "+old.Kind.String()+" to "+c.Kind.String()+": "+ruleColumnKind)
		}
	}
	if len(reasons) == 0 {
		d.masks = maskChanges(cur, want)
	}
	for _, c := range cur.Columns {
		if _, ok := want.Column(c.Name); !ok && !isKey(c) {
			d.drop = append(d.drop, c.Name)
		}
	}
	d.props, d.unknown = propertyChanges(cur, want)
	return d, reasons
}

// addReason says why ALTER TABLE cannot add column c to cur (a counter
// table when counter), or "".
func addReason(cur *schema.Table, c schema.Column, k *schema.Keyspace, counter bool) string {
	isCounter := c.Type == schema.TypeCounter
	if isCounter != counter {
		what := "a counter column"
		if !isCounter {
			what = "a non-counter column"
		}
		table := "a non-counter table"
		if counter {
			table = "a counter table"
		}
		return "column " + clipName(c.Name) + " is " + what + " added to " + table + ": " + ruleCounter
	}
	d, dropped := cur.DroppedColumn(c.Name)
	switch {
	case !dropped:
	case isCounter:
		return "counter column " + clipName(c.Name) + " was dropped before: " + ruleDroppedCounter
	case !schema.DroppedColumnCompatible(k, d, c.Type):
		return "column " + clipName(c.Name) + " was dropped before as " + d.Type.String() + " and cannot come back as " + c.Type.String() + ": " + ruleDroppedType
	case !schema.DroppedKindCompatible(d, c.Kind == schema.Static):
		return "column " + clipName(c.Name) + " was dropped before as a " + strings.ToLower(d.Kind.String()) + " column and cannot come back as a " + c.Kind.String() + " one: " + ruleDroppedKind
	}
	return ""
}

// isKey reports whether c is a partition key or clustering column.
func isKey(c schema.Column) bool {
	return c.Kind == schema.PartitionKey || c.Kind == schema.Clustering
}

// isCounterTable reports whether t has counter columns, which makes it a
// counter table: its non-key columns are all counters.
func isCounterTable(t *schema.Table) bool {
	for _, c := range t.Columns {
		if c.Type == schema.TypeCounter {
			return true
		}
	}
	return false
}

// partitionKey describes t's partition key, "a int, b text", for
// comparing (in full) and for messages (clipped).
func partitionKey(t *schema.Table) string {
	parts := make([]string, len(t.PartitionKey))
	for i, name := range t.PartitionKey {
		parts[i] = columnText(t, name)
	}
	return strings.Join(parts, ", ")
}

// clustering describes t's clustering columns, "ts timestamp, id uuid",
// with their order ("ts timestamp DESC") when withOrder.
func clustering(t *schema.Table, withOrder bool) string {
	parts := make([]string, len(t.Clustering))
	for i, cc := range t.Clustering {
		parts[i] = columnText(t, cc.Name)
		if withOrder {
			parts[i] += " " + cc.Order.String()
		}
	}
	return strings.Join(parts, ", ")
}

// columnText is "name type" of column name of t, the name quoted.
func columnText(t *schema.Table, name string) string {
	c, _ := t.Column(name)
	return q(name) + " " + c.Type.String()
}
