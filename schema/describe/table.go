package describe

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// Options say what the statements include; the zero value is what
// DESCRIBE prints.
type Options struct {
	// OmitID leaves the table id (WITH ID = ...) out of CREATE TABLE and
	// CREATE MATERIALIZED VIEW, for a table whose id the cluster is to
	// assign. The properties that follow the id, if any, then follow the
	// column list after WITH.
	OmitID bool
	// Properties, when set, gives the options printed for a table or
	// view, each "name = value", in place of its own options in name
	// order: the CQL listener prints every parameter with its effective
	// value, as Cassandra's DESCRIBE does.
	Properties func(t *schema.Table) []string
}

// Table returns the CREATE TABLE statement of t alone, in the layout of
// cqlsh's DESCRIBE TABLE, including the table id. Its indexes, triggers
// and views are not part of it: TableElements prints the table with
// them, as DESCRIBE TABLE does. For a materialized view it returns the
// view's CREATE MATERIALIZED VIEW statement (View).
func Table(t *schema.Table) string { return Options{}.Table(t) }

// Table is the package's Table with the options o.
func (o Options) Table(t *schema.Table) string {
	var b strings.Builder
	o.writeTable(&b, t)
	return b.String()
}

// writeTable writes what Table returns.
func (o Options) writeTable(b *strings.Builder, t *schema.Table) {
	if t.View() != nil {
		o.writeView(b, t)
		return
	}
	writeCreateHead(b, "TABLE", t.Keyspace, cqltext.QuoteIdentifier(t.Name))
	inlinePK := len(t.PartitionKey) == 1 && len(t.Clustering) == 0
	cols := createOrder(t)
	for i, c := range cols {
		writeMember(b, c.Name, c.Type)
		if c.Kind == schema.Static {
			b.WriteString(" static")
		}
		if c.Mask != nil {
			b.WriteString(" MASKED WITH ")
			b.WriteString(c.Mask.String())
		}
		if inlinePK && c.Kind == schema.PartitionKey {
			b.WriteString(" PRIMARY KEY")
		}
		if i < len(cols)-1 || !inlinePK {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	if !inlinePK {
		writePrimaryKey(b, t)
	}
	b.WriteString(")")
	o.writeProperties(b, t, " WITH ")
	b.WriteString(";\n")
}

// writeProperties writes the properties of table or view t after its
// column list or its PRIMARY KEY: the id (unless o.OmitID), the
// clustering order of every clustering column, then the options in name
// order, in their canonical text; the first after with, the others each
// after "AND" on a line of its own.
func (o Options) writeProperties(b *strings.Builder, t *schema.Table, with string) {
	first := true
	and := func() {
		if first {
			b.WriteString(with)
			first = false
		} else {
			b.WriteString("\n    AND ")
		}
	}
	if !o.OmitID {
		and()
		b.WriteString("ID = ")
		b.WriteString(t.ID.String())
	}
	if len(t.Clustering) > 0 {
		and()
		writeClusteringOrder(b, t)
	}
	if o.Properties != nil {
		for _, p := range o.Properties(t) {
			and()
			b.WriteString(p)
		}
		return
	}
	for _, key := range sortedKeys(t.Options()) {
		and()
		b.WriteString(key)
		b.WriteString(" = ")
		b.WriteString(t.Options()[key])
	}
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
func writeMember(b *strings.Builder, name string, t schema.Type) {
	b.WriteString("    ")
	b.WriteString(cqltext.QuoteIdentifier(name))
	b.WriteString(" ")
	b.WriteString(typeString(t))
}

// writePrimaryKey writes the PRIMARY KEY clause of a table whose key is
// not a single column marked inline: the partition key (in parentheses
// when composite), then the clustering columns.
func writePrimaryKey(b *strings.Builder, t *schema.Table) {
	b.WriteString("    ")
	writeKeyClause(b, t)
	b.WriteString("\n")
}

// writeKeyClause writes "PRIMARY KEY (...)": the partition key (in
// parentheses when composite), then the clustering columns.
func writeKeyClause(b *strings.Builder, t *schema.Table) {
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

// writeClusteringOrder writes "CLUSTERING ORDER BY (c ASC, ...)" for
// every clustering column of t.
func writeClusteringOrder(b *strings.Builder, t *schema.Table) {
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
