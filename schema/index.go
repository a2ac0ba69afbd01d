package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Index is a secondary index. Values reachable from a Schema must not be
// modified; build a new Index instead.
type Index struct {
	// Keyspace is the name of the keyspace holding the index and its table.
	Keyspace string
	// Table is the indexed table.
	Table string
	// Name is the index name, unique in the keyspace.
	Name string
	// Target is the indexed column and what of it is indexed.
	Target IndexTarget
	// Custom is set for CREATE CUSTOM INDEX and for indexes with a class
	// (USING 'class').
	Custom bool
	// Class is the index implementation class; empty for a regular index.
	Class string
	// Options are the WITH OPTIONS of a custom index. Nil when none.
	Options map[string]string
}

// IndexTarget is what an index indexes.
type IndexTarget struct {
	// Column is the indexed column.
	Column string
	// Kind says which part of the column's values is indexed.
	Kind TargetKind
}

// TargetKind says which part of a column an index covers.
type TargetKind uint8

// Target kinds. Their numeric values are part of the encoding.
const (
	// TargetSimple indexes the value of a non-collection column.
	TargetSimple TargetKind = iota
	// TargetValues indexes the values of a non-frozen collection.
	TargetValues
	// TargetKeys indexes the keys of a non-frozen map.
	TargetKeys
	// TargetEntries indexes the entries of a non-frozen map.
	TargetEntries
	// TargetFull indexes a frozen collection as a whole.
	TargetFull
	maxTargetKind = TargetFull
)

// String returns the target's CQL function name: "", "values", "keys",
// "entries" or "full".
func (k TargetKind) String() string {
	switch k {
	case TargetSimple:
		return ""
	case TargetValues:
		return "values"
	case TargetKeys:
		return "keys"
	case TargetEntries:
		return "entries"
	case TargetFull:
		return "full"
	}
	return "invalid"
}

// String returns the target as CQL, e.g. "keys(m)" or "v".
func (t IndexTarget) String() string {
	if t.Kind == TargetSimple {
		return cqltext.QuoteIdentifier(t.Column)
	}
	return t.Kind.String() + "(" + cqltext.QuoteIdentifier(t.Column) + ")"
}

// QualifiedName returns "keyspace.index".
func (ix *Index) QualifiedName() string { return qualify(ix.Keyspace, ix.Name) }

// Well-known index classes, which USING also accepts by short name.
const (
	// SAIIndexClass is the storage-attached index ('sai').
	SAIIndexClass = "org.apache.cassandra.index.sai.StorageAttachedIndex"
)

// canonicalIndexClass maps the aliases Cassandra accepts to the class
// name; "" means a regular (legacy) index.
func canonicalIndexClass(class string) string {
	switch strings.ToLower(class) {
	case "sai", "storageattachedindex", strings.ToLower(SAIIndexClass):
		return SAIIndexClass
	case "legacy_local_table":
		return ""
	}
	return class
}

// validateIndex checks the structural invariants of an index.
func validateIndex(ix *Index) string {
	if r := nameReason("keyspace", ix.Keyspace); r != "" {
		return r
	}
	if r := nameReason("table", ix.Table); r != "" {
		return r
	}
	if r := nameReason("index", ix.Name); r != "" {
		return r
	}
	if r := columnNameReason("column", ix.Target.Column); r != "" {
		return r
	}
	if ix.Target.Kind > maxTargetKind {
		return "invalid index target kind " + strconv.Itoa(int(ix.Target.Kind))
	}
	if ix.Custom != (ix.Class != "") {
		return "a custom index needs a class, and only a custom index has one"
	}
	if len(ix.Options) > 0 && !ix.Custom {
		return "only custom indexes take options"
	}
	for k := range ix.Options {
		if k == "class_name" || k == "target" {
			return "index option " + clip.String(k) + " is reserved"
		}
	}
	return ""
}

// CreateIndex is CREATE [CUSTOM] INDEX.
type CreateIndex struct {
	// Keyspace is the keyspace of the table; empty means
	// Env.DefaultKeyspace.
	Keyspace string
	// Table is the indexed table.
	Table string
	// Name is the index name; empty derives <table>_<column>_idx.
	Name string
	// IfNotExists makes creating an existing (or duplicate) index a no-op.
	IfNotExists bool
	// Target is the indexed column; a TargetSimple target on a non-frozen
	// collection means its values.
	Target IndexTarget
	// Custom is CREATE CUSTOM INDEX; it needs Class.
	Custom bool
	// Class is the USING class; empty for a regular index.
	Class string
	// Options are WITH OPTIONS = {...}, which need Class.
	Options map[string]string
}

// Kind returns "CREATE INDEX".
func (*CreateIndex) Kind() string { return "CREATE INDEX" }

// Object returns the index name (qualified when the keyspace is given), or
// "on table" when the name is derived.
func (st *CreateIndex) Object() string { return st.objectIn(st.Keyspace) }

// objectIn names the index for keyspace ks, as Object does; errors name it
// with the keyspace resolved.
func (st *CreateIndex) objectIn(ks string) string {
	if st.Name == "" {
		return "on " + qualify(ks, st.Table)
	}
	return qualify(ks, st.Name)
}

// DefaultIndexName is the name Cassandra gives an unnamed index of column
// on table: "<table>_<column>_idx" without non-word characters.
func DefaultIndexName(table, column string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, table+"_"+column+"_idx")
}

func (st *CreateIndex) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	ks := resolveKeyspace(st.Keyspace, env)
	tg := target{s: s, kind: st.Kind(), obj: st.objectIn(ks), res: Result{Kind: st.Kind(), Keyspace: ks, Table: st.Table, Name: st.Name}}
	k, err := keyspaceOf(s, tg.kind, ks, tg.obj, false)
	if k == nil {
		return tg.end(err)
	}
	t, ok := k.Table(st.Table)
	if !ok {
		return tg.fail(ErrNotFound, "table "+clip.String(qualify(ks, st.Table))+" does not exist")
	}
	if t.View() != nil {
		return tg.fail(ErrInvalid, viewNoIndexes)
	}
	if st.Name != "" {
		if r := nameReason("index", st.Name); r != "" {
			return tg.fail(ErrInvalid, r)
		}
		if _, exists := k.Index(st.Name); exists {
			if st.IfNotExists {
				return tg.end(nil)
			}
			return tg.fail(ErrAlreadyExists, "index already exists")
		}
	}
	class := canonicalIndexClass(st.Class)
	switch {
	case st.Custom && st.Class == "":
		return tg.fail(ErrInvalid, "a CUSTOM index needs USING 'class'")
	case len(st.Options) > 0 && st.Class == "":
		return tg.fail(ErrInvalid, "WITH OPTIONS needs USING 'class'")
	}
	target, r := st.target(t)
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	ix := &Index{Keyspace: ks, Table: t.Name, Name: st.Name, Target: target, Custom: class != "", Class: class}
	if len(st.Options) > 0 {
		ix.Options = make(map[string]string, len(st.Options))
		for k, v := range st.Options {
			ix.Options[k] = v
		}
	}
	for _, other := range k.TableIndexes(t.Name) {
		if other.Target == ix.Target && other.Class == ix.Class {
			if st.IfNotExists {
				return tg.end(nil)
			}
			return tg.fail(ErrInvalid, "index on "+clip.String(target.String())+" is a duplicate of existing index "+clip.String(other.Name))
		}
	}
	if ix.Name == "" {
		ix.Name = unusedIndexName(k, DefaultIndexName(t.Name, target.Column))
		if r := nameReason("index", ix.Name); r != "" {
			return tg.fail(ErrInvalid, "derived "+r+"; name the index")
		}
		tg.res.Name = ix.Name
	}
	if r := validateIndex(ix); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putIndex(k, ix), Diff{Changes: []Change{{Op: OpPutIndex, Keyspace: ks, Table: t.Name, Name: ix.Name, IndexValue: ix}}}, tg.res, nil
}

// unusedIndexName returns base, or base_1, base_2 and so on, the first
// that no index of k has, as Cassandra names a second unnamed index of a
// column.
func unusedIndexName(k *Keyspace, base string) string {
	name := base
	for i := 1; ; i++ {
		if _, taken := k.Index(name); !taken {
			return name
		}
		name = base + "_" + strconv.Itoa(i)
	}
}

// target checks the index target against table t, as Cassandra's CREATE
// INDEX does, and resolves a plain collection target to values().
// durationIndexReason is why no index can be created on a column of type
// t, which holds a duration: Cassandra's words for each kind of type.
func durationIndexReason(t Type) string {
	if f, ok := t.(FrozenType); ok {
		t = f.Inner
	}
	switch t.(type) {
	case ListType, SetType, MapType:
		return "secondary indexes are not supported on collections containing durations"
	case TupleType:
		return "secondary indexes are not supported on tuples containing durations"
	}
	return "secondary indexes are not supported on duration columns"
}

func (st *CreateIndex) target(t *Table) (IndexTarget, string) {
	target := st.Target
	c, ok := t.Column(target.Column)
	if !ok {
		return target, "column " + clip.String(quoteNonEmpty(target.Column)) + " does not exist"
	}
	for i := range t.Columns {
		if t.Columns[i].Type == TypeCounter {
			return target, "secondary indexes are not supported on counter tables"
		}
	}
	if c.Kind == PartitionKey && len(t.PartitionKey) == 1 {
		return target, "cannot create a secondary index on the only partition key column " + clip.String(c.Name)
	}
	if containsDuration(c.Type) {
		return target, durationIndexReason(c.Type)
	}
	typ := c.Type
	if _, udt := typ.(UserTypeRef); udt {
		return target, "secondary indexes are not supported on non-frozen user types: " + clip.String(c.Name)
	}
	_, isMap := typ.(MapType)
	frozenColl := false
	if f, ok := typ.(FrozenType); ok {
		switch f.Inner.(type) {
		case ListType, SetType, MapType:
			frozenColl = true
		}
	}
	multi := IsMultiCell(typ)
	switch target.Kind {
	case TargetSimple:
		if multi {
			target.Kind = TargetValues
		} else if frozenColl {
			return target, "cannot create an index on frozen collection " + clip.String(c.Name) + " except with full(" + clip.String(c.Name) + ")"
		}
	case TargetValues:
		if !multi {
			return target, "values() indexes are only supported on non-frozen collections, not on " + clip.String(c.Name) + " " + clip.String(typ.String())
		}
	case TargetKeys, TargetEntries:
		if !isMap {
			return target, target.Kind.String() + "() indexes are only supported on non-frozen maps, not on " + clip.String(c.Name) + " " + clip.String(typ.String())
		}
	case TargetFull:
		if !frozenColl {
			return target, "full() indexes are only supported on frozen collections, not on " + clip.String(c.Name) + " " + clip.String(typ.String())
		}
	default:
		return target, "invalid index target"
	}
	return target, ""
}

// DropIndex is DROP INDEX.
type DropIndex struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the index name.
	Name string
	// IfExists makes dropping a missing index a no-op.
	IfExists bool
}

// Kind returns "DROP INDEX".
func (*DropIndex) Kind() string { return "DROP INDEX" }

// Object returns "keyspace.index", or the index alone when the keyspace is
// left to the default.
func (st *DropIndex) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *DropIndex) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, ix, found, err := existing(s, env, st.Kind(), st.Keyspace, st.Name, &indexObject, st.IfExists)
	if !found {
		return tg.end(err)
	}
	tg.res.Table = ix.Table
	tg.res.Applied = true
	return s.deleteIndex(tg.k, ix), Diff{Changes: []Change{{Op: OpDropIndex, Keyspace: tg.k.Name, Table: ix.Table, Name: ix.Name}}}, tg.res, nil
}
