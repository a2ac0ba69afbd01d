package describe

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// View returns the CREATE MATERIALIZED VIEW statement of view t, as
// Cassandra's ViewMetadata prints it (with the id, as metalog's DESCRIBE
// TABLE has it); Table of a view returns the same.
func View(t *schema.Table) string {
	var b strings.Builder
	Options{}.writeView(&b, t)
	return b.String()
}

// writeView writes the view's statement: the head, then SELECT, FROM,
// WHERE and PRIMARY KEY indented on their own lines, then " WITH" the id
// (unless o.OmitID), the clustering order and the options, each after
// "AND" on a line of its own.
func (o Options) writeView(b *strings.Builder, t *schema.Table) {
	v := t.View()
	b.WriteString("CREATE MATERIALIZED VIEW ")
	b.WriteString(cqltext.QuoteIdentifier(t.Keyspace))
	b.WriteString(".")
	b.WriteString(cqltext.QuoteIdentifier(t.Name))
	b.WriteString(" AS\n    SELECT ")
	if v.AllColumns {
		b.WriteString("*")
	} else {
		for i, c := range t.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(cqltext.QuoteIdentifier(c.Name))
		}
	}
	b.WriteString("\n    FROM ")
	b.WriteString(cqltext.QuoteIdentifier(t.Keyspace))
	b.WriteString(".")
	b.WriteString(cqltext.QuoteIdentifier(v.Base))
	b.WriteString("\n    WHERE ")
	b.WriteString(schema.WhereText(v.Where))
	b.WriteString("\n    ")
	writeKeyClause(b, t)
	o.writeProperties(b, t, "\n WITH ")
	b.WriteString(";\n")
}

// writeOrphanViews writes the views of k whose base table k lacks,
// which only a schema loaded from inconsistent records can hold, so that
// DESCRIBE never leaves an object out. It costs O(views).
func writeOrphanViews(b *strings.Builder, k *schema.Keyspace) {
	if k.ViewCount() == 0 {
		return
	}
	for _, v := range k.AllViews() {
		if base, ok := k.Table(v.View().Base); !ok || base.View() != nil {
			b.WriteString("\n")
			Options{}.writeView(b, v)
		}
	}
}
