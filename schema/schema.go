package schema

import "github.com/benbjohnson/immutable"

// Schema is an immutable set of keyspaces and their tables. The zero value is
// the empty schema. Every change returns a new Schema that shares all
// unchanged keyspaces and tables with the old one, in O(log n) time; a Schema
// is safe to read from any number of goroutines.
type Schema struct {
	keyspaces *immutable.SortedMap[string, *Keyspace]
	tables    int // total tables in all keyspaces, maintained incrementally
}

// Keyspace is a keyspace and its tables. Values reachable from a Schema must
// not be modified; build a new Keyspace instead.
type Keyspace struct {
	// Name is the keyspace name.
	Name string
	// Replication is the replication strategy, in canonical form.
	Replication Replication
	// DurableWrites is the durable_writes property.
	DurableWrites bool

	tables *immutable.SortedMap[string, *Table]
}

// Replication is a keyspace's replication strategy.
type Replication struct {
	// Class is the fully qualified strategy class, e.g.
	// "org.apache.cassandra.locator.SimpleStrategy".
	Class string
	// Options are the strategy options other than the class, e.g.
	// replication_factor: "3", or a factor per data centre.
	Options map[string]string
}

// Table is a table definition. Values reachable from a Schema must not be
// modified; build a new Table instead.
type Table struct {
	// Keyspace is the name of the keyspace holding the table.
	Keyspace string
	// Name is the table name.
	Name string
	// ID is the table id as UUID text (lowercase, hyphenated).
	ID string
	// Columns are all columns in definition order.
	Columns []Column
	// PartitionKey names the partition key columns in key order.
	PartitionKey []string
	// Clustering lists the clustering columns in key order.
	Clustering []ClusteringColumn
	// Options are the table properties as CQL literal text, keyed by
	// property name. Nil when there are none.
	Options map[string]string
}

// Column is a column of a table.
type Column struct {
	// Name is the column name.
	Name string
	// Type is the column's CQL type.
	Type Type
	// Kind says which part of the row the column belongs to.
	Kind ColumnKind
}

// ColumnKind says which part of a row a column belongs to.
type ColumnKind uint8

// Column kinds. Their numeric values are part of the encoding.
const (
	// Regular is an ordinary column.
	Regular ColumnKind = iota
	// PartitionKey is a column of the partition key.
	PartitionKey
	// Clustering is a clustering column.
	Clustering
	// Static is a static column, shared by all rows of a partition.
	Static
)

// String returns the kind's name, e.g. "partition_key".
func (k ColumnKind) String() string {
	switch k {
	case Regular:
		return "regular"
	case PartitionKey:
		return "partition_key"
	case Clustering:
		return "clustering"
	case Static:
		return "static"
	}
	return "invalid"
}

// ClusteringColumn is a clustering column and its sort order.
type ClusteringColumn struct {
	// Name is the column name.
	Name string
	// Order is the clustering order of the column.
	Order Order
}

// Order is a clustering order.
type Order uint8

// Clustering orders. Their numeric values are part of the encoding.
const (
	// Asc sorts ascending (the default).
	Asc Order = iota
	// Desc sorts descending.
	Desc
)

// String returns "ASC" or "DESC".
func (o Order) String() string {
	if o == Desc {
		return "DESC"
	}
	return "ASC"
}

// Column returns the column with the given name.
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// QualifiedName returns "keyspace.table".
func (t *Table) QualifiedName() string { return t.Keyspace + "." + t.Name }

// Table returns the table with the given name.
func (k *Keyspace) Table(name string) (*Table, bool) {
	if k == nil || k.tables == nil {
		return nil, false
	}
	return k.tables.Get(name)
}

// Tables returns the keyspace's tables sorted by name. It allocates a new
// slice that the caller owns; it walks all tables of the keyspace, so keep it
// off per-statement paths.
func (k *Keyspace) Tables() []*Table {
	if k == nil || k.tables == nil {
		return nil
	}
	out := make([]*Table, 0, k.tables.Len())
	it := k.tables.Iterator()
	for !it.Done() {
		_, t, _ := it.Next()
		out = append(out, t)
	}
	return out
}

// TableCount returns the number of tables in the keyspace.
func (k *Keyspace) TableCount() int {
	if k == nil || k.tables == nil {
		return 0
	}
	return k.tables.Len()
}

// withTables returns a shallow copy of k holding tables.
func (k *Keyspace) withTables(tables *immutable.SortedMap[string, *Table]) *Keyspace {
	c := *k
	c.tables = tables
	return &c
}

func (k *Keyspace) tableMap() *immutable.SortedMap[string, *Table] {
	if k.tables == nil {
		return immutable.NewSortedMap[string, *Table](nil)
	}
	return k.tables
}

// Keyspace returns the keyspace with the given name.
func (s Schema) Keyspace(name string) (*Keyspace, bool) {
	if s.keyspaces == nil {
		return nil, false
	}
	return s.keyspaces.Get(name)
}

// Keyspaces returns all keyspaces sorted by name, in a new slice the caller
// owns.
func (s Schema) Keyspaces() []*Keyspace {
	if s.keyspaces == nil {
		return nil
	}
	out := make([]*Keyspace, 0, s.keyspaces.Len())
	it := s.keyspaces.Iterator()
	for !it.Done() {
		_, k, _ := it.Next()
		out = append(out, k)
	}
	return out
}

// KeyspaceCount returns the number of keyspaces.
func (s Schema) KeyspaceCount() int {
	if s.keyspaces == nil {
		return 0
	}
	return s.keyspaces.Len()
}

// TableCount returns the total number of tables in all keyspaces, in O(1).
func (s Schema) TableCount() int { return s.tables }

// Table returns table name of keyspace ks.
func (s Schema) Table(ks, name string) (*Table, bool) {
	k, ok := s.Keyspace(ks)
	if !ok {
		return nil, false
	}
	return k.Table(name)
}

func (s Schema) keyspaceMap() *immutable.SortedMap[string, *Keyspace] {
	if s.keyspaces == nil {
		return immutable.NewSortedMap[string, *Keyspace](nil)
	}
	return s.keyspaces
}

// PutKeyspace returns a schema in which k replaces the keyspace of the same
// name. If that keyspace exists its tables are kept and the tables of k are
// ignored; otherwise the new keyspace has k's tables (none for a Keyspace
// built as a literal). k itself is not retained: a copy is. It is a
// low-level builder for loading a stored schema and does not validate k; a
// nil k returns s unchanged.
func (s Schema) PutKeyspace(k *Keyspace) Schema {
	if k == nil {
		return s
	}
	c := *k
	n := s.tables
	if old, ok := s.Keyspace(k.Name); ok {
		c.tables = old.tables
	} else {
		n += c.TableCount()
	}
	return Schema{keyspaces: s.keyspaceMap().Set(c.Name, &c), tables: n}
}

// PutTable returns a schema in which t replaces the table of the same name
// in keyspace t.Keyspace. It is a low-level builder for loading a stored
// schema: it checks the table's structure (an *Error with ErrInvalid) and
// that its keyspace exists (ErrNotFound). t is retained and must not be
// modified afterwards.
func (s Schema) PutTable(t *Table) (Schema, error) {
	const stmt = "PUT TABLE"
	if t == nil {
		return s, newError(stmt, "", ErrInvalid, "nil table")
	}
	if reason := validateTable(t); reason != "" {
		return s, newError(stmt, t.QualifiedName(), ErrInvalid, reason)
	}
	k, ok := s.Keyspace(t.Keyspace)
	if !ok {
		return s, newError(stmt, t.QualifiedName(), ErrNotFound, "keyspace "+t.Keyspace+" does not exist")
	}
	return s.putTable(k, t), nil
}

// putTable stores t in keyspace k (which must be the one in s).
func (s Schema) putTable(k *Keyspace, t *Table) Schema {
	m := k.tableMap()
	n := s.tables
	if _, exists := m.Get(t.Name); !exists {
		n++
	}
	k = k.withTables(m.Set(t.Name, t))
	return Schema{keyspaces: s.keyspaces.Set(k.Name, k), tables: n}
}

// deleteTable removes table name from keyspace k (which must be in s).
func (s Schema) deleteTable(k *Keyspace, name string) Schema {
	if _, ok := k.Table(name); !ok {
		return s
	}
	k = k.withTables(k.tables.Delete(name))
	return Schema{keyspaces: s.keyspaces.Set(k.Name, k), tables: s.tables - 1}
}

// deleteKeyspace removes keyspace k (which must be in s) and its tables.
func (s Schema) deleteKeyspace(k *Keyspace) Schema {
	return Schema{keyspaces: s.keyspaces.Delete(k.Name), tables: s.tables - k.TableCount()}
}
