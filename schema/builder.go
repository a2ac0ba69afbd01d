package schema

import (
	"github.com/benbjohnson/immutable"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// Builder assembles a Schema from decoded objects, for the readers of a
// stored schema (the store's load, the snapshot codec): keyspaces first,
// then types, tables, indexes and functions. Unlike Apply it does not run
// statements: each Put checks the object's structure and that what it
// hangs on exists, and replaces an object of the same name, keeping the
// structural sharing and the incremental digest of every Schema.
//
// Tables are the numerous objects (a snapshot of 100,000 tables): those of
// a keyspace that has none yet are collected in a mutable map builder, and
// the keyspace is replaced once, when an object of another keyspace or
// kind comes or at Schema, instead of copying a path of the table map per
// table. Tables are best put keyspace by keyspace; a keyspace that already
// has tables takes them one at a time. A materialized view may come before
// its base table (tables come in name order); PutTable does not check that
// the base exists.
//
// The zero Builder starts from the empty schema; NewBuilder starts from
// another. A Builder is not safe for concurrent use; the Schemas it
// returns are.
type Builder struct {
	s Schema
	// The keyspace whose tables are being built: old is the one in s, cur
	// its copy, tables its tables (and views, which cur.byBase indexes by
	// base table) and added how many of them are new tables (views left
	// out). cur is nil when no keyspace is being built.
	old, cur *Keyspace
	tables   *immutable.SortedMapBuilder[string, *Table]
	added    int
	// last is the greatest name put into tables: a table named after it
	// (as tables loaded in name order are) cannot replace one, so it needs
	// no lookup.
	last string
}

// NewBuilder returns a Builder that adds objects to base, which stays as
// it is.
func NewBuilder(base Schema) *Builder { return &Builder{s: base} }

// Schema returns the schema with every object put so far. The Builder may
// go on after it; the returned Schema does not change.
func (b *Builder) Schema() Schema {
	b.flush()
	return b.s
}

// PutKeyspace puts k in place of the keyspace of the same name. If that
// keyspace exists its tables, types, indexes and functions are kept and
// those of k are ignored; otherwise the new keyspace has k's (none for a
// Keyspace built as a literal; for a keyspace taken from another Schema
// this walks its objects to compute its digest). k itself is not retained:
// a copy is. k is not validated; a nil k changes nothing.
func (b *Builder) PutKeyspace(k *Keyspace) {
	b.flush()
	b.s = b.s.putKeyspace(k)
}

// PutUserType puts ut in place of the user type of the same name in
// keyspace ut.Keyspace. It checks the type's structure (an *Error with
// ErrInvalid) and its keyspace (ErrNotFound), not that the types it uses
// exist, so types load in any order. On an error nothing changes. ut is
// retained and must not be modified afterwards.
func (b *Builder) PutUserType(ut *UserType) error {
	const stmt = "PUT TYPE"
	b.flush()
	if ut == nil {
		return newError(stmt, "", ErrInvalid, "nil type")
	}
	if reason := validateUserType(ut); reason != "" {
		return newError(stmt, ut.QualifiedName(), ErrInvalid, reason)
	}
	k, ok := b.s.Keyspace(ut.Keyspace)
	if !ok {
		return newError(stmt, ut.QualifiedName(), ErrNotFound, "keyspace "+clip.String(cqltext.QuoteIdentifier(ut.Keyspace))+" does not exist")
	}
	b.s = b.s.putUserType(k, ut)
	return nil
}

// PutTable puts t (a table or a materialized view) in place of the table
// of the same name in keyspace t.Keyspace; the indexes of a replaced table
// are kept. It checks the table's structure (an *Error with ErrInvalid)
// and that its keyspace exists (ErrNotFound), not that the user types it
// uses exist (put types first). On an error nothing of t is added. t is
// retained and must not be modified afterwards.
func (b *Builder) PutTable(t *Table) error { return b.putTable(t, nil) }

// PutEncodedTable is PutTable for t decoded from enc, its encoding
// (AppendTable), for a loader of a store whose digest it trusts and
// compares with the result's afterwards: t's structure is not checked,
// and its digest is taken from enc instead of encoding t again. If enc is
// not the canonical encoding of t (as AppendTable writes it now), the
// schema's digest is not the one the same tables give in another Schema:
// the loader sees the difference and loads with PutTable instead. enc is
// not retained.
func (b *Builder) PutEncodedTable(t *Table, enc []byte) error {
	h := objectDigest(enc)
	return b.putTable(t, &h)
}

// putTable is PutTable (h nil) or PutEncodedTable of t whose digest is
// h. A keyspace that has tables already takes t through putTableAlone,
// which checks it either way.
func (b *Builder) putTable(t *Table, h *digest) error {
	if t == nil || b.cur == nil || t.Keyspace != b.cur.Name {
		b.flush()
		if t != nil {
			if ks, ok := b.s.Keyspace(t.Keyspace); ok && (ks.tables == nil || ks.tables.Len() == 0) {
				c := *ks
				b.old, b.cur = ks, &c
				b.tables = immutable.NewSortedMapBuilder[string, *Table](nil)
			}
		}
		if b.cur == nil {
			return b.putTableAlone(t)
		}
	}
	if h == nil {
		if reason := validateTable(t); reason != "" {
			return newError("PUT TABLE", t.QualifiedName(), ErrInvalid, reason)
		}
	}
	b.added += tableDelta(t)
	var old *Table
	if t.Name <= b.last {
		old, _ = b.tables.Get(t.Name)
	} else {
		b.last = t.Name
	}
	if old != nil {
		b.added -= tableDelta(old)
	}
	if h == nil {
		b.cur.indexTable(old, t)
	} else {
		b.cur.indexTableHashed(old, t, *h)
	}
	b.tables.Set(t.Name, t)
	return nil
}

// putTableAlone is PutTable of one table into b's schema, with no keyspace
// being built: it copies a path of the keyspace's table map.
func (b *Builder) putTableAlone(t *Table) error {
	const stmt = "PUT TABLE"
	if t == nil {
		return newError(stmt, "", ErrInvalid, "nil table")
	}
	if reason := validateTable(t); reason != "" {
		return newError(stmt, t.QualifiedName(), ErrInvalid, reason)
	}
	k, ok := b.s.Keyspace(t.Keyspace)
	if !ok {
		return newError(stmt, t.QualifiedName(), ErrNotFound, "keyspace "+clip.String(cqltext.QuoteIdentifier(t.Keyspace))+" does not exist")
	}
	b.s = b.s.putTable(k, t)
	return nil
}

// flush replaces the keyspace whose tables are being built in b's schema.
func (b *Builder) flush() {
	if b.cur == nil {
		return
	}
	b.cur.tables = b.tables.Map()
	b.s = b.s.replaceKeyspace(b.old, b.cur, b.added)
	b.old, b.cur, b.tables, b.added, b.last = nil, nil, nil, 0, ""
}

// PutIndex puts ix in place of the index of the same name in keyspace
// ix.Keyspace (put tables first). It checks the index's structure
// (ErrInvalid), that its table and target column exist (ErrNotFound), and
// that no other table has an index of that name (ErrAlreadyExists). On an
// error nothing changes. ix is retained and must not be modified
// afterwards.
func (b *Builder) PutIndex(ix *Index) error {
	const stmt = "PUT INDEX"
	b.flush()
	if ix == nil {
		return newError(stmt, "", ErrInvalid, "nil index")
	}
	obj := qualify(ix.Keyspace, ix.Name)
	if reason := validateIndex(ix); reason != "" {
		return newError(stmt, obj, ErrInvalid, reason)
	}
	k, ok := b.s.Keyspace(ix.Keyspace)
	if !ok {
		return newError(stmt, obj, ErrNotFound, "keyspace "+clip.String(cqltext.QuoteIdentifier(ix.Keyspace))+" does not exist")
	}
	t, ok := k.Table(ix.Table)
	if !ok {
		return newError(stmt, obj, ErrNotFound, "table "+clip.String(qualify(ix.Keyspace, ix.Table))+" does not exist")
	}
	if _, ok := t.Column(ix.Target.Column); !ok {
		return newError(stmt, obj, ErrNotFound, "column "+clip.String(quoteNonEmpty(ix.Target.Column))+" does not exist in table "+clip.String(t.QualifiedName()))
	}
	if old, ok := k.Index(ix.Name); ok && old.Table != ix.Table {
		return newError(stmt, obj, ErrAlreadyExists, "index "+clip.String(ix.Name)+" already exists on table "+clip.String(old.Table))
	}
	b.s = b.s.putIndex(k, ix)
	return nil
}

// PutFunction puts f in place of the function or aggregate of the same
// signature in keyspace f.Keyspace (put types first). It checks f's
// structure (ErrInvalid) and its keyspace (ErrNotFound), not that the
// types and functions it uses exist, so functions and aggregates load in
// any order. On an error nothing changes. f is retained and must not be
// modified afterwards.
func (b *Builder) PutFunction(f *Function) error {
	const stmt = "PUT FUNCTION"
	b.flush()
	if f == nil {
		return newError(stmt, "", ErrInvalid, "nil function")
	}
	if r := validateFunction(f); r != "" {
		return newError(stmt, f.QualifiedName(), ErrInvalid, r)
	}
	k, ok := b.s.Keyspace(f.Keyspace)
	if !ok {
		return newError(stmt, f.QualifiedName(), ErrNotFound, "keyspace "+clip.String(cqltext.QuoteIdentifier(f.Keyspace))+" does not exist")
	}
	b.s = b.s.putFunction(k, f)
	return nil
}
