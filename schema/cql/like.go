package cql

import "github.com/metalog/metalog/schema"

// createTableLike parses the rest of CREATE TABLE [IF NOT EXISTS] ks.name
// LIKE, after LIKE: the table to copy and the properties WITH sets over
// the copied ones. The clustering order is the copied table's, so WITH
// CLUSTERING ORDER BY is refused.
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
	if err := p.tableProperties(&props); err != nil {
		return nil, err
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
