package schema

import (
	"iter"

	"github.com/benbjohnson/immutable"
)

// The From iterators read a schema's sorted maps from a key on, so that a
// reader paging through many objects (the system_schema tables of the
// CQL server) pays O(log n) to find where a page starts and O(1) per object
// after it, instead of copying every object into a slice first. Each
// yields in key order and stops when the caller's loop does; the values
// are shared with the schema and must not be modified. They are functions,
// not methods, to keep Keyspace's method set small.

// KeyspacesFrom yields the keyspaces whose names are start or after it,
// in name order.
func KeyspacesFrom(s Schema, start string) iter.Seq[*Keyspace] {
	return seqFrom(s.keyspaces, start)
}

// TablesFrom yields the tables and materialized views of k (IsView tells
// them apart) whose names are start or after it, in name order.
func TablesFrom(k *Keyspace, start string) iter.Seq[*Table] {
	if k == nil {
		return seqFrom[*Table](nil, start)
	}
	return seqFrom(k.tables, start)
}

// UserTypesFrom yields the user types of k whose names are start or after
// it, in name order.
func UserTypesFrom(k *Keyspace, start string) iter.Seq[*UserType] {
	if k == nil {
		return seqFrom[*UserType](nil, start)
	}
	return seqFrom(k.types, start)
}

// FunctionsFrom yields the functions and aggregates of k whose signatures
// (FunctionSignature) are sig or after it, in signature order: by name,
// then by the text of the argument types.
func FunctionsFrom(k *Keyspace, sig string) iter.Seq[*Function] {
	if k == nil {
		return seqFrom[*Function](nil, sig)
	}
	return seqFrom(k.functions, sig)
}

// IndexesFrom yields the indexes of k ordered by table name, then by
// index name, from index name of table table on (name "" starts at the
// table's first index).
func IndexesFrom(k *Keyspace, table, name string) iter.Seq[*Index] {
	if k == nil {
		return seqFrom[*Index](nil, "")
	}
	return seqFrom(k.byTable, table+"\x00"+name)
}

// seqFrom yields the values of m from key start on; a nil m yields none.
func seqFrom[V any](m *immutable.SortedMap[string, V], start string) iter.Seq[V] {
	return func(yield func(V) bool) {
		if m == nil {
			return
		}
		it := m.Iterator()
		it.Seek(start)
		for !it.Done() {
			_, v, _ := it.Next()
			if !yield(v) {
				return
			}
		}
	}
}
