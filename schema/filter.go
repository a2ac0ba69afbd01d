package schema

import "github.com/benbjohnson/immutable"

// Filter returns the schema of only the keyspaces keep reports true for,
// as if the others did not exist: its Keyspaces, Table, counts, DESCRIBE
// text and Digest are those of a schema holding just those keyspaces. A
// nil keep returns s itself.
//
// It costs one call of keep per keyspace and no walk of any keyspace's
// objects: the filtered digest, sizes and counts are sums of the ones each
// keyspace keeps. When keep holds for every keyspace it returns s without
// allocating; otherwise it builds one new keyspace map (the keyspaces
// themselves are shared).
func (s Schema) Filter(keep func(keyspace string) bool) Schema {
	if keep == nil || s.keyspaces == nil {
		return s
	}
	kept := 0
	it := s.keyspaces.Iterator()
	for !it.Done() {
		name, _, _ := it.Next()
		if keep(name) {
			kept++
		}
	}
	switch kept {
	case s.keyspaces.Len():
		return s
	case 0:
		return Schema{}
	}
	b := immutable.NewSortedMapBuilder[string, *Keyspace](nil)
	var out Schema
	for it = s.keyspaces.Iterator(); !it.Done(); {
		name, k, _ := it.Next()
		if !keep(name) {
			continue
		}
		b.Set(name, k)
		out.tables += k.TableCount()
		out.views += k.ViewCount()
		out.digest.add(k.digest)
	}
	out.keyspaces = b.Map()
	return out
}
