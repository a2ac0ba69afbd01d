package schema

import (
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Statement is a DDL transformation. Apply runs it; the set of
// implementations is closed to this package so that every node applies the
// same, deterministic rules.
type Statement interface {
	// Kind is the statement kind, e.g. "CREATE TABLE".
	Kind() string
	// Object names what the statement is about, e.g. "shop.orders" (only
	// "orders" when the keyspace is left to Env.DefaultKeyspace).
	Object() string
	apply(s Schema, env Env) (Schema, Diff, Result, error)
	// keyspaces appends the keyspaces the statement touches (Keyspaces).
	keyspaces(dst []string, defaultKeyspace string) []string
}

// Env is what Apply needs besides the schema and the statement. It must be
// the same on every node for the same log entry.
type Env struct {
	// DefaultKeyspace is used by table statements that name no keyspace.
	DefaultKeyspace string
	// Epoch is the epoch this change will get. Table ids derive from it.
	Epoch uint64
	// Seq numbers the statements sharing one epoch (0 for the first), so
	// that tables created in one batch get distinct ids.
	Seq uint32
	// Rules is the rules version of the log entry (RulesOriginal to
	// CurrentRules): the behaviour changes that apply to it (see
	// dropped.go).
	Rules uint64
	// Cluster is the id of the cluster whose member proposed the change, as
	// the log entry carries it: under RulesClusterTableIDs table ids derive
	// from it and the epoch (ClusterTableID). 0: not known (entries of
	// earlier releases, schemas built outside a cluster), and ids derive
	// from the epoch alone (TableID).
	Cluster uint64
}

// Result describes the outcome of one statement.
type Result struct {
	// Kind is the statement kind, e.g. "CREATE TABLE".
	Kind string
	// Keyspace is the keyspace the statement is about.
	Keyspace string
	// Table is the table the statement is about, if any (for an index,
	// the indexed table; for a materialized view, the view).
	Table string
	// Name is the user type or index the statement is about, if any (for
	// CREATE INDEX without a name, the derived name; for a function or
	// aggregate, its signature).
	Name string
	// Applied is false when IF [NOT] EXISTS made the statement a no-op.
	Applied bool
	// Warning is what Cassandra tells the client about an applied
	// statement that is no guardrail's, in its words (CREATE TABLE ...
	// LIKE ... WITH INDEXES naming the custom indexes it did not copy);
	// empty when there is none. A string, so that Result stays comparable.
	Warning string
}

// Diff lists what a statement changed, in the order to write it.
type Diff struct {
	// Changes are the changed entries; empty for a no-op.
	Changes []Change
}

// Empty reports whether the diff changes nothing.
func (d Diff) Empty() bool { return len(d.Changes) == 0 }

// ChangeOp is the kind of a Change.
type ChangeOp uint8

// Change operations.
const (
	// OpPutKeyspace creates or replaces a keyspace (without its tables).
	OpPutKeyspace ChangeOp = iota + 1
	// OpDropKeyspace deletes a keyspace and everything under it.
	OpDropKeyspace
	// OpPutTable creates or replaces a table or a materialized view
	// (a Table with a View).
	OpPutTable
	// OpDropTable deletes a table or a materialized view. A table's
	// indexes are dropped by OpDropIndex changes listed before it.
	OpDropTable
	// OpPutType creates or replaces a user type.
	OpPutType
	// OpDropType deletes a user type.
	OpDropType
	// OpPutIndex creates or replaces an index.
	OpPutIndex
	// OpDropIndex deletes an index.
	OpDropIndex
	// OpPutFunction creates or replaces a function or aggregate; Name is
	// its signature.
	OpPutFunction
	// OpDropFunction deletes a function or aggregate; Name is its
	// signature.
	OpDropFunction
)

// String returns the operation's name, e.g. "PutTable".
func (op ChangeOp) String() string {
	switch op {
	case OpPutKeyspace:
		return "PutKeyspace"
	case OpDropKeyspace:
		return "DropKeyspace"
	case OpPutTable:
		return "PutTable"
	case OpDropTable:
		return "DropTable"
	case OpPutType:
		return "PutType"
	case OpDropType:
		return "DropType"
	case OpPutIndex:
		return "PutIndex"
	case OpDropIndex:
		return "DropIndex"
	case OpPutFunction:
		return "PutFunction"
	case OpDropFunction:
		return "DropFunction"
	}
	return "invalid"
}

// Change is one changed entry of a Diff.
type Change struct {
	// Op is what happened.
	Op ChangeOp
	// Keyspace is the keyspace concerned.
	Keyspace string
	// Table is the table concerned, for table and index operations (for
	// an index, the indexed table).
	Table string
	// Name is the user type or index concerned, for type and index
	// operations, and the signature of the function or aggregate, for
	// function operations.
	Name string
	// KeyspaceValue is the new keyspace, for OpPutKeyspace.
	KeyspaceValue *Keyspace
	// TableValue is the new table, for OpPutTable.
	TableValue *Table
	// TypeValue is the new user type, for OpPutType.
	TypeValue *UserType
	// IndexValue is the new index, for OpPutIndex.
	IndexValue *Index
	// FunctionValue is the new function or aggregate, for OpPutFunction.
	FunctionValue *Function
}

// Apply applies st to s. It returns the new schema, the diff of what
// changed, and the result; s itself is never modified. A statement made a
// no-op by IF [NOT] EXISTS returns s, an empty Diff and Result.Applied false.
// Errors are *Error values matching ErrAlreadyExists, ErrNotFound or
// ErrInvalid; on error the returned schema is s.
//
// Apply costs O(log n) in the number of keyspaces and tables (plus the size
// of the objects it changes) and never walks them; it allocates the new
// tree paths, the diff and the new values, and updates the digest.
func Apply(s Schema, st Statement, env Env) (Schema, Diff, Result, error) {
	if st == nil {
		return s, Diff{}, Result{}, newError("", "", ErrInvalid, "nil statement")
	}
	return st.apply(s, env)
}

// CreateKeyspace is CREATE KEYSPACE.
type CreateKeyspace struct {
	// Name is the keyspace name.
	Name string
	// IfNotExists makes creating an existing keyspace a no-op.
	IfNotExists bool
	// Replication is the replication strategy; it is normalized on apply.
	Replication Replication
	// DurableWrites is the durable_writes property (CQL's default is true;
	// the parser sets it).
	DurableWrites bool
}

// Kind returns "CREATE KEYSPACE".
func (*CreateKeyspace) Kind() string { return "CREATE KEYSPACE" }

// Object returns the keyspace name.
func (st *CreateKeyspace) Object() string { return quoteNonEmpty(st.Name) }

func (st *CreateKeyspace) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	res := Result{Kind: st.Kind(), Keyspace: st.Name}
	fail := func(code error, reason string) (Schema, Diff, Result, error) {
		return s, Diff{}, res, newError(st.Kind(), quoteNonEmpty(st.Name), code, reason)
	}
	if r := keyspaceNameReason(st.Name); r != "" {
		return fail(ErrInvalid, r)
	}
	repl, r := NormalizeReplication(st.Replication)
	if r != "" {
		return fail(ErrInvalid, r)
	}
	if _, ok := s.Keyspace(st.Name); ok {
		if st.IfNotExists {
			return s, Diff{}, res, nil
		}
		return fail(ErrAlreadyExists, "keyspace already exists")
	}
	k := &Keyspace{Name: st.Name, Replication: repl, DurableWrites: st.DurableWrites}
	k.digest.add(keyspaceHash(k))
	ns := s.replaceKeyspace(nil, k, 0)
	res.Applied = true
	return ns, Diff{Changes: []Change{{Op: OpPutKeyspace, Keyspace: k.Name, KeyspaceValue: k}}}, res, nil
}

// DropKeyspace is DROP KEYSPACE.
type DropKeyspace struct {
	// Name is the keyspace name.
	Name string
	// IfExists makes dropping a missing keyspace a no-op.
	IfExists bool
}

// Kind returns "DROP KEYSPACE".
func (*DropKeyspace) Kind() string { return "DROP KEYSPACE" }

// Object returns the keyspace name.
func (st *DropKeyspace) Object() string { return quoteNonEmpty(st.Name) }

func (st *DropKeyspace) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	res := Result{Kind: st.Kind(), Keyspace: st.Name}
	k, ok := s.Keyspace(st.Name)
	if !ok {
		if st.IfExists {
			return s, Diff{}, res, nil
		}
		return s, Diff{}, res, newError(st.Kind(), quoteNonEmpty(st.Name), ErrNotFound, "keyspace does not exist")
	}
	res.Applied = true
	return s.deleteKeyspace(k), Diff{Changes: []Change{{Op: OpDropKeyspace, Keyspace: k.Name}}}, res, nil
}

// ColumnDef is a column as written in CREATE TABLE.
type ColumnDef struct {
	// Name is the column name.
	Name string
	// Type is the column type.
	Type Type
	// Static marks a STATIC column.
	Static bool
	// PrimaryKey marks "name type PRIMARY KEY", the single-column primary
	// key form; it excludes a PRIMARY KEY clause.
	PrimaryKey bool
	// Mask is the column's MASKED WITH; nil for none.
	Mask *MaskDef
}

// CreateTable is CREATE TABLE.
type CreateTable struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the table name.
	Name string
	// IfNotExists makes creating an existing table a no-op.
	IfNotExists bool
	// Columns are the column definitions in order.
	Columns []ColumnDef
	// PartitionKey names the partition key columns of a PRIMARY KEY clause.
	PartitionKey []string
	// Clustering names the clustering columns of a PRIMARY KEY clause.
	Clustering []string
	// ClusteringOrder is WITH CLUSTERING ORDER BY: a prefix of the
	// clustering columns, in key order; the others sort ascending.
	ClusteringOrder []ClusteringColumn
	// ID is the table id (WITH ID = ...); empty derives it from Env.
	ID string
	// Options are the other table properties as CQL literal text.
	Options map[string]string
}

// Kind returns "CREATE TABLE".
func (*CreateTable) Kind() string { return "CREATE TABLE" }

// Object returns "keyspace.table", or the table alone when the keyspace is
// left to the default.
func (st *CreateTable) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *CreateTable) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	ks := resolveKeyspace(st.Keyspace, env)
	res := Result{Kind: st.Kind(), Keyspace: ks, Table: st.Name}
	fail := func(code error, reason string) (Schema, Diff, Result, error) {
		// The qualified name is built only for an error.
		return s, Diff{}, res, newError(st.Kind(), qualify(ks, st.Name), code, reason)
	}
	if ks == "" {
		return fail(ErrInvalid, noKeyspaceReason)
	}
	if r := nameReason("keyspace", ks); r != "" {
		return fail(ErrInvalid, r)
	}
	if r := nameReason("table", st.Name); r != "" {
		return fail(ErrInvalid, r)
	}
	k, ok := s.Keyspace(ks)
	if !ok {
		return fail(ErrNotFound, "keyspace "+clip.String(cqltext.QuoteIdentifier(ks))+" does not exist")
	}
	if old, exists := k.Table(st.Name); exists {
		if old.View() != nil {
			return fail(ErrAlreadyExists, "Cannot create table '"+clip.String(st.Name)+"' - a materialized view with the same name already exists")
		}
		if st.IfNotExists {
			return s, Diff{}, res, nil
		}
		return fail(ErrAlreadyExists, "table already exists")
	}
	t, reason := st.build(k, env)
	if reason != "" {
		return fail(ErrInvalid, reason)
	}
	res.Applied = true
	return s.putTable(k, t), Diff{Changes: []Change{{Op: OpPutTable, Keyspace: ks, Table: t.Name, TableValue: t}}}, res, nil
}

// build makes the table the statement describes, or returns why it cannot.
// Its steps run in the order their errors are reported: the id, the
// columns, the primary key, the clustering order, the options, then the
// invariants every table satisfies and those that need the keyspace's user
// types.
func (st *CreateTable) build(k *Keyspace, env Env) (*Table, string) {
	t := &Table{Keyspace: k.Name, Name: st.Name}
	var r string
	if t.ID, r = st.tableID(env); r != "" {
		return nil, r
	}
	// The column positions by name, made here rather than in columns so
	// that the map does not escape to the heap.
	index := make(map[string]int, len(st.Columns))
	inline, r := st.columns(k, t, index)
	if r != "" {
		return nil, r
	}
	if r := st.primaryKey(t, index, inline); r != "" {
		return nil, r
	}
	if r := st.clusteringOrder(t, index); r != "" {
		return nil, r
	}
	opts, r := tableOptions(st.Options)
	if r != "" {
		return nil, r
	}
	t.SetOptions(opts)
	if r := validateTable(t); r != "" {
		return nil, r
	}
	if r := keyDurationReason(k, t); r != "" {
		return nil, r
	}
	// The name is a slice of the statement's text, which it would keep
	// alive for as long as the table lives.
	t.Name = strings.Clone(t.Name)
	shareShape(t, false)
	return t, ""
}

// tableID returns the table id given WITH ID, in canonical form, or else
// the one derived from the epoch and the statement's place in it, which
// every node derives alike.
func (st *CreateTable) tableID(env Env) (UUID, string) {
	if st.ID == "" {
		return env.tableID(), ""
	}
	id, ok := ParseUUID(st.ID)
	if !ok {
		return UUID{}, "table id " + clip.String(st.ID) + " is not a UUID"
	}
	return id, ""
}

// columns fills t.Columns from the column definitions, with normalized
// types and the regular or static kind; the primary key step marks the key
// columns later. It records each column's position by name in index and
// returns the column declared "name type PRIMARY KEY", if any, which that
// step needs.
func (st *CreateTable) columns(k *Keyspace, t *Table, index map[string]int) (inline, reason string) {
	if len(st.Columns) == 0 {
		return "", "a table needs at least one column"
	}
	t.Columns = make([]Column, len(st.Columns))
	for i, cd := range st.Columns {
		if r := columnNameReason("column", cd.Name); r != "" {
			return "", r
		}
		if _, dup := index[cd.Name]; dup {
			return "", "duplicate column name " + clip.String(cd.Name)
		}
		index[cd.Name] = i
		typ, r := columnType(k, cd.Name, cd.Type)
		if r != "" {
			return "", r
		}
		kind := Regular
		if cd.Static {
			kind = Static
		}
		if cd.PrimaryKey {
			if inline != "" || len(st.PartitionKey) > 0 {
				return "", "multiple PRIMARY KEY definitions"
			}
			if cd.Static {
				return "", "static column " + clip.String(cd.Name) + " cannot be part of the PRIMARY KEY"
			}
			inline = cd.Name
		}
		t.Columns[i] = Column{Name: cd.Name, Type: typ, Kind: kind}
		if cd.Mask != nil {
			if t.Columns[i].Mask, r = resolveMask(cd.Mask, cd.Name, typ); r != "" {
				return "", r
			}
		}
	}
	return inline, ""
}

// primaryKey sets t's partition key and clustering columns, from the
// inline "PRIMARY KEY" column or the PRIMARY KEY clause, and marks those
// columns with their kind.
func (st *CreateTable) primaryKey(t *Table, index map[string]int, inline string) string {
	pk := st.PartitionKey
	if inline != "" {
		if len(st.Clustering) > 0 {
			return "multiple PRIMARY KEY definitions"
		}
		pk = []string{inline}
	}
	if len(pk) == 0 {
		return "PRIMARY KEY is missing"
	}
	t.PartitionKey = append([]string(nil), pk...)
	for _, name := range pk {
		if r := markKeyColumn(t, index, name, PartitionKey); r != "" {
			return r
		}
	}
	if len(st.Clustering) > 0 {
		t.Clustering = make([]ClusteringColumn, len(st.Clustering))
		for i, name := range st.Clustering {
			if r := markKeyColumn(t, index, name, Clustering); r != "" {
				return r
			}
			t.Clustering[i] = ClusteringColumn{Name: name, Order: Asc}
		}
	}
	return ""
}

// markKeyColumn gives the column name the key kind, refusing a column that
// is unknown, already in the key, or static.
func markKeyColumn(t *Table, index map[string]int, name string, kind ColumnKind) string {
	i, ok := index[name]
	if !ok {
		return "unknown column " + clip.String(name) + " in PRIMARY KEY"
	}
	c := &t.Columns[i]
	switch c.Kind {
	case PartitionKey, Clustering:
		return "column " + clip.String(name) + " appears twice in the PRIMARY KEY"
	case Static:
		return "static column " + clip.String(name) + " cannot be part of the PRIMARY KEY"
	}
	c.Kind = kind
	return ""
}

// clusteringOrder applies WITH CLUSTERING ORDER BY to t's clustering
// columns, which it must name as a prefix of the key, in key order.
func (st *CreateTable) clusteringOrder(t *Table, index map[string]int) string {
	if len(st.ClusteringOrder) > len(t.Clustering) {
		return "CLUSTERING ORDER BY lists more columns than there are clustering columns"
	}
	for i, co := range st.ClusteringOrder {
		if co.Name != t.Clustering[i].Name {
			if _, isCK := index[co.Name]; !isCK || t.Columns[index[co.Name]].Kind != Clustering {
				return "CLUSTERING ORDER BY names " + clip.String(co.Name) + ", which is not a clustering column"
			}
			return "CLUSTERING ORDER BY must list the clustering columns in key order: expected " + clip.String(t.Clustering[i].Name) + ", found " + clip.String(co.Name)
		}
		if co.Order != Asc && co.Order != Desc {
			return "invalid clustering order for " + clip.String(co.Name)
		}
		t.Clustering[i].Order = co.Order
	}
	return ""
}

// tableOptions returns the table properties of CREATE TABLE in canonical
// form. Property names are case-insensitive, so two spellings of one name
// are refused as given twice.
func tableOptions(given map[string]string) (map[string]string, string) {
	if len(given) == 0 {
		return nil, ""
	}
	opts := make(map[string]string, len(given))
	for k, v := range given {
		k = strings.ToLower(k)
		if _, dup := opts[k]; dup {
			return nil, "property " + clip.String(k) + " given twice"
		}
		opts[k] = v
	}
	return canonicalOptions(opts)
}

// keyDurationReason refuses a key column whose user type holds a duration,
// which validateTable cannot see: it checks a table without its keyspace's
// types.
func keyDurationReason(k *Keyspace, t *Table) string {
	for _, c := range t.Columns {
		if (c.Kind == PartitionKey || c.Kind == Clustering) && usesDurationThroughTypes(k, c.Type, 0) {
			return "column " + clip.String(c.Name) + " cannot be part of the PRIMARY KEY: its user type holds a duration"
		}
	}
	return ""
}

// usesDurationThroughTypes reports whether t holds a duration inside one of
// k's user types (a direct duration is validateTable's business). The
// depth bound stops a malformed type graph; CREATE TYPE forbids cycles.
func usesDurationThroughTypes(k *Keyspace, t Type, depth int) bool {
	if depth > MaxTypeDepth {
		return false
	}
	switch t := t.(type) {
	case UserTypeRef:
		ut, ok := k.UserType(t.Name)
		if !ok {
			return false
		}
		for _, f := range ut.Fields {
			if containsDuration(f.Type) || usesDurationThroughTypes(k, f.Type, depth+1) {
				return true
			}
		}
	case FrozenType:
		return usesDurationThroughTypes(k, t.Inner, depth+1)
	case ListType:
		return usesDurationThroughTypes(k, t.Elem, depth+1)
	case SetType:
		return usesDurationThroughTypes(k, t.Elem, depth+1)
	case MapType:
		return usesDurationThroughTypes(k, t.Key, depth+1) || usesDurationThroughTypes(k, t.Value, depth+1)
	case TupleType:
		for _, e := range t.Elems {
			if usesDurationThroughTypes(k, e, depth+1) {
				return true
			}
		}
	}
	return false
}

// DropTable is DROP TABLE.
type DropTable struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the table name.
	Name string
	// IfExists makes dropping a missing table a no-op.
	IfExists bool
}

// Kind returns "DROP TABLE".
func (*DropTable) Kind() string { return "DROP TABLE" }

// Object returns "keyspace.table", or the table alone when the keyspace is
// left to the default.
func (st *DropTable) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *DropTable) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, t, found, err := existing(s, env, st.Kind(), st.Keyspace, st.Name, &tableObject, st.IfExists)
	if !found {
		return tg.end(err)
	}
	if t.View() != nil {
		return tg.fail(ErrInvalid, viewCannotDropTable)
	}
	if views := tg.k.Views(t.Name); len(views) > 0 {
		return tg.fail(ErrInvalid, "Cannot drop a table when materialized views still depend on it ("+viewNames(views)+")")
	}
	ks := tg.k.Name
	tg.res.Applied = true
	ns, dropped := s.deleteTable(tg.k, t)
	changes := make([]Change, 0, len(dropped)+1)
	for _, ix := range dropped {
		changes = append(changes, Change{Op: OpDropIndex, Keyspace: ks, Table: t.Name, Name: ix.Name})
	}
	changes = append(changes, Change{Op: OpDropTable, Keyspace: ks, Table: st.Name})
	return ns, Diff{Changes: changes}, tg.res, nil
}

// columnType normalizes the type of column name for a table of keyspace k
// and checks the user types it uses: they must exist, and a non-frozen one
// must not hold non-frozen collections.
func columnType(k *Keyspace, name string, t Type) (Type, string) {
	typ, r := normalizeType(t, k.Name)
	if r == "" {
		r = validateType(typ, 0)
	}
	if r == "" {
		r = checkTypeRefs(k, typ)
	}
	if r != "" {
		return nil, "column " + clip.String(name) + ": " + r
	}
	if ref, ok := typ.(UserTypeRef); ok {
		ut, _ := k.UserType(ref.Name)
		for _, f := range ut.Fields {
			if IsMultiCell(f.Type) {
				return nil, "column " + clip.String(name) + ": non-frozen user type " + clip.String(ref.String()) + " has a non-frozen collection field " + clip.String(f.Name) + "; use frozen<" + clip.String(ref.String()) + ">"
			}
		}
	}
	return typ, ""
}
