package cql

import "github.com/metalog/metalog/schema"

// createTableLike parses the rest of CREATE TABLE [IF NOT EXISTS] ks.name
// LIKE, after LIKE: the table to copy and the properties WITH sets over
// the copied ones, and INDEXES among them copies the indexes too. The
// clustering order is the copied table's, so WITH CLUSTERING ORDER BY is
// refused.
func (p *parser) createTableLike(ifNotExists bool, ks, name string) (schema.Statement, error) {
	st := &schema.CreateTableLike{Keyspace: ks, Name: name, IfNotExists: ifNotExists}
	var err error
	if st.SourceKeyspace, st.Source, err = p.qualifiedName("the name of the table to copy"); err != nil {
		return nil, err
	}
	if !p.keyword("with") {
		return st, nil
	}
	start := p.i
	var props schema.CreateTable
	seenOrder := false
	for {
		// WITH INDEXES (Parser.g's likeOption) among the properties; a
		// property called indexes is unknown, as in Cassandra.
		if t := p.peek(); isKeyword(t, "indexes") && !(p.peekAt(1).kind == tokPunct && p.peekAt(1).val == "=") {
			p.i++
			st.Indexes = true
		} else if err := p.tableProperty(&props, &seenOrder); err != nil {
			return nil, err
		}
		if !p.keyword("and") {
			break
		}
	}
	if props.ClusteringOrder != nil {
		for _, t := range p.toks[start:p.i] {
			if isKeyword(t, "clustering") {
				return nil, p.errAt(t, "CLUSTERING ORDER BY cannot follow LIKE: the copy has the clustering order of the table it copies")
			}
		}
	}
	st.ID, st.Options = props.ID, props.Options
	return st, nil
}
