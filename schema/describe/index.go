package describe

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// Index returns the CREATE INDEX statement of ix.
func Index(ix *schema.Index) string {
	var b strings.Builder
	writeIndex(&b, ix)
	return b.String()
}

// writeIndex writes what Index returns.
func writeIndex(b *strings.Builder, ix *schema.Index) {
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
			cqltext.WriteStringMap(b, ix.Options)
		}
	}
	b.WriteString(";\n")
}
