package systemschema

import (
	"iter"

	"github.com/metalog/metalog/schema"
)

// Row is one row of a system table, its values in the order of the
// table's Columns. A nil value is null; otherwise a value's Go type
// follows its column's CQL type: text is string, boolean bool, int int32,
// double float64, timestamp int64 (milliseconds since the Unix epoch),
// uuid [16]byte, blob []byte, frozen<list<text>> and frozen<set<text>>
// []string (a set sorted), frozen<map<text, text>> map[string]string and
// frozen<map<text, blob>> map[string][]byte. A non-nil empty collection
// is an empty value, not null. Rows own their slices and maps, except the
// []byte of column_name_bytes, extensions and the strings, which may be
// shared and must not be modified.
type Row []any

// Position is where a row sits in its table's clustering order, as much
// of its primary key as paging needs: give the Position of the last row
// of a page as Query.After to read the next page.
type Position struct {
	// Keyspace is the row's keyspace_name.
	Keyspace string
	// Object is the row's first clustering column (the table, view or
	// type name), or for functions and aggregates the signature, name
	// and argument types (schema.FunctionSignature). Empty for keyspaces.
	Object string
	// Item is the second clustering column (the column, index or
	// trigger name); empty for tables whose key has one clustering
	// column or none.
	Item string
}

// IsZero reports whether p is the zero Position, the start of a table.
func (p Position) IsZero() bool { return p == Position{} }

// Query selects rows of a system table, as a SELECT's WHERE clause on
// its key and a paging state would.
type Query struct {
	// Keyspace restricts keyspace_name to one keyspace; empty selects
	// every keyspace.
	Keyspace string
	// Name restricts the first clustering column (table_name,
	// view_name, type_name, function_name, aggregate_name) to one name;
	// empty selects all. It has effect only with Keyspace set, as
	// Cassandra requires the partition key to restrict a clustering
	// column; the keyspaces table has no clustering column and ignores
	// it.
	Name string
	// Visible reports whether a keyspace may be seen; the rows of a
	// keyspace it refuses are not there, whatever else the query says.
	// Nil sees every keyspace.
	Visible func(keyspace string) bool
	// After resumes the scan after the row at that position (the last
	// row of the previous page); the zero Position starts at the first
	// row.
	After Position
	// Own adds the keyspaces of Own to the schema scanned, seen by every
	// reader whatever Visible says, as Cassandra lists its own keyspaces.
	Own bool
}

// scanner yields the rows of its table in keyspace k that q selects,
// after q.After when resumed (k is q.After's keyspace); it returns false
// when yield did.
type scanner func(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool

// Scan returns the rows of t in s that q selects, with their positions,
// in clustering order: by keyspace name, then by the clustering columns.
// (Cassandra orders partitions by the token of their key; metalog by the
// keyspace name, which no reader of these tables relies on.) Rows are
// computed as the loop asks for them: finding the first costs O(log n)
// in the number of keyspaces and objects, each further row O(1) beside
// the objects a table skips (views for tables, tables for views, and
// aggregates for functions and back, which share one map).
func (t *Table) Scan(s schema.Schema, q Query) iter.Seq2[Position, Row] {
	return func(yield func(Position, Row) bool) {
		start := q.Keyspace
		if q.After.Keyspace > start {
			start = q.After.Keyspace
		}
		if q.Keyspace == "" {
			q.Name = ""
		}
		for k, own := range keyspacesFrom(s, start, q.Own) {
			if q.Keyspace != "" && k.Name != q.Keyspace {
				return
			}
			if !own && q.Visible != nil && !q.Visible(k.Name) {
				continue
			}
			if !t.scan(t, k, &q, k.Name == q.After.Keyspace, yield) {
				return
			}
		}
	}
}

// keyspacesFrom yields the keyspaces of s, and with withOwn those of Own,
// whose names are start or after it, in name order, each with whether it
// is one of Own's (a keyspace of s named as one of Own's is left out:
// Cassandra's names win, as in Cassandra, where no one can create them).
func keyspacesFrom(s schema.Schema, start string, withOwn bool) iter.Seq2[*schema.Keyspace, bool] {
	return func(yield func(*schema.Keyspace, bool) bool) {
		if !withOwn {
			for k := range schema.KeyspacesFrom(s, start) {
				if !yield(k, false) {
					return
				}
			}
			return
		}
		nextOwn, stop := iter.Pull(schema.KeyspacesFrom(Own(), start))
		defer stop()
		own, ok := nextOwn()
		for k := range schema.KeyspacesFrom(s, start) {
			for ok && own.Name < k.Name {
				if !yield(own, true) {
					return
				}
				own, ok = nextOwn()
			}
			if ok && own.Name == k.Name {
				continue // own is yielded next, in its place
			}
			if !yield(k, false) {
				return
			}
		}
		for ; ok; own, ok = nextOwn() {
			if !yield(own, true) {
				return
			}
		}
	}
}

// Page returns up to limit rows of t in s that q selects, in Scan's
// order, and the position to pass as Query.After for the next page; more
// reports whether another row follows (Page computes one row beyond the
// page to know). A limit below 1 means 1. A page costs O(log n + limit).
func (t *Table) Page(s schema.Schema, q Query, limit int) (rows []Row, next Position, more bool) {
	if limit < 1 {
		limit = 1
	}
	rows = make([]Row, 0, min(limit, 64))
	for pos, row := range t.Scan(s, q) {
		if len(rows) == limit {
			return rows, next, true
		}
		rows = append(rows, row)
		next = pos
	}
	return rows, next, false
}

// eachTable calls fn with the tables and views of k that q selects, in
// name order, from q.After's object on when resumed, until fn returns
// false; it returns false when fn did.
func eachTable(k *schema.Keyspace, q *Query, resumed bool, fn func(t *schema.Table) bool) bool {
	start := q.Name
	if resumed && q.After.Object > start {
		start = q.After.Object
	}
	for t := range schema.TablesFrom(k, start) {
		if q.Name != "" && t.Name != q.Name {
			return true
		}
		if !fn(t) {
			return false
		}
	}
	return true
}

// skipObject reports whether a row keyed by object alone was the last
// row of the previous page, or came before it.
func skipObject(q *Query, resumed bool, object string) bool {
	return resumed && object <= q.After.Object
}

// skipItem reports whether the row of object and item was the last row
// of the previous page, or came before it.
func skipItem(q *Query, resumed bool, object, item string) bool {
	if !resumed {
		return false
	}
	return object < q.After.Object || object == q.After.Object && item <= q.After.Item
}
