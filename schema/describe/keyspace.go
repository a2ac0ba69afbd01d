package describe

import (
	"maps"
	"slices"
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// Schema returns CQL that recreates s: every keyspace, in name order,
// followed by its user types (each after the types it uses), its
// functions, its aggregates, then its tables, each followed by its
// indexes, its triggers and its materialized views (in name order, as
// Cassandra's DESCRIBE lists a table's elements: the table, its indexes,
// its views). It walks the whole schema.
// Dropped-column records are not part of DESCRIBE output (they are in the
// encoding and the digest): re-running the output gives an equal schema
// except for DroppedColumns.
func Schema(s schema.Schema) string {
	var b strings.Builder
	for i, k := range s.Keyspaces() {
		if i > 0 {
			b.WriteString("\n")
		}
		writeKeyspace(&b, k)
	}
	return b.String()
}

// Keyspace returns the CREATE KEYSPACE statement of k followed by the
// CREATE TYPE statements of its user types (in dependency order), the
// CREATE FUNCTION and CREATE AGGREGATE statements, then the CREATE TABLE
// statements of its tables in name order, each followed by the CREATE
// INDEX statements of its indexes, the CREATE TRIGGER statements of its
// triggers and the CREATE MATERIALIZED VIEW statements of its views.
func Keyspace(k *schema.Keyspace) string {
	var b strings.Builder
	writeKeyspace(&b, k)
	return b.String()
}

// KeyspaceOnly returns the CREATE KEYSPACE statement of k alone, without
// its types, tables and indexes.
func KeyspaceOnly(k *schema.Keyspace) string {
	var b strings.Builder
	writeKeyspaceHead(&b, k)
	return b.String()
}

// writeKeyspace writes what Keyspace returns.
func writeKeyspace(b *strings.Builder, k *schema.Keyspace) {
	writeKeyspaceHead(b, k)
	for _, ut := range schema.TypesInDependencyOrder(k) {
		b.WriteString("\n")
		writeUserType(b, ut)
	}
	writeFunctions(b, k)
	for _, t := range k.Tables() {
		if t.View() != nil {
			continue
		}
		b.WriteString("\n")
		writeTableElements(b, k, t)
	}
	writeOrphanViews(b, k)
}

// TableElements returns what DESCRIBE TABLE prints for table t of
// keyspace k: its CREATE TABLE statement, then the CREATE INDEX statements
// of its indexes, the CREATE TRIGGER statements of its triggers and the
// CREATE MATERIALIZED VIEW statements of the views built on it, each in
// name order. That is Cassandra's order (DESCRIBE TABLE lists the table,
// its indexes, then its views) and the one Keyspace prints each table in,
// so that the text re-creates the table with everything that hangs on
// it, and DESCRIBE KEYSPACE still prints each object once. For a
// materialized view it returns its CREATE MATERIALIZED VIEW statement
// alone (a view has no indexes, triggers or views of its own).
func TableElements(k *schema.Keyspace, t *schema.Table) string {
	var b strings.Builder
	writeTableElements(&b, k, t)
	return b.String()
}

// writeTableElements writes what TableElements returns.
func writeTableElements(b *strings.Builder, k *schema.Keyspace, t *schema.Table) {
	Options{}.writeTable(b, t)
	if t.View() != nil {
		return
	}
	for _, ix := range k.TableIndexes(t.Name) {
		writeIndex(b, ix)
	}
	writeTriggers(b, t)
	for _, v := range k.Views(t.Name) {
		b.WriteString("\n")
		Options{}.writeView(b, v)
	}
}

// writeKeyspaceHead writes what KeyspaceOnly returns.
func writeKeyspaceHead(b *strings.Builder, k *schema.Keyspace) {
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

// sortedKeys returns the keys of m in order, for output that must not
// depend on map iteration order.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// typeString returns t's CQL text, "<nil>" for a missing type, so that
// output about malformed input can still print it.
func typeString(t schema.Type) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}
