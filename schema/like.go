package schema

import (
	"maps"
	"strings"
)

// CreateTableLike is CREATE TABLE [IF NOT EXISTS] ks.name LIKE ks.source
// [WITH ...] (Cassandra 5.1, CASSANDRA-19964): a new, empty table with the
// source table's columns and their types, primary key, clustering order and
// properties, in the same keyspace or another. WITH sets properties over
// the copied ones, and an id. The source's id, indexes and record of
// dropped columns are not copied. A source that uses user types is copied
// within its keyspace only (metalog copies no types with it).
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
}

// Kind returns "CREATE TABLE": the statement creates a table like any
// other, with the same guardrails, history events and results.
func (*CreateTableLike) Kind() string { return "CREATE TABLE" }

// Object returns "keyspace.table" of the new table.
func (st *CreateTableLike) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *CreateTableLike) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	ks, sks := resolveKeyspace(st.Keyspace, env), resolveKeyspace(st.SourceKeyspace, env)
	src, ok := s.Table(sks, st.Source)
	if !ok {
		res := Result{Kind: st.Kind(), Keyspace: ks, Table: st.Name}
		return s, Diff{}, res, newError(st.Kind(), qualify(ks, st.Name), ErrNotFound,
			"the table to copy, "+Clip(qualify(sks, st.Source))+", does not exist")
	}
	if _, target := s.Keyspace(ks); target && sks != ks && len(tableTypeRefs(src)) > 0 {
		refs := tableTypeRefs(src)
		res := Result{Kind: st.Kind(), Keyspace: ks, Table: st.Name}
		return s, Diff{}, res, newError(st.Kind(), qualify(ks, st.Name), ErrInvalid,
			"the table to copy, "+Clip(qualify(sks, st.Source))+", uses user types ("+Clip(strings.Join(refs, ", "))+
				"), which belong to its keyspace: copy it within keyspace "+Clip(sks)+", or create the types in "+Clip(ks)+" and the table with CREATE TABLE")
	}
	return st.copyOf(src).apply(s, env)
}

// copyOf is the CREATE TABLE that makes the copy of src.
func (st *CreateTableLike) copyOf(src *Table) *CreateTable {
	ct := &CreateTable{Keyspace: st.Keyspace, Name: st.Name, IfNotExists: st.IfNotExists, ID: st.ID,
		PartitionKey: src.PartitionKey, ClusteringOrder: src.Clustering, Options: maps.Clone(src.Options)}
	for _, c := range src.Columns {
		ct.Columns = append(ct.Columns, ColumnDef{Name: c.Name, Type: c.Type, Static: c.Kind == Static})
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
