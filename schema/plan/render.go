package plan

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// The CQL of every planned statement. CREATE statements are schema's
// DESCRIBE text, so that a plan creates exactly what DESCRIBE shows; the
// others are built here from quoted names and the canonical text of types
// and property values. None ends with ';'.

// q quotes an identifier (keyspace, table, column, field or index name).
func q(name string) string { return cqltext.QuoteIdentifier(name) }

// typeName quotes a user type name as a type: unlike other identifiers,
// one that reads as a native type (text, int) is quoted too.
func typeName(ks, name string) string {
	return q(ks) + "." + schema.UserTypeRef{Name: name}.String()
}

// statementOf turns DESCRIBE text (one statement ending with ";\n") into a
// planned statement's CQL.
func statementOf(describe string) string {
	return strings.TrimSuffix(describe, ";\n")
}

// createKeyspace is CREATE KEYSPACE k with its replication and
// durable_writes.
func createKeyspace(k *schema.Keyspace) string {
	return statementOf(describe.KeyspaceOnly(k))
}

// replicationText is k's replication map literal as DESCRIBE writes it:
// the text of describe.KeyspaceOnly between "WITH replication = " and " AND
// durable_writes", whose ends are fixed.
func replicationText(k *schema.Keyspace) string {
	text := describe.KeyspaceOnly(k)
	text = strings.TrimPrefix(text, "CREATE KEYSPACE "+q(k.Name)+" WITH replication = ")
	if i := strings.LastIndex(text, " AND durable_writes = "); i >= 0 {
		text = text[:i]
	}
	return text
}

// alterKeyspace is ALTER KEYSPACE setting what of want differs from cur.
func alterKeyspace(cur, want *schema.Keyspace) (string, bool) {
	var props []string
	if !sameReplication(cur.Replication, want.Replication) {
		props = append(props, "replication = "+replicationText(want))
	}
	if cur.DurableWrites != want.DurableWrites {
		props = append(props, "durable_writes = "+boolText(want.DurableWrites))
	}
	if len(props) == 0 {
		return "", false
	}
	return "ALTER KEYSPACE " + q(want.Name) + " WITH " + strings.Join(props, " AND "), true
}

// sameReplication reports whether two canonical replications are equal.
func sameReplication(a, b schema.Replication) bool {
	if a.Class != b.Class || len(a.Options) != len(b.Options) {
		return false
	}
	for k, v := range a.Options {
		if w, ok := b.Options[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// boolText is "true" or "false".
func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// dropKeyspace is DROP KEYSPACE name.
func dropKeyspace(name string) string { return "DROP KEYSPACE " + q(name) }

// createType is CREATE TYPE ut.
func createType(ut *schema.UserType) string { return statementOf(describe.UserType(ut)) }

// alterTypeAdd is ALTER TYPE ut ADD f (one field: the statement takes
// one).
func alterTypeAdd(ut *schema.UserType, f schema.Field) string {
	return "ALTER TYPE " + typeName(ut.Keyspace, ut.Name) + " ADD " + q(f.Name) + " " + f.Type.String()
}

// dropType is DROP TYPE ks.name.
func dropType(ks, name string) string { return "DROP TYPE " + typeName(ks, name) }

// createTable is CREATE TABLE t, with WITH ID unless withID is false.
func createTable(t *schema.Table, withID bool) string {
	if withID {
		return statementOf(describe.Table(t))
	}
	return statementOf(describe.Options{OmitID: true}.Table(t))
}

// tableName is ks.table, quoted.
func tableName(t *schema.Table) string { return q(t.Keyspace) + "." + q(t.Name) }

// alterTableAdd is ALTER TABLE t ADD the columns, in parentheses when
// there are several.
func alterTableAdd(t *schema.Table, cols []schema.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = q(c.Name) + " " + c.Type.String()
		if c.Kind == schema.Static {
			parts[i] += " static"
		}
		if c.Mask != nil {
			parts[i] += " MASKED WITH " + c.Mask.String()
		}
	}
	return "ALTER TABLE " + tableName(t) + " ADD " + list(parts)
}

// alterTableDrop is ALTER TABLE t DROP the columns.
func alterTableDrop(t *schema.Table, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = q(n)
	}
	return "ALTER TABLE " + tableName(t) + " DROP " + list(parts)
}

// list is one item, or several in parentheses, comma-separated.
func list(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return "(" + strings.Join(items, ", ") + ")"
}

// alterTableWith is ALTER TABLE t WITH the properties, name = canonical
// value, in the order given.
func alterTableWith(t *schema.Table, props []property) string {
	parts := make([]string, len(props))
	for i, p := range props {
		parts[i] = p.name + " = " + p.value
	}
	return "ALTER TABLE " + tableName(t) + " WITH " + strings.Join(parts, " AND ")
}

// dropTable is DROP TABLE t.
func dropTable(t *schema.Table) string { return "DROP TABLE " + tableName(t) }

// createIndex is CREATE [CUSTOM] INDEX ix.
func createIndex(ix *schema.Index) string { return statementOf(describe.Index(ix)) }

// dropIndex is DROP INDEX ks.name.
func dropIndex(ix *schema.Index) string { return "DROP INDEX " + q(ix.Keyspace) + "." + q(ix.Name) }
