package schema

import (
	"slices"

	"github.com/metalog/metalog/internal/clip"
)

// AlterKeyspace is ALTER KEYSPACE. Nil fields keep their current value.
type AlterKeyspace struct {
	// Name is the keyspace name.
	Name string
	// IfExists makes altering a missing keyspace a no-op.
	IfExists bool
	// Replication, when set, replaces the replication strategy; it is
	// normalized on apply.
	Replication *Replication
	// DurableWrites, when set, replaces durable_writes.
	DurableWrites *bool
}

// Kind returns "ALTER KEYSPACE".
func (*AlterKeyspace) Kind() string { return "ALTER KEYSPACE" }

// Object returns the keyspace name.
func (st *AlterKeyspace) Object() string { return quoteNonEmpty(st.Name) }

func (st *AlterKeyspace) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	res := Result{Kind: st.Kind(), Keyspace: st.Name}
	fail := func(code error, reason string) (Schema, Diff, Result, error) {
		return s, Diff{}, res, newError(st.Kind(), quoteNonEmpty(st.Name), code, reason)
	}
	k, ok := s.Keyspace(st.Name)
	if !ok {
		if st.IfExists {
			return s, Diff{}, res, nil
		}
		return fail(ErrNotFound, "keyspace does not exist")
	}
	if st.Replication == nil && st.DurableWrites == nil {
		return fail(ErrInvalid, "nothing to alter: give replication or durable_writes")
	}
	c := *k
	if st.Replication != nil {
		repl, r := NormalizeReplication(*st.Replication)
		if r != "" {
			return fail(ErrInvalid, r)
		}
		c.Replication = repl
	}
	if st.DurableWrites != nil {
		c.DurableWrites = *st.DurableWrites
	}
	c.digest.sub(keyspaceHash(k))
	c.digest.add(keyspaceHash(&c))
	res.Applied = true
	return s.replaceKeyspace(k, &c, 0), Diff{Changes: []Change{{Op: OpPutKeyspace, Keyspace: c.Name, KeyspaceValue: &c}}}, res, nil
}

// AlterTable is ALTER TABLE. The parser sets exactly one of Add, Drop,
// Rename, Mask and Options, as one CQL statement does one of them.
type AlterTable struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the table name.
	Name string
	// IfExists makes altering a missing table a no-op.
	IfExists bool
	// Add are the columns to add (ADD); PrimaryKey must be false.
	Add []ColumnDef
	// Drop names the columns to drop (DROP). Each is remembered in the
	// table's DroppedColumns.
	Drop []string
	// DropEpoch is the DROP's USING TIMESTAMP; 0 means Env.Epoch.
	DropEpoch uint64
	// Rename lists primary-key columns to rename (RENAME a TO b AND ...).
	Rename []RenameField
	// Options are table properties to set (WITH), as CQL literal text.
	Options map[string]string
	// Mask is ALTER column MASKED WITH ... or DROP MASKED.
	Mask *AlterMask
	// ClauseIf is the IF of the clause (Cassandra 5.0): ADD IF NOT EXISTS
	// skips the columns that exist, DROP IF EXISTS and RENAME IF EXISTS
	// those that do not, ALTER IF EXISTS a column that does not; with
	// nothing left the statement is a no-op.
	ClauseIf bool
}

// Kind returns "ALTER TABLE".
func (*AlterTable) Kind() string { return "ALTER TABLE" }

// Object returns "keyspace.table", or the table alone when the keyspace is
// left to the default.
func (st *AlterTable) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *AlterTable) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, old, found, err := existing(s, env, st.Kind(), st.Keyspace, st.Name, &tableObject, st.IfExists)
	if !found {
		return tg.end(err)
	}
	if old.View() != nil {
		return tg.fail(ErrInvalid, viewCannotAlterTable)
	}
	k := tg.k
	n := 0
	for _, set := range []bool{len(st.Add) > 0, len(st.Drop) > 0, len(st.Rename) > 0, len(st.Options) > 0, st.Mask != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return tg.fail(ErrInvalid, "ALTER TABLE needs exactly one of ADD, DROP, RENAME, ALTER column or WITH")
	}
	if st.Mask != nil {
		return st.alterMask(tg, old)
	}
	if st.ClauseIf {
		if st = st.withoutSkipped(old); len(st.Add) == 0 && len(st.Drop) == 0 && len(st.Rename) == 0 {
			return s, Diff{}, tg.res, nil
		}
	}
	t := *old
	t.Columns = append([]Column(nil), old.Columns...)
	var r string
	switch {
	case len(st.Add) > 0:
		r = st.add(k, &t)
	case len(st.Drop) > 0:
		epoch := st.DropEpoch
		if epoch == 0 {
			epoch = env.Epoch
		}
		r = st.drop(k, &t, epoch, env.Rules)
	case len(st.Rename) > 0:
		r = st.rename(k, &t)
	default:
		r = st.setOptions(&t)
	}
	if r == "" {
		r = validateTable(&t)
	}
	if r == "" && len(st.Options) > 0 && t.Options()["gc_grace_seconds"] == "0" && k.hasViews(t.Name) {
		r = gcGraceViewBase
	}
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	// The views a change of the base's columns changes come first, so
	// that the change of the table itself is the last (the event's).
	var views []*Table
	if len(st.Add) > 0 || len(st.Rename) > 0 {
		views = withViewColumns(k, t.Name, t.Columns[len(old.Columns):], st.Rename)
	}
	changes := make([]Change, 0, len(views)+1)
	ns := s
	for _, v := range views {
		nk, _ := ns.Keyspace(k.Name)
		ns = ns.putTable(nk, v)
		changes = append(changes, Change{Op: OpPutTable, Keyspace: k.Name, Table: v.Name, TableValue: v})
	}
	nk, _ := ns.Keyspace(k.Name)
	changes = append(changes, Change{Op: OpPutTable, Keyspace: k.Name, Table: t.Name, TableValue: &t})
	return ns.putTable(nk, &t), Diff{Changes: changes}, tg.res, nil
}

// withoutSkipped returns a copy of st, whose clause has IF [NOT] EXISTS,
// without what the clause skips on table t: the ADD columns t has, the
// DROP and RENAME columns it does not.
func (st *AlterTable) withoutSkipped(t *Table) *AlterTable {
	c := *st
	c.Add, c.Drop, c.Rename = nil, nil, nil
	for _, cd := range st.Add {
		if _, ok := t.Column(cd.Name); !ok {
			c.Add = append(c.Add, cd)
		}
	}
	for _, name := range st.Drop {
		if _, ok := t.Column(name); ok {
			c.Drop = append(c.Drop, name)
		}
	}
	for _, rn := range st.Rename {
		if _, ok := t.Column(rn.From); ok {
			c.Rename = append(c.Rename, rn)
		}
	}
	return &c
}

// isCounterTable reports whether t has a counter column, which makes every
// non-key column a counter.
func isCounterTable(t *Table) bool {
	for i := range t.Columns {
		if t.Columns[i].Type == TypeCounter {
			return true
		}
	}
	return false
}

// add appends the ADD columns to t, the copy being altered. A counter
// table takes only counters and other tables none, a column dropped
// before comes back only with a type that reads its old values, and a
// table with a SELECT * view takes no static column (see selectStarView).
func (st *AlterTable) add(k *Keyspace, t *Table) string {
	counter := isCounterTable(t)
	for _, cd := range st.Add {
		if r := columnNameReason("column", cd.Name); r != "" {
			return r
		}
		if _, exists := t.Column(cd.Name); exists {
			return "column " + clip.String(quoteNonEmpty(cd.Name)) + " already exists"
		}
		if cd.PrimaryKey {
			return "cannot add PRIMARY KEY column " + clip.String(cd.Name) + ": the primary key cannot change"
		}
		typ, r := columnType(k, cd.Name, cd.Type)
		if r != "" {
			return r
		}
		if typ == TypeCounter && !counter {
			return "cannot add counter column " + clip.String(cd.Name) + " to a non-counter table"
		}
		if typ != TypeCounter && counter {
			return "cannot add non-counter column " + clip.String(cd.Name) + " to a counter table"
		}
		if d, ok := t.DroppedColumn(cd.Name); ok {
			if counter {
				return "cannot re-add previously dropped counter column " + clip.String(cd.Name)
			}
			if ex := expandUserTypes(typ, k, 0); !valueCompatible(ex, d.Type) {
				return "cannot re-add previously dropped column " + clip.String(cd.Name) + " of type " + clip.String(typ.String()) + ", incompatible with previous type " + clip.String(d.Type.String())
			}
			if r := droppedKindRefusal(cd.Name, d, cd.Static); r != "" {
				return r
			}
		}
		kind := Regular
		if cd.Static {
			kind = Static
			if v := selectStarView(k, t.Name); v != nil {
				return "cannot add static column " + clip.String(cd.Name) + ": materialized view " + clip.String(v.Name) +
					" selects every column of the table (SELECT *), and a view cannot hold a static column (Cassandra would add it to the table alone, and the view's CREATE MATERIALIZED VIEW, which DESCRIBE prints, would no longer apply)"
			}
		}
		col := Column{Name: cd.Name, Type: typ, Kind: kind}
		if cd.Mask != nil {
			if col.Mask, r = resolveMask(cd.Mask, cd.Name, typ); r != "" {
				return r
			}
		}
		t.Columns = append(t.Columns, col)
	}
	return ""
}

// drop removes the DROP columns from t, the copy being altered, and records
// each in its dropped columns at epoch, with its kind under rules that keep
// it (RulesDroppedKind). Key columns, indexed columns and any
// column of a table with materialized views (Cassandra's rule, whether a
// view selects the column or not) cannot be dropped.
func (st *AlterTable) drop(k *Keyspace, t *Table, epoch, rules uint64) string {
	dropped := slices.Clone(t.DroppedColumns())
	indexes := k.TableIndexes(t.Name)
	for _, name := range st.Drop {
		i := columnIndex(t, name)
		if i == len(t.Columns) {
			return "column " + clip.String(quoteNonEmpty(name)) + " does not exist"
		}
		c := t.Columns[i]
		if c.Kind == PartitionKey || c.Kind == Clustering {
			return "cannot drop PRIMARY KEY column " + clip.String(name)
		}
		for _, ix := range indexes {
			if ix.Target.Column == name {
				return "cannot drop column " + clip.String(name) + ": index " + clip.String(ix.Name) + " depends on it"
			}
		}
		if k.hasViews(t.Name) {
			return "Cannot drop column " + clip.String(name) + " on base table " + clip.String(t.Name) + " with materialized views"
		}
		t.Columns = append(t.Columns[:i], t.Columns[i+1:]...)
		rec := DroppedColumn{Name: name, Type: expandUserTypes(c.Type, k, 0), Epoch: epoch}
		if rules >= RulesDroppedKind {
			rec.Kind = droppedKindOf(c.Kind)
		}
		if j := slices.IndexFunc(dropped, func(d DroppedColumn) bool { return d.Name == name }); j >= 0 {
			dropped[j] = rec
		} else {
			dropped = append(dropped, rec)
		}
	}
	t.SetDroppedColumns(dropped)
	return ""
}

// rename renames primary key columns of t, the copy being altered, in the
// columns and in the key lists. As in Cassandra only key columns can be
// renamed, and not while an index uses them; the table's materialized
// views are renamed with it (apply).
func (st *AlterTable) rename(k *Keyspace, t *Table) string {
	t.PartitionKey = append([]string(nil), t.PartitionKey...)
	t.Clustering = append([]ClusteringColumn(nil), t.Clustering...)
	indexes := k.TableIndexes(t.Name)
	for _, rn := range st.Rename {
		i := columnIndex(t, rn.From)
		if i == len(t.Columns) {
			return "column " + clip.String(quoteNonEmpty(rn.From)) + " does not exist"
		}
		c := &t.Columns[i]
		if c.Kind != PartitionKey && c.Kind != Clustering {
			return "cannot rename non PRIMARY KEY column " + clip.String(rn.From) + "; only primary key columns can be renamed"
		}
		if r := columnNameReason("column", rn.To); r != "" {
			return r
		}
		if _, taken := t.Column(rn.To); taken {
			return "cannot rename column " + clip.String(rn.From) + " to " + clip.String(rn.To) + ": a column of that name exists"
		}
		for _, ix := range indexes {
			if ix.Target.Column == rn.From {
				return "cannot rename column " + clip.String(rn.From) + ": index " + clip.String(ix.Name) + " depends on it"
			}
		}
		c.Name = rn.To
		for j := range t.PartitionKey {
			if t.PartitionKey[j] == rn.From {
				t.PartitionKey[j] = rn.To
			}
		}
		for j := range t.Clustering {
			if t.Clustering[j].Name == rn.From {
				t.Clustering[j].Name = rn.To
			}
		}
	}
	return ""
}

// setOptions merges the WITH properties into t's options and canonicalizes
// the result, so that cross-property checks (index intervals) see the
// whole set.
func (st *AlterTable) setOptions(t *Table) string {
	merged := make(map[string]string, len(t.Options())+len(st.Options))
	for k, v := range t.Options() {
		merged[k] = v
	}
	for k, v := range st.Options {
		if k == "id" {
			return "cannot alter the table id"
		}
		merged[k] = v
	}
	opts, r := canonicalOptions(merged)
	if r != "" {
		return r
	}
	t.SetOptions(opts)
	return ""
}

// Use is USE keyspace. cql.Parse already qualifies the statements after a
// USE with its keyspace, so applying it only checks that the keyspace
// exists; it changes nothing and reports Applied false.
type Use struct {
	// Keyspace is the keyspace to use.
	Keyspace string
}

// Kind returns "USE".
func (*Use) Kind() string { return "USE" }

// Object returns the keyspace name.
func (st *Use) Object() string { return quoteNonEmpty(st.Keyspace) }

func (st *Use) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	res := Result{Kind: st.Kind(), Keyspace: st.Keyspace}
	if _, ok := s.Keyspace(st.Keyspace); !ok {
		return s, Diff{}, res, newError(st.Kind(), st.Keyspace, ErrNotFound, "keyspace "+clip.Quote(st.Keyspace)+" does not exist")
	}
	return s, Diff{}, res, nil
}
