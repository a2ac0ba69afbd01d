package schema

import (
	"fmt"
	"strings"

	"github.com/benbjohnson/immutable"
)

// InternalState describes what of s the tests of package schema_test
// cannot see otherwise: the table and view counts, and per keyspace its
// maintained digest and the keys of its maps, the type users, the indexes
// by table and the views by base table included. Two schemas built alike describe alike.
func InternalState(s Schema) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tables %d views %d digest %x/%d/%d\n", s.tables, s.views, s.digest.sum, s.digest.size, s.digest.count)
	for _, k := range s.Keyspaces() {
		b.WriteString(KeyspaceState(k))
	}
	return b.String()
}

// KeyspaceState describes k's maintained digest and the keys of its maps.
func KeyspaceState(k *Keyspace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "keyspace %q digest %x/%d/%d\n", k.Name, k.digest.sum, k.digest.size, k.digest.count)
	writeKeys(&b, "tables", k.tables)
	writeKeys(&b, "types", k.types)
	writeKeys(&b, "indexes", k.indexes)
	writeKeys(&b, "byTable", k.byTable)
	writeKeys(&b, "functions", k.functions)
	writeKeys(&b, "byBase", k.byBase)
	writeKeys(&b, "users", k.users)
	return b.String()
}

// writeKeys writes the keys of m, quoted, on one line.
func writeKeys[V any](b *strings.Builder, what string, m *immutable.SortedMap[string, V]) {
	b.WriteString("  " + what + ":")
	if m != nil {
		it := m.Iterator()
		for !it.Done() {
			key, _, _ := it.Next()
			fmt.Fprintf(b, " %q", key)
		}
	}
	b.WriteString("\n")
}

// KeyspaceDigest returns k's maintained digest (sum, size, count) and the
// one computed by walking it, which must be equal.
func KeyspaceDigest(k *Keyspace) (maintained, computed [32]byte, maintainedSize, computedSize, maintainedCount, computedCount int64) {
	d := keyspaceDigest(k)
	return k.digest.sum, d.sum, k.digest.size, d.size, k.digest.count, d.count
}

// The DESCRIBE text the tests of package schema compare schemas and
// objects by. Package describe renders it and imports schema, so these
// tests cannot call it; describe_hook_test.go, in package schema_test,
// sets them to its functions before any test runs.
var (
	DescribeSchema   func(Schema) string
	DescribeKeyspace func(*Keyspace) string
	DescribeTable    func(*Table) string
	DescribeUserType func(*UserType) string
	DescribeIndex    func(*Index) string
	DescribeTriggers func(*Table) string
)
