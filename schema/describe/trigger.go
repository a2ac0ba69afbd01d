package describe

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// Triggers returns the CREATE TRIGGER statements of t's triggers, in
// name order, as DESCRIBE prints them after the table's indexes; empty
// for a table without triggers.
func Triggers(t *schema.Table) string {
	var b strings.Builder
	writeTriggers(&b, t)
	return b.String()
}

// writeTriggers writes what Triggers returns.
func writeTriggers(b *strings.Builder, t *schema.Table) {
	for _, tr := range t.Triggers() {
		writeTrigger(b, t, tr)
	}
}

// Trigger returns the CREATE TRIGGER statement of trigger tr of table t.
func Trigger(t *schema.Table, tr schema.Trigger) string {
	var b strings.Builder
	writeTrigger(&b, t, tr)
	return b.String()
}

// writeTrigger writes "CREATE TRIGGER name ON ks.table USING 'class';"
// and a newline, as Cassandra's drivers print a trigger: the names as
// identifiers, the class as a string.
func writeTrigger(b *strings.Builder, t *schema.Table, tr schema.Trigger) {
	b.WriteString("CREATE TRIGGER ")
	b.WriteString(cqltext.QuoteIdentifier(tr.Name))
	b.WriteString(" ON ")
	b.WriteString(cqltext.QuoteIdentifier(t.Keyspace))
	b.WriteString(".")
	b.WriteString(cqltext.QuoteIdentifier(t.Name))
	b.WriteString(" USING ")
	b.WriteString(cqltext.QuoteString(tr.Class))
	b.WriteString(";\n")
}
