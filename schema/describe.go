package schema

import (
	"sort"
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
)

// DescribeSchema returns CQL that recreates s: every keyspace, in name
// order, followed by its user types (each after the types it uses), its
// functions, its aggregates, then its tables, each followed by its
// indexes, its triggers and its materialized views (in name order, as
// Cassandra's DESCRIBE lists a table's elements: the table, its indexes,
// its views). It walks the
// whole schema.
// Dropped-column records are not part of DESCRIBE output (they are in the
// encoding and the digest): re-running the output gives an equal schema
// except for DroppedColumns.
func DescribeSchema(s Schema) string {
	var b strings.Builder
	for i, k := range s.Keyspaces() {
		if i > 0 {
			b.WriteString("\n")
		}
		describeKeyspace(&b, k)
	}
	return b.String()
}

// DescribeKeyspace returns the CREATE KEYSPACE statement of k followed by
// the CREATE TYPE statements of its user types (in dependency order), the
// CREATE FUNCTION and CREATE AGGREGATE statements, then the CREATE TABLE
// statements of its tables in name order, each followed by the CREATE
// INDEX statements of its indexes, the CREATE TRIGGER statements of its
// triggers and the CREATE MATERIALIZED VIEW statements of its views.
func DescribeKeyspace(k *Keyspace) string {
	var b strings.Builder
	describeKeyspace(&b, k)
	return b.String()
}

// DescribeKeyspaceOnly returns the CREATE KEYSPACE statement of k alone,
// without its types, tables and indexes.
func DescribeKeyspaceOnly(k *Keyspace) string {
	var b strings.Builder
	describeKeyspaceHead(&b, k)
	return b.String()
}

// describeKeyspace writes what DescribeKeyspace returns.
func describeKeyspace(b *strings.Builder, k *Keyspace) {
	describeKeyspaceHead(b, k)
	for _, ut := range typesInDependencyOrder(k) {
		b.WriteString("\n")
		describeUserType(b, ut)
	}
	describeFunctions(b, k)
	for _, t := range k.Tables() {
		if t.View != nil {
			continue
		}
		b.WriteString("\n")
		describeTableElements(b, k, t)
	}
	describeOrphanViews(b, k)
}

// DescribeTableElements returns what DESCRIBE TABLE prints for table t of
// keyspace k: its CREATE TABLE statement, then the CREATE INDEX statements
// of its indexes, the CREATE TRIGGER statements of its triggers and the
// CREATE MATERIALIZED VIEW statements of the views built on it, each in
// name order. That is Cassandra's order (DESCRIBE TABLE lists the table,
// its indexes, then its views) and the one DescribeKeyspace prints each
// table in, so that the text re-creates the table with everything that
// hangs on it, and DESCRIBE KEYSPACE still prints each object once. For a
// materialized view it returns its CREATE MATERIALIZED VIEW statement
// alone (a view has no indexes, triggers or views of its own).
func DescribeTableElements(k *Keyspace, t *Table) string {
	var b strings.Builder
	describeTableElements(&b, k, t)
	return b.String()
}

// describeTableElements writes what DescribeTableElements returns.
func describeTableElements(b *strings.Builder, k *Keyspace, t *Table) {
	describeTable(b, t)
	if t.View != nil {
		return
	}
	for _, ix := range k.TableIndexes(t.Name) {
		describeIndex(b, ix)
	}
	describeTriggers(b, t)
	for _, v := range k.Views(t.Name) {
		b.WriteString("\n")
		describeView(b, v, true)
	}
}

// describeKeyspaceHead writes what DescribeKeyspaceOnly returns.
func describeKeyspaceHead(b *strings.Builder, k *Keyspace) {
	b.WriteString("CREATE KEYSPACE ")
	b.WriteString(cqltext.QuoteIdentifier(k.Name))
	b.WriteString(" WITH replication = {'class': ")
	b.WriteString(cqltext.QuoteString(k.Replication.Class))
	for _, key := range sortedKeys(k.Replication.Options) {
		b.WriteString(", ")
		b.WriteString(cqltext.QuoteString(key))
		b.WriteString(": ")
		b.WriteString(cqltext.QuoteString(k.Replication.Options[key]))
	}
	b.WriteString("} AND durable_writes = ")
	if k.DurableWrites {
		b.WriteString("true;\n")
	} else {
		b.WriteString("false;\n")
	}
}

// typesInDependencyOrder returns k's user types so that every type comes
// after the types it uses, otherwise in name order.
func typesInDependencyOrder(k *Keyspace) []*UserType {
	types := k.UserTypes()
	out := make([]*UserType, 0, len(types))
	done := make(map[string]bool, len(types))
	var visit func(ut *UserType, depth int)
	visit = func(ut *UserType, depth int) {
		if done[ut.Name] || depth > len(types) {
			return
		}
		done[ut.Name] = true
		for _, ref := range userTypeRefs(ut) {
			if dep, ok := k.UserType(ref); ok {
				visit(dep, depth+1)
			}
		}
		out = append(out, ut)
	}
	for _, ut := range types {
		visit(ut, 0)
	}
	return out
}

// DescribeUserType returns the CREATE TYPE statement of ut.
func DescribeUserType(ut *UserType) string {
	var b strings.Builder
	describeUserType(&b, ut)
	return b.String()
}

// describeUserType writes what DescribeUserType returns.
func describeUserType(b *strings.Builder, ut *UserType) {
	writeCreateHead(b, "TYPE", ut.Keyspace, quoteTypeName(ut.Name))
	for i, f := range ut.Fields {
		writeMember(b, f.Name, f.Type)
		if i < len(ut.Fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(");\n")
}

// DescribeIndex returns the CREATE INDEX statement of ix.
func DescribeIndex(ix *Index) string {
	var b strings.Builder
	describeIndex(&b, ix)
	return b.String()
}

// describeIndex writes what DescribeIndex returns.
func describeIndex(b *strings.Builder, ix *Index) {
	b.WriteString("CREATE ")
	if ix.Custom {
		b.WriteString("CUSTOM ")
	}
	b.WriteString("INDEX ")
	b.WriteString(cqltext.QuoteIdentifier(ix.Name))
	b.WriteString(" ON ")
	b.WriteString(cqltext.QuoteIdentifier(ix.Keyspace))
	b.WriteString(".")
	b.WriteString(cqltext.QuoteIdentifier(ix.Table))
	b.WriteString(" (")
	b.WriteString(ix.Target.String())
	b.WriteString(")")
	if ix.Class != "" {
		b.WriteString(" USING ")
		b.WriteString(cqltext.QuoteString(ix.Class))
		if len(ix.Options) > 0 {
			b.WriteString(" WITH OPTIONS = ")
			writeStringMap(b, ix.Options)
		}
	}
	b.WriteString(";\n")
}

// DescribeTable returns the CREATE TABLE statement of t alone, in the
// layout of cqlsh's DESCRIBE TABLE, including the table id. Its indexes,
// triggers and views are not part of it: DescribeTableElements prints the
// table with them, as DESCRIBE TABLE does. For a materialized view it returns
// the view's CREATE MATERIALIZED VIEW statement (DescribeView).
func DescribeTable(t *Table) string {
	var b strings.Builder
	describeTable(&b, t)
	return b.String()
}

// describeTable writes what DescribeTable returns.
func describeTable(b *strings.Builder, t *Table) {
	if t.View != nil {
		describeView(b, t, true)
		return
	}
	writeCreateHead(b, "TABLE", t.Keyspace, cqltext.QuoteIdentifier(t.Name))
	inlinePK := len(t.PartitionKey) == 1 && len(t.Clustering) == 0
	for i, c := range t.Columns {
		writeMember(b, c.Name, c.Type)
		if c.Kind == Static {
			b.WriteString(" static")
		}
		if c.Mask != nil {
			b.WriteString(" MASKED WITH ")
			writeMask(b, c.Mask)
		}
		if inlinePK && c.Kind == PartitionKey {
			b.WriteString(" PRIMARY KEY")
		}
		if i < len(t.Columns)-1 || !inlinePK {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	if !inlinePK {
		writePrimaryKey(b, t)
	}
	b.WriteString(") WITH ID = ")
	b.WriteString(t.ID.String())
	writeTableProperties(b, t)
	b.WriteString(";\n")
}

// writeCreateHead writes "CREATE what ks.name (" and a newline: the head of
// the statements that list their members one per line. name comes quoted,
// since type names and table names quote differently.
func writeCreateHead(b *strings.Builder, what, ks, name string) {
	b.WriteString("CREATE ")
	b.WriteString(what)
	b.WriteString(" ")
	b.WriteString(cqltext.QuoteIdentifier(ks))
	b.WriteString(".")
	b.WriteString(name)
	b.WriteString(" (\n")
}

// writeMember writes the indented "name type" of a field or column; the
// caller adds the column's modifiers and the separator.
func writeMember(b *strings.Builder, name string, t Type) {
	b.WriteString("    ")
	b.WriteString(cqltext.QuoteIdentifier(name))
	b.WriteString(" ")
	b.WriteString(typeString(t))
}

// writePrimaryKey writes the PRIMARY KEY clause of a table whose key is
// not a single column marked inline: the partition key (in parentheses
// when composite), then the clustering columns.
func writePrimaryKey(b *strings.Builder, t *Table) {
	b.WriteString("    ")
	writeKeyClause(b, t)
	b.WriteString("\n")
}

// writeKeyClause writes "PRIMARY KEY (...)": the partition key (in
// parentheses when composite), then the clustering columns.
func writeKeyClause(b *strings.Builder, t *Table) {
	b.WriteString("PRIMARY KEY (")
	if len(t.PartitionKey) > 1 {
		b.WriteString("(")
	}
	for i, name := range t.PartitionKey {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cqltext.QuoteIdentifier(name))
	}
	if len(t.PartitionKey) > 1 {
		b.WriteString(")")
	}
	for _, cc := range t.Clustering {
		b.WriteString(", ")
		b.WriteString(cqltext.QuoteIdentifier(cc.Name))
	}
	b.WriteString(")")
}

// writeTableProperties writes the properties after WITH ID: the clustering
// order of every clustering column, then the options in name order, in
// their canonical text.
func writeTableProperties(b *strings.Builder, t *Table) {
	if len(t.Clustering) > 0 {
		b.WriteString("\n    AND ")
		writeClusteringOrder(b, t)
	}
	for _, key := range sortedKeys(t.Options) {
		b.WriteString("\n    AND ")
		b.WriteString(key)
		b.WriteString(" = ")
		b.WriteString(t.Options[key])
	}
}

// writeClusteringOrder writes "CLUSTERING ORDER BY (c ASC, ...)" for
// every clustering column of t.
func writeClusteringOrder(b *strings.Builder, t *Table) {
	b.WriteString("CLUSTERING ORDER BY (")
	for i, cc := range t.Clustering {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cqltext.QuoteIdentifier(cc.Name))
		b.WriteString(" ")
		b.WriteString(cc.Order.String())
	}
	b.WriteString(")")
}

// writeStringMap writes m as a CQL map literal of strings, {'k': 'v', ...},
// with the keys sorted so that equal maps print equally.
func writeStringMap(b *strings.Builder, m map[string]string) {
	b.WriteString("{")
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cqltext.QuoteString(k))
		b.WriteString(": ")
		b.WriteString(cqltext.QuoteString(m[k]))
	}
	b.WriteString("}")
}

// sortedKeys returns the keys of m in order, for output that must not
// depend on map iteration order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
