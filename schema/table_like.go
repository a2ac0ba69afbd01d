package schema

import (
	"maps"
	"reflect"
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// CreateTableLike is CREATE TABLE [IF NOT EXISTS] ks.name LIKE ks.source
// [WITH ...] (Cassandra 5.1, CASSANDRA-19964): a new, empty table with the
// source table's columns and their types and masks, primary key,
// clustering order and properties, in the same keyspace or another. WITH
// sets properties over the copied ones, and an id; WITH INDEXES also
// copies the source's indexes (see copyIndexes). The source's id,
// triggers and record of dropped columns are not copied. Copied into
// another keyspace, the user types the source uses must exist there with
// the same fields.
type CreateTableLike struct {
	// Keyspace is the new table's keyspace; empty means
	// Env.DefaultKeyspace.
	Keyspace string
	// Name is the new table's name.
	Name string
	// IfNotExists makes creating an existing table a no-op.
	IfNotExists bool
	// SourceKeyspace and Source name the table to copy; an empty keyspace
	// means Env.DefaultKeyspace.
	SourceKeyspace, Source string
	// ID is the new table's id (WITH ID = ...); empty derives it from Env.
	ID string
	// Options are the properties WITH sets, as CQL literal text, over the
	// source's.
	Options map[string]string
	// Indexes is WITH INDEXES: the source's indexes are copied too.
	Indexes bool
}

// Kind returns "CREATE TABLE": the statement creates a table like any
// other, with the same guardrails, history events and results.
func (*CreateTableLike) Kind() string { return "CREATE TABLE" }

// Object returns "keyspace.table" of the new table.
func (st *CreateTableLike) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *CreateTableLike) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	ks, sks := resolveKeyspace(st.Keyspace, env), resolveKeyspace(st.SourceKeyspace, env)
	res := Result{Kind: st.Kind(), Keyspace: ks, Table: st.Name}
	fail := func(code error, reason string) (Schema, Diff, Result, error) {
		return s, Diff{}, res, newError(st.Kind(), qualify(ks, st.Name), code, reason)
	}
	src, ok := s.Table(sks, st.Source)
	if !ok {
		return fail(ErrNotFound, "the table to copy, "+clip.String(qualify(sks, st.Source))+", does not exist")
	}
	if src.View() != nil {
		return fail(ErrInvalid, "Cannot use CREATE TABLE LIKE on a materialized view '"+clip.String(src.QualifiedName())+"'.")
	}
	if k, ok := s.Keyspace(ks); ok && sks != ks {
		if r := sameTypesIn(s, src, k); r != "" {
			return fail(ErrInvalid, r)
		}
	}
	ns, diff, res, err := st.copyOf(src).apply(s, env)
	if err != nil || !res.Applied || !st.Indexes {
		return ns, diff, res, err
	}
	return st.copyIndexes(s, ns, diff, res, src)
}

// sameTypesIn returns why the user types src uses do not carry over to
// keyspace k, as Cassandra's rule for a copy into another keyspace has
// it: each must exist in k with the same fields; "" when they do.
func sameTypesIn(s Schema, src *Table, k *Keyspace) string {
	from, _ := s.Keyspace(src.Keyspace)
	var missing []string
	for _, name := range tableTypeRefs(src) {
		there, ok := k.UserType(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		if here, ok := from.UserType(name); ok && !reflect.DeepEqual(here.Fields, there.Fields) {
			return "keyspace " + clip.String(k.Name) + " has a user type " + clip.String(name) + " with other fields than " + clip.String(qualify(src.Keyspace, name)) + ", which " + clip.String(src.QualifiedName()) + " uses"
		}
	}
	if len(missing) > 0 {
		return "the table to copy, " + clip.String(src.QualifiedName()) + ", uses user types that keyspace " + clip.String(k.Name) +
			" does not have: " + clip.String(strings.Join(missing, ", ")) + " (create them there first)"
	}
	return ""
}

// copyOf is the CREATE TABLE that makes the copy of src.
func (st *CreateTableLike) copyOf(src *Table) *CreateTable {
	ct := &CreateTable{Keyspace: st.Keyspace, Name: st.Name, IfNotExists: st.IfNotExists, ID: st.ID,
		PartitionKey: src.PartitionKey, ClusteringOrder: src.Clustering, Options: maps.Clone(src.Options())}
	for _, c := range src.Columns {
		ct.Columns = append(ct.Columns, ColumnDef{Name: c.Name, Type: c.Type, Static: c.Kind == Static, Mask: copiedMask(c.Mask)})
	}
	for _, c := range src.Clustering {
		ct.Clustering = append(ct.Clustering, c.Name)
	}
	if ct.Options == nil && len(st.Options) > 0 {
		ct.Options = map[string]string{}
	}
	maps.Copy(ct.Options, st.Options)
	return ct
}

// copyIndexes adds to ns, the schema with the new table, copies of the
// indexes of src, as Cassandra's WITH INDEXES does: regular and SAI
// indexes are copied, other custom indexes are not (Result.Warning names
// them). A copied index whose name is the one Cassandra gives an unnamed
// index of src ("<source>_<column>_idx...") is named for the new table
// ("<new>_<column>_idx"); other names are kept. Either way a name the
// keyspace already has takes the first free suffix _1, _2 and so on.
// The diff puts the table first, then its indexes, so that undoing it
// newest-first drops the indexes before the table.
func (st *CreateTableLike) copyIndexes(s, ns Schema, diff Diff, res Result, src *Table) (Schema, Diff, Result, error) {
	from, _ := s.Keyspace(src.Keyspace)
	k, _ := ns.Keyspace(res.Keyspace)
	var skipped []string
	for _, ix := range from.TableIndexes(src.Name) {
		if ix.Custom && ix.Class != SAIIndexClass {
			skipped = append(skipped, ix.Name)
			continue
		}
		base := ix.Name
		if strings.HasPrefix(ix.Name, src.Name+"_"+ix.Target.Column+"_idx") {
			base = DefaultIndexName(st.Name, ix.Target.Column)
		}
		c := &Index{Keyspace: k.Name, Table: st.Name, Name: unusedIndexName(k, base), Target: ix.Target, Custom: ix.Custom, Class: ix.Class, Options: maps.Clone(ix.Options)}
		if r := validateIndex(c); r != "" {
			return s, Diff{}, res, newError(st.Kind(), qualify(k.Name, st.Name), ErrInvalid, "copying index "+clip.String(ix.Name)+": "+r)
		}
		ns = ns.putIndex(k, c)
		k, _ = ns.Keyspace(k.Name)
		diff.Changes = append(diff.Changes, Change{Op: OpPutIndex, Keyspace: k.Name, Table: st.Name, Name: c.Name, IndexValue: c})
	}
	if len(skipped) > 0 {
		res.Warning = "Source table " + clip.String(src.QualifiedName()) + " to copy indexes from to " + clip.String(qualify(k.Name, st.Name)) +
			" has custom indexes. These indexes were not copied: [" + clip.String(strings.Join(skipped, ", ")) + "]"
	}
	return ns, diff, res, nil
}
