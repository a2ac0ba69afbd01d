package schema

import (
	"strings"

	"github.com/benbjohnson/immutable"
)

// Schema is an immutable set of keyspaces and their tables, user-defined
// types and indexes. The zero value is the empty schema. Every change
// returns a new Schema that shares all unchanged keyspaces and objects with
// the old one, in O(log n) time; a Schema is safe to read from any number of
// goroutines.
type Schema struct {
	keyspaces *immutable.SortedMap[string, *Keyspace]
	tables    int    // total tables in all keyspaces (views left out), maintained incrementally
	views     int    // total materialized views in all keyspaces, likewise
	digest    digest // sum of the keyspace digests and encoded sizes, maintained incrementally
}

// Keyspace is a keyspace and its tables, types and indexes. Values reachable
// from a Schema must not be modified; build a new Keyspace instead.
type Keyspace struct {
	// Name is the keyspace name.
	Name string
	// Replication is the replication strategy, in canonical form.
	Replication Replication
	// DurableWrites is the durable_writes property.
	DurableWrites bool

	tables  *immutable.SortedMap[string, *Table]
	types   *immutable.SortedMap[string, *UserType]
	indexes *immutable.SortedMap[string, *Index] // by index name
	byTable *immutable.SortedMap[string, *Index] // by table "\x00" index name
	// functions are the functions and aggregates, by signature (see
	// function.go).
	functions *immutable.SortedMap[string, *Function]
	// byBase holds the materialized views (which are in tables too) by
	// base table "\x00" view name, so that the statements on a base
	// table find its views without a walk.
	byBase *immutable.SortedMap[string, *Table]
	// users records which tables, types, functions and aggregates use
	// each user type, keyed by type "\x00" kind user (kind 't' for a
	// table or view, 'u' for a type, 'f' for a function, 'a' for an
	// aggregate), and which aggregates use each function (funcUserPrefix),
	// so that DROP TYPE and DROP FUNCTION need no walk.
	users  *immutable.SortedMap[string, struct{}]
	digest digest // sum of the hashes and encoded sizes of the keyspace record and its objects
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
	// ID is the table id, held as its 16 bytes; ID.String is its UUID
	// text (lowercase, hyphenated), the form every output uses.
	ID UUID
	// Columns are all columns in definition order.
	Columns []Column
	// PartitionKey names the partition key columns in key order.
	PartitionKey []string
	// Clustering lists the clustering columns in key order.
	Clustering []ClusteringColumn
	// Extra holds the parts of a table that most tables leave empty: its
	// properties, dropped columns, triggers and view definition; nil when
	// all of them are. Read them with Options, DroppedColumns, Triggers
	// and View, which accept a nil Extra. An Extra is shared by a table
	// and the copies made of it (nt := *t) and by tables of one shape
	// (see table_share.go), so it is never modified: SetOptions,
	// SetDroppedColumns, SetTriggers and SetView give the table they are
	// called on a new one.
	Extra *TableExtra
}

// TableExtra is the part of a Table that most tables leave empty. Keeping
// it behind one pointer makes a minimal table 128 bytes instead of 184. A
// TableExtra reachable from a Table is never modified; build a new one.
type TableExtra struct {
	// Options are the table properties, validated, as canonical CQL
	// literal text keyed by property name (maps with sorted keys and string
	// values, numbers normalised). Nil when there are none.
	Options map[string]string
	// DroppedColumns remembers the columns dropped by ALTER TABLE, as
	// Cassandra does, so that re-adding one with an incompatible type is
	// refused. Types are stored with user types expanded to tuples. They
	// are part of the encoding and the digest but not of DESCRIBE output.
	DroppedColumns []DroppedColumn
	// Triggers are the table's triggers (CREATE TRIGGER), sorted by name,
	// names distinct; nil when there are none. They are part of the
	// table's encoding and digest, and DESCRIBE prints them after the
	// table's indexes (see trigger.go for why they live here).
	Triggers []Trigger
	// View is set when the table is a materialized view (see view.go):
	// its base table, its selection and its WHERE clause. Nil for a table.
	View *View
}

// Options returns t's properties (TableExtra.Options); nil when there are
// none. The map must not be modified.
func (t *Table) Options() map[string]string {
	if t.Extra == nil {
		return nil
	}
	return t.Extra.Options
}

// DroppedColumns returns the columns dropped from t
// (TableExtra.DroppedColumns). The slice must not be modified.
func (t *Table) DroppedColumns() []DroppedColumn {
	if t.Extra == nil {
		return nil
	}
	return t.Extra.DroppedColumns
}

// Triggers returns t's triggers (TableExtra.Triggers), sorted by name. The
// slice must not be modified.
func (t *Table) Triggers() []Trigger {
	if t.Extra == nil {
		return nil
	}
	return t.Extra.Triggers
}

// View returns t's view definition when t is a materialized view
// (TableExtra.View), else nil. It must not be modified.
func (t *Table) View() *View {
	if t.Extra == nil {
		return nil
	}
	return t.Extra.View
}

// SetOptions sets t's properties to opts, which t then holds.
func (t *Table) SetOptions(opts map[string]string) {
	t.editExtra(func(e *TableExtra) { e.Options = opts })
}

// SetDroppedColumns sets t's dropped columns to dropped, which t then
// holds.
func (t *Table) SetDroppedColumns(dropped []DroppedColumn) {
	t.editExtra(func(e *TableExtra) { e.DroppedColumns = dropped })
}

// SetTriggers sets t's triggers to triggers, which t then holds.
func (t *Table) SetTriggers(triggers []Trigger) {
	t.editExtra(func(e *TableExtra) { e.Triggers = triggers })
}

// SetView sets t's view definition to v (nil: t is a table), which t then
// holds.
func (t *Table) SetView(v *View) {
	t.editExtra(func(e *TableExtra) { e.View = v })
}

// editExtra is the copy on write of t.Extra: it gives t a copy of its
// Extra changed by edit, or nil when the copy is all empty. The Extra t
// had is left as it is, since the table t was copied from may hold it.
func (t *Table) editExtra(edit func(*TableExtra)) {
	var e TableExtra
	if t.Extra != nil {
		e = *t.Extra
	}
	edit(&e)
	t.Extra = e.orNil()
}

// orNil returns a new TableExtra holding e's parts, or nil when all of them
// are empty, as a table's Extra must then be. Only the new one is
// allocated.
func (e *TableExtra) orNil() *TableExtra {
	if len(e.Options) == 0 && len(e.DroppedColumns) == 0 && len(e.Triggers) == 0 && e.View == nil {
		return nil
	}
	c := *e
	return &c
}

// DroppedColumn is a column removed by ALTER TABLE ... DROP.
type DroppedColumn struct {
	// Name is the column name.
	Name string
	// Type is the column's type when it was dropped, user types expanded.
	Type Type
	// Epoch is the epoch of the drop (or its USING TIMESTAMP).
	Epoch uint64
	// Kind says whether the column was static, when the drop recorded it
	// (see dropped.go).
	Kind DroppedKind
}

// DroppedColumn returns the dropped-column record of name.
func (t *Table) DroppedColumn(name string) (*DroppedColumn, bool) {
	dropped := t.DroppedColumns()
	for i := range dropped {
		if dropped[i].Name == name {
			return &dropped[i], true
		}
	}
	return nil, false
}

// Column is a column of a table.
type Column struct {
	// Name is the column name.
	Name string
	// Type is the column's CQL type.
	Type Type
	// Kind says which part of the row the column belongs to.
	Kind ColumnKind
	// Mask is the column's dynamic data mask (MASKED WITH); nil when it
	// has none. Any column can have one, key columns included, as in
	// Cassandra (see mask.go).
	Mask *Mask
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
func (t *Table) QualifiedName() string { return qualify(t.Keyspace, t.Name) }

// Table returns the table with the given name.
func (k *Keyspace) Table(name string) (*Table, bool) {
	if k == nil || k.tables == nil {
		return nil, false
	}
	return k.tables.Get(name)
}

// Tables returns the keyspace's tables and materialized views (which
// share the tables' namespace; IsView tells them apart) sorted by name. It
// allocates a new slice that the caller owns; it walks all tables of the
// keyspace, so keep it off per-statement paths.
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

// TableCount returns the number of tables in the keyspace, views left
// out (ViewCount counts them), in O(1).
func (k *Keyspace) TableCount() int {
	if k == nil || k.tables == nil {
		return 0
	}
	return k.tables.Len() - k.ViewCount()
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

// TableCount returns the total number of tables in all keyspaces, in
// O(1). Materialized views are not tables here, as in Cassandra's count of
// tables for its tables guardrail; ViewCount counts them.
func (s Schema) TableCount() int { return s.tables }

// Table returns table name of keyspace ks.
func (s Schema) Table(ks, name string) (*Table, bool) {
	k, ok := s.Keyspace(ks)
	if !ok {
		return nil, false
	}
	return k.Table(name)
}

// keyspaceMap returns s's keyspace map, an empty one for the zero Schema.
func (s Schema) keyspaceMap() *immutable.SortedMap[string, *Keyspace] {
	if s.keyspaces == nil {
		return immutable.NewSortedMap[string, *Keyspace](nil)
	}
	return s.keyspaces
}

// Digest returns the digest of the whole schema: the sum modulo 2^256 of
// the SHA-256 of the canonical encoding of every keyspace, table, user type
// and index. Apply maintains it in O(changed objects), so nodes can compare
// schemas cheaply; ComputeDigest recomputes it from scratch.
func (s Schema) Digest() [32]byte { return s.digest.sum }

// EncodedSize returns the total length in bytes of the canonical encodings
// (AppendKeyspace, AppendTable, AppendUserType, AppendIndex) of every
// keyspace, table, user type and index of s, in O(1). Apply maintains it
// with the digest, in O(changed objects); it estimates the size of a
// snapshot of the schema. ComputeEncodedSize recomputes it from scratch.
func (s Schema) EncodedSize() int64 { return s.digest.size }

// ObjectCount returns the number of keyspaces, tables, types and indexes,
// maintained like EncodedSize.
func (s Schema) ObjectCount() int64 { return s.digest.count }

// putKeyspace returns a schema in which k replaces the keyspace of the same
// name, as Builder.PutKeyspace describes; a nil k returns s unchanged.
func (s Schema) putKeyspace(k *Keyspace) Schema {
	if k == nil {
		return s
	}
	c := *k
	n := s.tables
	if old, ok := s.Keyspace(k.Name); ok {
		c.tables, c.types, c.indexes, c.byTable, c.byBase, c.users = old.tables, old.types, old.indexes, old.byTable, old.byBase, old.users
		c.functions = old.functions
		c.digest = old.digest
		c.digest.sub(keyspaceHash(old))
		c.digest.add(keyspaceHash(&c))
		return s.replaceKeyspace(old, &c, 0)
	}
	n += c.TableCount()
	c.digest = keyspaceDigest(&c)
	d := s.digest
	d.add(c.digest)
	return Schema{keyspaces: s.keyspaceMap().Set(c.Name, &c), tables: n, views: s.views + c.ViewCount(), digest: d}
}

// replaceKeyspace stores nk in place of old (nil for a new keyspace),
// adjusting the table count by dt, the view count (by the keyspaces' own,
// in O(1)) and the digest.
func (s Schema) replaceKeyspace(old, nk *Keyspace, dt int) Schema {
	d := s.digest
	if old != nil {
		d.sub(old.digest)
	}
	d.add(nk.digest)
	return Schema{keyspaces: s.keyspaceMap().Set(nk.Name, nk), tables: s.tables + dt, views: s.views - old.ViewCount() + nk.ViewCount(), digest: d}
}

// putTable stores t in keyspace k (which must be the one in s), keeping
// the type users, the views of each base table and the digest up to
// date.
func (s Schema) putTable(k *Keyspace, t *Table) Schema {
	c := *k
	dt := tableDelta(t)
	old, _ := k.Table(t.Name)
	if old != nil {
		dt -= tableDelta(old)
	}
	c.indexTable(old, t)
	c.tables = setMap(c.tables, t.Name, t)
	return s.replaceKeyspace(k, &c, dt)
}

// indexTable accounts in k's digest, type users and view index for t
// replacing old (nil: t is new); the caller puts t in k's table map.
func (k *Keyspace) indexTable(old, t *Table) { k.indexTableHashed(old, t, tableHash(t)) }

// indexTableHashed is indexTable for t whose digest is h.
func (k *Keyspace) indexTableHashed(old, t *Table, h digest) {
	if old != nil {
		k.digest.sub(tableHash(old))
		k.users = updateUsers(k.users, 't', t.Name, tableTypeRefs(old), tableTypeRefs(t))
		k.byBase = unindexView(k.byBase, old)
	} else {
		k.users = updateUsers(k.users, 't', t.Name, nil, tableTypeRefs(t))
	}
	k.byBase = indexView(k.byBase, t)
	k.digest.add(h)
}

// tableDelta is what t adds to the table count: 1 for a table, 0 for a
// view (views are counted apart).
func tableDelta(t *Table) int {
	if t.View() != nil {
		return 0
	}
	return 1
}

// indexView returns byBase with t in it when t is a view.
func indexView(byBase *immutable.SortedMap[string, *Table], t *Table) *immutable.SortedMap[string, *Table] {
	if t.View() == nil {
		return byBase
	}
	return setMap(byBase, viewKey(t.View().Base, t.Name), t)
}

// unindexView returns byBase without t when t is a view.
func unindexView(byBase *immutable.SortedMap[string, *Table], t *Table) *immutable.SortedMap[string, *Table] {
	if t.View() == nil || byBase == nil {
		return byBase
	}
	return byBase.Delete(viewKey(t.View().Base, t.Name))
}

// deleteTable removes table (or view) t and its indexes from keyspace k
// (which must be in s). It returns the removed indexes.
func (s Schema) deleteTable(k *Keyspace, t *Table) (Schema, []*Index) {
	c := *k
	idx := k.TableIndexes(t.Name)
	for _, ix := range idx {
		c.removeIndex(ix)
	}
	c.digest.sub(tableHash(t))
	c.users = updateUsers(c.users, 't', t.Name, tableTypeRefs(t), nil)
	c.byBase = unindexView(c.byBase, t)
	c.tables = c.tables.Delete(t.Name)
	return s.replaceKeyspace(k, &c, -tableDelta(t)), idx
}

// putUserType stores ut in keyspace k (which must be in s).
func (s Schema) putUserType(k *Keyspace, ut *UserType) Schema {
	c := *k
	if old, ok := k.UserType(ut.Name); ok {
		c.digest.sub(userTypeHash(old))
		c.users = updateUsers(c.users, 'u', ut.Name, userTypeRefs(old), userTypeRefs(ut))
	} else {
		c.users = updateUsers(c.users, 'u', ut.Name, nil, userTypeRefs(ut))
	}
	c.digest.add(userTypeHash(ut))
	c.types = setMap(c.types, ut.Name, ut)
	return s.replaceKeyspace(k, &c, 0)
}

// deleteUserType removes ut from keyspace k (which must be in s).
func (s Schema) deleteUserType(k *Keyspace, ut *UserType) Schema {
	c := *k
	c.digest.sub(userTypeHash(ut))
	c.users = updateUsers(c.users, 'u', ut.Name, userTypeRefs(ut), nil)
	c.types = c.types.Delete(ut.Name)
	return s.replaceKeyspace(k, &c, 0)
}

// putIndex stores ix in keyspace k (which must be in s).
func (s Schema) putIndex(k *Keyspace, ix *Index) Schema {
	c := *k
	if old, ok := k.Index(ix.Name); ok {
		c.removeIndex(old)
	}
	c.digest.add(indexHash(ix))
	c.indexes = setMap(c.indexes, ix.Name, ix)
	c.byTable = setMap(c.byTable, ix.Table+"\x00"+ix.Name, ix)
	return s.replaceKeyspace(k, &c, 0)
}

// deleteIndex removes ix from keyspace k (which must be in s).
func (s Schema) deleteIndex(k *Keyspace, ix *Index) Schema {
	c := *k
	c.removeIndex(ix)
	return s.replaceKeyspace(k, &c, 0)
}

// removeIndex removes ix from the copy k.
func (k *Keyspace) removeIndex(ix *Index) {
	k.digest.sub(indexHash(ix))
	k.indexes = k.indexes.Delete(ix.Name)
	k.byTable = k.byTable.Delete(ix.Table + "\x00" + ix.Name)
}

// deleteKeyspace removes keyspace k (which must be in s) and everything in
// it, in O(log n): its digest is subtracted as a whole.
func (s Schema) deleteKeyspace(k *Keyspace) Schema {
	d := s.digest
	d.sub(k.digest)
	return Schema{keyspaces: s.keyspaces.Delete(k.Name), tables: s.tables - k.TableCount(), views: s.views - k.ViewCount(), digest: d}
}

// setMap returns m with key set to v, creating the map on first use (the
// zero Keyspace has nil maps).
func setMap[V any](m *immutable.SortedMap[string, V], key string, v V) *immutable.SortedMap[string, V] {
	if m == nil {
		m = immutable.NewSortedMap[string, V](nil)
	}
	return m.Set(key, v)
}

// updateUsers moves user kind+name from the types in old to those in new.
func updateUsers(m *immutable.SortedMap[string, struct{}], kind byte, name string, old, new []string) *immutable.SortedMap[string, struct{}] {
	for _, t := range old {
		if !contains(new, t) && m != nil {
			m = m.Delete(userKey(t, kind, name))
		}
	}
	for _, t := range new {
		if !contains(old, t) {
			m = setMap(m, userKey(t, kind, name), struct{}{})
		}
	}
	return m
}

// userKey is the key in Keyspace.users recording that user, of kind 't'
// (table) or 'u' (type), uses type typ; keys of one type sort together.
func userKey(typ string, kind byte, user string) string {
	return typ + "\x00" + string(kind) + user
}

// contains reports whether s is in list (a handful of type names).
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// typeUsers returns up to max users of type name as "table x", "type y",
// "function f(int)" or "aggregate a(int)",
// none when the type is unused. It costs O(log n + max).
func (k *Keyspace) typeUsers(name string, max int) []string {
	var out []string
	k.eachTypeUser(name, func(kind byte, user string) bool {
		switch kind {
		case 't':
			if t, ok := k.Table(user); ok && t.View() != nil {
				out = append(out, "materialized view "+user)
			} else {
				out = append(out, "table "+user)
			}
		case 'f':
			out = append(out, "function "+user)
		case 'a':
			out = append(out, "aggregate "+user)
		default:
			out = append(out, "type "+user)
		}
		return len(out) < max
	})
	return out
}

// eachTypeUser calls fn with the kind ('t', 'u', 'f' or 'a', as in
// Keyspace.users) and the name of each direct user of type name, in key
// order, until fn returns false. It costs O(log n) plus the users seen.
func (k *Keyspace) eachTypeUser(name string, fn func(kind byte, user string) bool) {
	if k.users == nil {
		return
	}
	prefix := name + "\x00"
	it := k.users.Iterator()
	it.Seek(prefix)
	for !it.Done() {
		key, _, _ := it.Next()
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok || rest == "" || !fn(rest[0], rest[1:]) {
			return
		}
	}
}

// UserType returns the user-defined type with the given name.
func (k *Keyspace) UserType(name string) (*UserType, bool) {
	if k == nil || k.types == nil {
		return nil, false
	}
	return k.types.Get(name)
}

// UserTypes returns the keyspace's user types sorted by name, in a new slice
// the caller owns. It walks all types of the keyspace.
func (k *Keyspace) UserTypes() []*UserType {
	if k == nil {
		return nil
	}
	return values(k.types)
}

// Index returns the index with the given name.
func (k *Keyspace) Index(name string) (*Index, bool) {
	if k == nil || k.indexes == nil {
		return nil, false
	}
	return k.indexes.Get(name)
}

// Indexes returns the keyspace's indexes sorted by name, in a new slice the
// caller owns. It walks all indexes of the keyspace.
func (k *Keyspace) Indexes() []*Index {
	if k == nil {
		return nil
	}
	return values(k.indexes)
}

// TableIndexes returns the indexes of table name sorted by index name, in a
// new slice the caller owns, in O(log n + indexes of the table).
func (k *Keyspace) TableIndexes(table string) []*Index {
	if k == nil || k.byTable == nil {
		return nil
	}
	prefix := table + "\x00"
	var out []*Index
	it := k.byTable.Iterator()
	it.Seek(prefix)
	for !it.Done() {
		key, ix, _ := it.Next()
		if !strings.HasPrefix(key, prefix) {
			break
		}
		out = append(out, ix)
	}
	return out
}

// values returns m's values in key order, nil for an empty map.
func values[V any](m *immutable.SortedMap[string, V]) []V {
	if m == nil || m.Len() == 0 {
		return nil
	}
	out := make([]V, 0, m.Len())
	it := m.Iterator()
	for !it.Done() {
		_, v, _ := it.Next()
		out = append(out, v)
	}
	return out
}
