package schema

import "github.com/benbjohnson/immutable"

// TableLoader adds many tables to a schema, as PutTable does one at a
// time, for loading a stored schema (a snapshot of 100,000 tables). The
// tables of a keyspace that has none yet are collected in a mutable map
// builder, and the keyspace is replaced once, when a table of another
// keyspace comes or at Schema; a keyspace that already has tables takes
// them through PutTable. Tables are best put keyspace by keyspace. A
// materialized view may come before its base table (tables come in name
// order); neither Put nor PutTable checks that the base exists.
type TableLoader struct {
	s Schema
	// The keyspace being built: old is the one in s, cur its copy, b its
	// tables (and views, which cur.byBase indexes by base table) and added
	// how many of them are new tables.
	old, cur *Keyspace
	b        *immutable.SortedMapBuilder[string, *Table]
	added    int
	// last is the greatest name put into b: a table named after it (as
	// tables loaded in name order are) cannot replace one, so it needs no
	// lookup.
	last string
}

// LoadTables returns a loader that adds tables to s.
func (s Schema) LoadTables() *TableLoader { return &TableLoader{s: s} }

// Put adds t, with the checks and errors of PutTable; on an error nothing
// of t is added. t is retained and must not be modified afterwards.
func (l *TableLoader) Put(t *Table) error {
	if t == nil || l.cur == nil || t.Keyspace != l.cur.Name {
		l.finish()
		if t != nil {
			if ks, ok := l.s.Keyspace(t.Keyspace); ok && (ks.tables == nil || ks.tables.Len() == 0) {
				c := *ks
				l.old, l.cur = ks, &c
				l.b = immutable.NewSortedMapBuilder[string, *Table](nil)
			}
		}
		if l.cur == nil {
			var err error
			l.s, err = l.s.PutTable(t)
			return err
		}
	}
	if reason := validateTable(t); reason != "" {
		return newError("PUT TABLE", t.QualifiedName(), ErrInvalid, reason)
	}
	c := l.cur
	l.added += tableDelta(t)
	old, ok := (*Table)(nil), false
	if t.Name <= l.last {
		old, ok = l.b.Get(t.Name)
	} else {
		l.last = t.Name
	}
	if ok {
		l.added -= tableDelta(old)
		c.digest.sub(tableHash(old))
		c.users = updateUsers(c.users, 't', t.Name, tableTypeRefs(old), tableTypeRefs(t))
		c.byBase = unindexView(c.byBase, old)
	} else {
		c.users = updateUsers(c.users, 't', t.Name, nil, tableTypeRefs(t))
	}
	c.byBase = indexView(c.byBase, t)
	c.digest.add(tableHash(t))
	l.b.Set(t.Name, t)
	return nil
}

// finish replaces the keyspace being built in the schema.
func (l *TableLoader) finish() {
	if l.cur == nil {
		return
	}
	l.cur.tables = l.b.Map()
	l.s = l.s.replaceKeyspace(l.old, l.cur, l.added)
	l.old, l.cur, l.b, l.added, l.last = nil, nil, nil, 0, ""
}

// Schema returns the schema with every table put so far. The loader may
// go on after it.
func (l *TableLoader) Schema() Schema {
	l.finish()
	return l.s
}
