package schema

import (
	"encoding/binary"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Materialized views are schema objects here, as in Cassandra, whose
// ViewMetadata holds a TableMetadata: a view is a *Table with a non-nil
// View. metalog keeps a view's definition; it never maintains view data.
//
// A view lives in its keyspace's table map, so a view and a table cannot
// have the same name (as in Cassandra), and CREATE, ALTER and DROP
// MATERIALIZED VIEW are OpPutTable and OpDropTable changes: a view rides
// through the encoding (flagView), the digest, the store, snapshots,
// history events, Undo and the change feed as a table does. Keyspace
// keeps an index of the views of each base table (byBase), so that the
// statements on a base table that must see its views (DROP TABLE, ALTER
// TABLE) find them in O(log n) without walking the keyspace.
//
// Views do not count as tables: Schema.TableCount and Keyspace.TableCount
// leave them out, and CREATE MATERIALIZED VIEW does not check the tables
// guardrail, as Cassandra's CreateTableStatement counts ksm.tables (its
// views are in ksm.views) and its CreateViewStatement checks
// materialized_views_per_table instead. ViewCount counts them.

// flagView marks the view section of an encoded table, written last. A
// table that is not a view encodes as before views existed.
const flagView = 1 << 4

// viewAllColumns is the view section's flag for SELECT *.
const viewAllColumns = 1

// Relation flags in the view section.
const (
	relationTuple = 1 << iota
	relationKey
)

// View is what makes a Table a materialized view: its base table and how
// the view selects from it. The view's columns (the columns it selects,
// with the base's types), primary key and clustering order are the
// Table's; they are kept in select order, as Cassandra lists them: the
// partition key, the clustering columns, then the other columns by name.
type View struct {
	// Base is the base table, in the view's keyspace.
	Base string
	// AllColumns is SELECT *: the view has every column of the base, and
	// a column ALTER TABLE ADD adds to the base is added to the view (a
	// regular one; a static column never is).
	AllColumns bool
	// Where are the relations of the WHERE clause, in the order written,
	// each in canonical text (see ViewRelation); never empty, as every
	// column of the view's key is restricted.
	Where []ViewRelation
}

// IsView reports whether t is a materialized view.
func (t *Table) IsView() bool { return t.View() != nil }

// viewKey is the key of view of base in Keyspace.byBase.
func viewKey(base, view string) string { return base + "\x00" + view }

// Views returns the materialized views of base table name, sorted by
// name, in a new slice the caller owns, in O(log n + its views).
func (k *Keyspace) Views(base string) []*Table {
	if k == nil || k.byBase == nil {
		return nil
	}
	prefix := base + "\x00"
	var out []*Table
	it := k.byBase.Iterator()
	it.Seek(prefix)
	for !it.Done() {
		key, v, _ := it.Next()
		if !strings.HasPrefix(key, prefix) {
			break
		}
		out = append(out, v)
	}
	return out
}

// hasViews reports whether base table name has views, in O(log n).
func (k *Keyspace) hasViews(base string) bool {
	if k == nil || k.byBase == nil {
		return false
	}
	it := k.byBase.Iterator()
	it.Seek(base + "\x00")
	if it.Done() {
		return false
	}
	key, _, _ := it.Next()
	return strings.HasPrefix(key, base+"\x00")
}

// AllViews returns the materialized views of the keyspace ordered by
// base table, then by name, in a new slice the caller owns, in O(views).
func (k *Keyspace) AllViews() []*Table {
	if k == nil || k.byBase == nil {
		return nil
	}
	out := make([]*Table, 0, k.byBase.Len())
	it := k.byBase.Iterator()
	for !it.Done() {
		_, v, _ := it.Next()
		out = append(out, v)
	}
	return out
}

// ViewCount returns the number of materialized views of the keyspace.
func (k *Keyspace) ViewCount() int {
	if k == nil || k.byBase == nil {
		return 0
	}
	return k.byBase.Len()
}

// ViewCount returns the number of materialized views in all keyspaces,
// in O(1). TableCount leaves them out.
func (s Schema) ViewCount() int { return s.views }

// viewNames lists the names of views, for messages.
func viewNames(views []*Table) string {
	names := make([]string, len(views))
	for i, v := range views {
		names[i] = clip.String(v.Name)
	}
	return strings.Join(names, ", ")
}

// appendView appends the view section of t's encoding: the base, the
// flags, then the relations (flags, columns, key, operator, value).
func appendView(dst []byte, v *View) []byte {
	dst = appendString(dst, v.Base)
	var flags byte
	if v.AllColumns {
		flags |= viewAllColumns
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(v.Where)))
	for i := range v.Where {
		r := &v.Where[i]
		var rf byte
		if r.Tuple {
			rf |= relationTuple
		}
		if r.Key != "" {
			rf |= relationKey
		}
		dst = append(dst, rf)
		dst = binary.AppendUvarint(dst, uint64(len(r.Columns)))
		for _, c := range r.Columns {
			dst = appendString(dst, c)
		}
		if r.Key != "" {
			dst = appendString(dst, r.Key)
		}
		dst = appendString(dst, r.Op)
		dst = appendString(dst, r.Value)
	}
	return dst
}

// view reads the view section appendView writes.
func (d *decoder) view() *View {
	v := &View{Base: d.string()}
	flags := d.byte()
	if d.err == nil && flags&^viewAllColumns != 0 {
		d.off--
		d.fail("unknown view flags %#x", flags)
	}
	v.AllColumns = flags&viewAllColumns != 0
	n := d.count(4)
	if d.err != nil {
		return nil
	}
	v.Where = make([]ViewRelation, n)
	for i := range v.Where {
		r := &v.Where[i]
		rf := d.byte()
		if d.err == nil && rf&^(relationTuple|relationKey) != 0 {
			d.off--
			d.fail("unknown relation flags %#x", rf)
		}
		r.Tuple = rf&relationTuple != 0
		nc := d.count(1)
		if d.err != nil {
			return nil
		}
		r.Columns = make([]string, nc)
		for j := range r.Columns {
			r.Columns[j] = d.string()
		}
		if rf&relationKey != 0 {
			if r.Key = d.string(); d.err == nil && r.Key == "" {
				d.fail("relation key flag with an empty key")
			}
		}
		r.Op = d.string()
		r.Value = d.string()
	}
	return v
}

// viewReason checks the structural invariants of a view, after those of
// every table: a base named as tables are, other than the view; no
// static or counter column (Cassandra refuses them in views); no
// triggers and no dropped columns (no statement gives a view either);
// the columns in select order; and a WHERE clause of relations in
// canonical text.
func viewReason(t *Table) string {
	v := t.View()
	if r := nameReason("table", v.Base); r != "" {
		return "base " + r
	}
	if v.Base == t.Name {
		return "materialized view " + clip.String(t.Name) + " cannot be its own base table"
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		switch {
		case c.Kind == Static:
			return "materialized view column " + clip.String(c.Name) + " is static"
		case c.Type == TypeCounter:
			return "materialized view column " + clip.String(c.Name) + " is a counter"
		}
	}
	if len(t.Triggers()) > 0 {
		return "a materialized view has no triggers"
	}
	if len(t.DroppedColumns()) > 0 {
		return "a materialized view has no dropped columns"
	}
	if r := selectOrderReason(t); r != "" {
		return r
	}
	if len(v.Where) == 0 {
		return "a materialized view needs a WHERE clause"
	}
	for i := range v.Where {
		if r := relationReason(&v.Where[i]); r != "" {
			return r
		}
	}
	return ""
}

// selectOrderReason checks that t's columns come in select order: the
// partition key, the clustering columns, then the regular columns by
// name, so that equal views encode equally.
func selectOrderReason(t *Table) string {
	i := 0
	for _, name := range t.PartitionKey {
		if i >= len(t.Columns) || t.Columns[i].Name != name {
			return "materialized view columns are not in select order at partition key column " + clip.String(name)
		}
		i++
	}
	for _, cc := range t.Clustering {
		if i >= len(t.Columns) || t.Columns[i].Name != cc.Name {
			return "materialized view columns are not in select order at clustering column " + clip.String(cc.Name)
		}
		i++
	}
	for j := i + 1; j < len(t.Columns); j++ {
		if t.Columns[j-1].Name >= t.Columns[j].Name {
			return "materialized view columns are not in select order at column " + clip.String(t.Columns[j].Name)
		}
	}
	return ""
}

// selectOrder sorts view columns into select order: the partition key,
// the clustering columns, then the regular columns by name.
func selectOrder(t *Table) {
	rank := func(c *Column) int {
		switch c.Kind {
		case PartitionKey:
			for i, n := range t.PartitionKey {
				if n == c.Name {
					return i
				}
			}
		case Clustering:
			for i, cc := range t.Clustering {
				if cc.Name == c.Name {
					return len(t.PartitionKey) + i
				}
			}
		}
		return len(t.PartitionKey) + len(t.Clustering)
	}
	sort.SliceStable(t.Columns, func(i, j int) bool {
		a, b := &t.Columns[i], &t.Columns[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a.Name < b.Name
	})
}

// Messages of Cassandra's rules on views, for the statements on tables.
const (
	viewCannotAlterTable = "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead"
	viewCannotDropTable  = "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead."
	viewNoIndexes        = "Secondary indexes are not supported on materialized views"
	viewNoTriggers       = "Cannot CREATE TRIGGER for a materialized view"
	gcGraceViewBase      = "Cannot alter gc_grace_seconds of the base table of a materialized view to 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed."
)

// CreateView is CREATE MATERIALIZED VIEW [IF NOT EXISTS] [ks.]name AS
// SELECT (columns | *) FROM [ks.]base WHERE relations PRIMARY KEY (...)
// [WITH CLUSTERING ORDER BY (...) AND properties].
type CreateView struct {
	// Keyspace is the view's keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the view's name.
	Name string
	// IfNotExists makes creating an existing view a no-op.
	IfNotExists bool
	// BaseKeyspace is the keyspace written with the base table, which
	// must be the view's; empty when the base is not qualified.
	BaseKeyspace string
	// Base is the base table.
	Base string
	// AllColumns is SELECT *.
	AllColumns bool
	// Columns are the selected columns, in the order written (a column
	// given twice is selected once, as in Cassandra); empty with
	// AllColumns.
	Columns []string
	// Where are the relations of the WHERE clause, in canonical text.
	Where []ViewRelation
	// PartitionKey and Clustering are the view's PRIMARY KEY.
	PartitionKey, Clustering []string
	// ClusteringOrder is WITH CLUSTERING ORDER BY: when given, every
	// clustering column in key order. A clustering column it does not
	// order keeps the order it has in the base table (ascending if it is
	// not a clustering column there), as in Cassandra.
	ClusteringOrder []ClusteringColumn
	// ID is the view's id (WITH ID = ...); empty derives it from Env.
	ID string
	// Options are the other properties as CQL literal text.
	Options map[string]string
}

// Kind returns "CREATE MATERIALIZED VIEW".
func (*CreateView) Kind() string { return "CREATE MATERIALIZED VIEW" }

// Object returns "keyspace.view", or the view alone when the keyspace is
// left to the default.
func (st *CreateView) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *CreateView) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, err := newTarget(s, env, st.Kind(), st.Keyspace, st.Name, &tableObject, false)
	if tg.k == nil {
		return tg.end(err)
	}
	k := tg.k
	if st.BaseKeyspace != "" && st.BaseKeyspace != k.Name {
		return tg.fail(ErrInvalid, "Cannot create a materialized view on a table in a different keyspace")
	}
	if r := nameReason("table", st.Name); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	base, ok := k.Table(st.Base)
	if !ok {
		return tg.fail(ErrNotFound, "Base table '"+clip.String(st.Base)+"' doesn't exist")
	}
	if old, exists := k.Table(st.Name); exists {
		if old.View() == nil {
			return tg.fail(ErrAlreadyExists, "Cannot create materialized view '"+clip.String(st.Name)+"' - a table with the same name already exists")
		}
		if st.IfNotExists {
			return tg.end(nil)
		}
		return tg.fail(ErrAlreadyExists, "materialized view already exists")
	}
	switch {
	case isCounterTable(base):
		return tg.fail(ErrInvalid, "Materialized views are not supported on counter tables")
	case base.View() != nil:
		return tg.fail(ErrInvalid, "Materialized views cannot be created against other materialized views")
	case base.Options()["gc_grace_seconds"] == "0":
		return tg.fail(ErrInvalid, "Cannot create materialized view '"+clip.String(st.Name)+"' for base table '"+clip.String(base.Name)+"' with gc_grace_seconds of 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.")
	}
	v, r := st.build(k, base, env)
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putTable(k, v), Diff{Changes: []Change{{Op: OpPutTable, Keyspace: k.Name, Table: v.Name, TableValue: v}}}, tg.res, nil
}

// build makes the view, checking the statement against base as
// Cassandra's CreateViewStatement does, in its order: the selection, the
// primary key, the clustering order, the base's key in the view's, the
// WHERE clause, then the properties.
func (st *CreateView) build(k *Keyspace, base *Table, env Env) (*Table, string) {
	selected, r := st.selection(base)
	if r != "" {
		return nil, r
	}
	v := &Table{Keyspace: k.Name, Name: st.Name, Extra: &TableExtra{View: &View{Base: base.Name, AllColumns: st.AllColumns}}}
	if r := st.primaryKey(k, base, v, selected); r != "" {
		return nil, r
	}
	if r := st.whereClause(k, base, v); r != "" {
		return nil, r
	}
	opts, r := tableOptions(st.Options)
	if r != "" {
		return nil, r
	}
	v.SetOptions(opts)
	if _, ttl := v.Options()["default_time_to_live"]; ttl {
		return nil, "Cannot set default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table."
	}
	if st.ID == "" {
		v.ID = env.tableID()
	} else {
		id, ok := ParseUUID(st.ID)
		if !ok {
			return nil, "table id " + clip.String(st.ID) + " is not a UUID"
		}
		v.ID = id
	}
	for _, c := range selected {
		if !isKeyColumn(v, c.Name) {
			v.Columns = append(v.Columns, Column{Name: c.Name, Type: c.Type, Kind: Regular, Mask: c.Mask})
		}
	}
	selectOrder(v)
	if r := validateTable(v); r != "" {
		return nil, r
	}
	return v, ""
}

// isKeyColumn reports whether name is in t's primary key.
func isKeyColumn(t *Table, name string) bool {
	return contains(t.PartitionKey, name) || clusteringPosition(t, name) >= 0
}

// selection returns the base columns the view selects: all for SELECT *,
// else those named (a name given twice counts once). A static column is
// refused.
func (st *CreateView) selection(base *Table) ([]*Column, string) {
	var out []*Column
	if st.AllColumns {
		if len(st.Columns) > 0 {
			return nil, "SELECT * takes no column list"
		}
		for i := range base.Columns {
			out = append(out, &base.Columns[i])
		}
	} else {
		if len(st.Columns) == 0 {
			return nil, "a materialized view selects * or at least one column"
		}
		for _, name := range st.Columns {
			c, ok := base.Column(name)
			if !ok {
				return nil, "Undefined column name " + clip.String(cqltext.QuoteIdentifier(name)) + " in table " + clip.String(base.QualifiedName())
			}
			if !containsColumn(out, name) {
				out = append(out, c)
			}
		}
	}
	for _, c := range out {
		if c.Kind == Static {
			return nil, "Cannot include static column '" + clip.String(c.Name) + "' in materialized view '" + clip.String(st.Name) + "'"
		}
	}
	return out, ""
}

// containsColumn reports whether cols has a column called name.
func containsColumn(cols []*Column, name string) bool {
	for _, c := range cols {
		if c.Name == name {
			return true
		}
	}
	return false
}

// primaryKey sets v's key columns from the PRIMARY KEY clause, checking
// each as Cassandra does (selected, once, a type a key can hold), the
// clustering order, that the key holds the base's, and at most one other
// base column.
func (st *CreateView) primaryKey(k *Keyspace, base, v *Table, selected []*Column) string {
	if len(st.PartitionKey) == 0 {
		return "Must provide at least one partition key column for materialized view '" + clip.String(st.Name) + "'"
	}
	seen := map[string]bool{}
	key := append(append([]string(nil), st.PartitionKey...), st.Clustering...)
	for i, name := range key {
		if !containsColumn(selected, name) {
			return "Unknown column '" + clip.String(name) + "' referenced in PRIMARY KEY for materialized view '" + clip.String(st.Name) + "'"
		}
		if seen[name] {
			return "Duplicate column '" + clip.String(name) + "' in PRIMARY KEY clause for materialized view '" + clip.String(st.Name) + "'"
		}
		seen[name] = true
		c, _ := base.Column(name)
		switch t := c.Type; {
		case IsMultiCell(t):
			if _, udt := t.(UserTypeRef); udt {
				return "Invalid non-frozen user-defined type '" + typeString(t) + "' for PRIMARY KEY column '" + clip.String(name) + "'"
			}
			return "Invalid non-frozen collection type '" + typeString(t) + "' for PRIMARY KEY column '" + clip.String(name) + "'"
		case t == TypeCounter:
			return "counter type is not supported for PRIMARY KEY column '" + clip.String(name) + "'"
		case containsDuration(t) || usesDurationThroughTypes(k, t, 0):
			return "duration type is not supported for PRIMARY KEY column '" + clip.String(name) + "'"
		}
		kind := PartitionKey
		if i >= len(st.PartitionKey) {
			kind = Clustering
		}
		v.Columns = append(v.Columns, Column{Name: name, Type: c.Type, Kind: kind, Mask: c.Mask})
	}
	v.PartitionKey = append([]string(nil), st.PartitionKey...)
	if r := st.clusteringOrder(base, v); r != "" {
		return r
	}
	var missing []string
	for _, name := range base.PartitionKey {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	for _, cc := range base.Clustering {
		if !seen[cc.Name] {
			missing = append(missing, cc.Name)
		}
	}
	if len(missing) > 0 {
		return "Cannot create materialized view '" + clip.String(st.Name) + "' without primary key columns " + clip.String(strings.Join(missing, ", ")) + " from base table '" + clip.String(base.Name) + "'"
	}
	var extra []string
	for _, name := range key {
		if !isKeyColumn(base, name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 1 {
		return "Cannot include more than one non-primary key column in materialized view primary key (got " + clip.String(strings.Join(extra, ", ")) + ")"
	}
	return ""
}

// clusteringOrder sets v's clustering columns and their order: WITH
// CLUSTERING ORDER BY, which must name every clustering column in key
// order, each once; else the order each has in the base table.
func (st *CreateView) clusteringOrder(base, v *Table) string {
	given := map[string]Order{}
	for _, co := range st.ClusteringOrder {
		if _, dup := given[co.Name]; dup {
			return "Duplicate column '" + clip.String(co.Name) + "' in CLUSTERING ORDER BY clause for view '" + clip.String(st.Name) + "'"
		}
		if co.Order != Asc && co.Order != Desc {
			return "invalid clustering order for " + clip.String(co.Name)
		}
		given[co.Name] = co.Order
	}
	if len(st.ClusteringOrder) > 0 {
		match := len(st.ClusteringOrder) == len(st.Clustering)
		for i := 0; match && i < len(st.Clustering); i++ {
			match = st.ClusteringOrder[i].Name == st.Clustering[i]
		}
		if !match {
			return "Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive"
		}
	}
	for _, name := range st.Clustering {
		order, ok := given[name]
		if !ok {
			if i := clusteringPosition(base, name); i >= 0 {
				order = base.Clustering[i].Order
			}
		}
		v.Clustering = append(v.Clustering, ClusteringColumn{Name: name, Order: order})
	}
	return ""
}

// whereClause checks the WHERE clause against base and the view's key,
// and keeps it: every column of the view's key restricted (by IS NOT NULL
// or otherwise), a column outside the base's key only by IS NOT NULL.
func (st *CreateView) whereClause(k *Keyspace, base, v *Table) string {
	notNull, restricted, r := viewWhere(k, base, st.Where)
	if r != "" {
		return r
	}
	var unrestricted []string
	for _, c := range v.Columns {
		if !notNull[c.Name] && !restricted[c.Name] {
			unrestricted = append(unrestricted, c.Name)
		}
	}
	if len(unrestricted) > 0 {
		return "Primary key columns " + clip.String(strings.Join(unrestricted, ", ")) + " must be restricted with 'IS NOT NULL' or otherwise"
	}
	var illegal []string
	for _, c := range base.Columns {
		if restricted[c.Name] && !isKeyColumn(base, c.Name) {
			illegal = append(illegal, c.Name)
		}
	}
	if len(illegal) > 0 {
		return "Non-primary key columns can only be restricted with 'IS NOT NULL' (got: " + clip.String(strings.Join(illegal, ",")) + " restricted illegally)"
	}
	// v is the view being built: its Extra and View are its own.
	where := make([]ViewRelation, len(st.Where))
	for i, rel := range st.Where {
		rel.Columns = append([]string(nil), rel.Columns...)
		where[i] = rel
	}
	v.Extra.View.Where = where
	return ""
}

// viewTarget starts ALTER or DROP MATERIALIZED VIEW: the keyspace and the
// view. v is nil when the statement ends there, with tg.end(err): a
// missing keyspace or view is a no-op under ifExists and ErrNotFound
// otherwise, and so is a table of that name, which the error names.
func viewTarget(s Schema, env Env, kind, ks, name string, ifExists bool, tableVerb string) (tg target, v *Table, err error) {
	tg, err = newTarget(s, env, kind, ks, name, &tableObject, ifExists)
	if tg.k == nil {
		return tg, nil, err
	}
	t, ok := tg.k.Table(name)
	switch {
	case ok && t.View() != nil:
		return tg, t, nil
	case ifExists:
		return tg, nil, nil
	case ok:
		return tg, nil, newError(kind, tg.obj, ErrNotFound, "materialized view does not exist: "+clip.String(t.QualifiedName())+" is a table (use "+tableVerb+" TABLE)")
	}
	return tg, nil, newError(kind, tg.obj, ErrNotFound, "materialized view does not exist")
}

// AlterView is ALTER MATERIALIZED VIEW [IF EXISTS] [ks.]name WITH
// properties.
type AlterView struct {
	// Keyspace is the view's keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the view's name.
	Name string
	// IfExists makes altering a missing view a no-op.
	IfExists bool
	// Options are the properties to set, as CQL literal text.
	Options map[string]string
}

// Kind returns "ALTER MATERIALIZED VIEW".
func (*AlterView) Kind() string { return "ALTER MATERIALIZED VIEW" }

// Object returns "keyspace.view", or the view alone when the keyspace is
// left to the default.
func (st *AlterView) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *AlterView) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, old, err := viewTarget(s, env, st.Kind(), st.Keyspace, st.Name, st.IfExists, "ALTER")
	if old == nil {
		return tg.end(err)
	}
	if len(st.Options) == 0 {
		return tg.fail(ErrInvalid, "ALTER MATERIALIZED VIEW needs WITH properties")
	}
	v := *old
	alter := AlterTable{Options: st.Options}
	if r := alter.setOptions(&v); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	if v.Options()["gc_grace_seconds"] == "0" {
		return tg.fail(ErrInvalid, "Cannot alter gc_grace_seconds of a materialized view to 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.")
	}
	if ttl, err := strconv.ParseInt(v.Options()["default_time_to_live"], 10, 64); err == nil && ttl > 0 {
		return tg.fail(ErrInvalid, "Forbidden default_time_to_live detected for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table. default_time_to_live must be set to zero, see CASSANDRA-12868 for more information")
	}
	if _, ok := v.Options()["default_time_to_live"]; ok {
		// Zero, the only value a view takes, is its default: it is not
		// kept, so that a view's DESCRIBE (which CREATE MATERIALIZED
		// VIEW must take back, and it refuses the property) leaves it out,
		// as Cassandra's does.
		opts := maps.Clone(v.Options())
		delete(opts, "default_time_to_live")
		v.SetOptions(opts)
	}
	if r := validateTable(&v); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putTable(tg.k, &v), Diff{Changes: []Change{{Op: OpPutTable, Keyspace: tg.k.Name, Table: v.Name, TableValue: &v}}}, tg.res, nil
}

// DropView is DROP MATERIALIZED VIEW [IF EXISTS] [ks.]name.
type DropView struct {
	// Keyspace is the view's keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the view's name.
	Name string
	// IfExists makes dropping a missing view a no-op.
	IfExists bool
}

// Kind returns "DROP MATERIALIZED VIEW".
func (*DropView) Kind() string { return "DROP MATERIALIZED VIEW" }

// Object returns "keyspace.view", or the view alone when the keyspace is
// left to the default.
func (st *DropView) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *DropView) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, v, err := viewTarget(s, env, st.Kind(), st.Keyspace, st.Name, st.IfExists, "DROP")
	if v == nil {
		return tg.end(err)
	}
	tg.res.Applied = true
	ns, _ := s.deleteTable(tg.k, v)
	return ns, Diff{Changes: []Change{{Op: OpDropTable, Keyspace: tg.k.Name, Table: v.Name}}}, tg.res, nil
}

// withViewColumns returns the views of base (in k) that a change of the
// base's columns changes, each as it is after the change: a column
// added to the base (regular) is added to every SELECT * view, and a
// key column renamed is renamed in every view, in its columns, key and
// WHERE clause, as Cassandra's ALTER TABLE does. The views come in name
// order.
func withViewColumns(k *Keyspace, base string, added []Column, renamed []RenameField) []*Table {
	var out []*Table
	for _, old := range k.Views(base) {
		v := *old
		view := *old.View()
		v.SetView(&view)
		changed := false
		if view.AllColumns {
			for _, c := range added {
				if c.Kind == Regular {
					v.Columns = append(append([]Column(nil), v.Columns...), c)
					changed = true
				}
			}
		}
		for _, rn := range renamed {
			if i := columnIndex(&v, rn.From); i < len(v.Columns) {
				v.Columns = append([]Column(nil), v.Columns...)
				v.Columns[i].Name = rn.To
				v.PartitionKey = renamedIn(v.PartitionKey, rn)
				cl := append([]ClusteringColumn(nil), v.Clustering...)
				for j := range cl {
					if cl[j].Name == rn.From {
						cl[j].Name = rn.To
					}
				}
				v.Clustering = cl
				changed = true
			}
			where := make([]ViewRelation, len(view.Where))
			for j, r := range view.Where {
				r.Columns = renamedIn(r.Columns, rn)
				where[j] = r
			}
			view.Where = where
			changed = true
		}
		if changed {
			selectOrder(&v)
			out = append(out, &v)
		}
	}
	return out
}

// selectStarView returns a SELECT * view of table name in k, or nil, in
// O(log n + its views).
func selectStarView(k *Keyspace, name string) *Table {
	for _, v := range k.Views(name) {
		if v.View().AllColumns {
			return v
		}
	}
	return nil
}

// renamedIn returns names with rn.From renamed rn.To (a new slice).
func renamedIn(names []string, rn RenameField) []string {
	out := append([]string(nil), names...)
	for i := range out {
		if out[i] == rn.From {
			out[i] = rn.To
		}
	}
	return out
}

// SameViewDefinition reports whether views a and b select the same from
// the same base table: the same base, SELECT * or the same columns with
// the same types, the same primary key and clustering order, and the
// same WHERE relations, in any order. Their properties and ids may
// differ: ALTER MATERIALIZED VIEW changes the properties, while the rest
// is fixed once the view is created. A SELECT * view's other columns are
// the base's, so they are not compared.
func SameViewDefinition(a, b *Table) bool {
	va, vb := a.View(), b.View()
	if va == nil || vb == nil || va.Base != vb.Base || va.AllColumns != vb.AllColumns {
		return false
	}
	if len(a.PartitionKey) != len(b.PartitionKey) || len(a.Clustering) != len(b.Clustering) {
		return false
	}
	for i := range a.PartitionKey {
		if a.PartitionKey[i] != b.PartitionKey[i] {
			return false
		}
	}
	for i := range a.Clustering {
		if a.Clustering[i] != b.Clustering[i] {
			return false
		}
	}
	if !va.AllColumns && len(a.Columns) != len(b.Columns) {
		return false
	}
	for _, c := range a.Columns {
		d, ok := b.Column(c.Name)
		switch {
		case !ok && (!va.AllColumns || isKeyColumn(a, c.Name)):
			return false
		case ok && (d.Kind != c.Kind || !TypesEqual(d.Type, c.Type)):
			return false
		}
	}
	ra, rb := sortedRelations(va.Where), sortedRelations(vb.Where)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if ra[i] != rb[i] {
			return false
		}
	}
	return true
}
