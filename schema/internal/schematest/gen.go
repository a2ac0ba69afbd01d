// Package schematest has rapid generators of valid schema statements, shared
// by the tests of schema and schema/cql.
package schematest

import (
	"fmt"

	"github.com/metalog/metalog/schema"
	"pgregory.net/rapid"
)

// Name draws a keyspace or table name: mostly lowercase, sometimes mixed
// case or a reserved word, so that quoting is exercised.
func Name(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.StringMatching(`[a-z][a-z0-9_]{0,12}`),
		rapid.StringMatching(`[A-Za-z0-9_]{1,10}`),
		rapid.SampledFrom([]string{"table", "select", "key", "text", "static", "primary", "with"}),
	).Draw(t, label)
}

// ColumnName draws a column name, sometimes one that needs quoting.
func ColumnName(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.StringMatching(`[a-z][a-z0-9_]{0,8}`),
		rapid.StringMatching(`[A-Za-z0-9_ "]{1,6}`),
		rapid.SampledFrom([]string{"and", "key", "primary", "static", "int", "list", "clustering"}),
	).Draw(t, label)
}

var scalarNatives = []schema.NativeType{
	schema.TypeAscii, schema.TypeBigint, schema.TypeBlob, schema.TypeBoolean,
	schema.TypeDate, schema.TypeDecimal, schema.TypeDouble, schema.TypeFloat,
	schema.TypeInet, schema.TypeInt, schema.TypeSmallint, schema.TypeText,
	schema.TypeTime, schema.TypeTimestamp, schema.TypeTimeuuid,
	schema.TypeTinyint, schema.TypeUUID, schema.TypeVarint,
}

// keyType draws a type allowed in a primary key, a set or a map key.
func keyType(t *rapid.T, label string, depth int) schema.Type {
	if depth > 1 || rapid.IntRange(0, 4).Draw(t, label+"_k") > 0 {
		return rapid.SampledFrom(scalarNatives).Draw(t, label)
	}
	switch rapid.IntRange(0, 2).Draw(t, label+"_c") {
	case 0:
		return schema.FrozenType{Inner: schema.ListType{Elem: keyType(t, label+"_e", depth+1)}}
	case 1:
		return schema.TupleType{Elems: []schema.Type{keyType(t, label+"_a", depth+1), keyType(t, label+"_b", depth+1)}}
	default:
		return schema.FrozenType{Inner: schema.MapType{Key: keyType(t, label+"_mk", depth+1), Value: keyType(t, label+"_mv", depth+1)}}
	}
}

// innerType draws a single-cell type allowed inside a collection.
func innerType(t *rapid.T, label string, depth int) schema.Type {
	if depth > 1 || rapid.IntRange(0, 3).Draw(t, label+"_k") > 0 {
		return rapid.SampledFrom(append(scalarNatives, schema.TypeDuration)).Draw(t, label)
	}
	return schema.FrozenType{Inner: collection(t, label, depth+1)}
}

func collection(t *rapid.T, label string, depth int) schema.Type {
	switch rapid.IntRange(0, 2).Draw(t, label+"_coll") {
	case 0:
		return schema.ListType{Elem: innerType(t, label+"_e", depth)}
	case 1:
		return schema.SetType{Elem: keyType(t, label+"_e", depth)}
	default:
		return schema.MapType{Key: keyType(t, label+"_k", depth), Value: innerType(t, label+"_v", depth)}
	}
}

// RegularType draws a type for a non-key column (never counter).
func RegularType(t *rapid.T, label string) schema.Type {
	switch rapid.IntRange(0, 6).Draw(t, label+"_kind") {
	case 0:
		return collection(t, label, 0)
	case 1:
		return schema.VectorType{Elem: rapid.SampledFrom(scalarNatives).Draw(t, label+"_ve"), Dimension: rapid.IntRange(1, 1000).Draw(t, label+"_vd")}
	case 2:
		return innerType(t, label, 0)
	default:
		return rapid.SampledFrom(append(scalarNatives, schema.TypeDuration)).Draw(t, label)
	}
}

// OptionValue draws a table property value as canonical CQL literal text.
func OptionValue(t *rapid.T, label string) string {
	switch rapid.IntRange(0, 4).Draw(t, label+"_kind") {
	case 0:
		return schema.QuoteString(rapid.String().Draw(t, label))
	case 1:
		return fmt.Sprint(rapid.Int64().Draw(t, label))
	case 2:
		return rapid.SampledFrom([]string{"true", "false", "0.01", "1.5e-3", "0x00ff"}).Draw(t, label)
	case 3:
		return "{}"
	default:
		return "{'class': " + schema.QuoteString(rapid.StringMatching(`[A-Za-z.]{1,20}`).Draw(t, label+"_c")) + ", 'n': 4}"
	}
}

// CreateTable draws a valid CREATE TABLE for keyspace ks. Apply accepts it
// unless a table of that name exists.
func CreateTable(t *rapid.T, ks string) *schema.CreateTable {
	st := &schema.CreateTable{Keyspace: ks, Name: Name(t, "table")}
	names := rapid.SliceOfNDistinct(rapid.Custom(func(t *rapid.T) string { return ColumnName(t, "col") }), 1, 10, rapid.ID[string]).Draw(t, "columns")
	nPK := rapid.IntRange(1, min(3, len(names))).Draw(t, "npk")
	nCK := rapid.IntRange(0, min(3, len(names)-nPK)).Draw(t, "nck")
	counter := rapid.IntRange(0, 9).Draw(t, "counter") == 0
	for i, name := range names {
		cd := schema.ColumnDef{Name: name}
		switch {
		case i < nPK+nCK:
			cd.Type = keyType(t, "keytype", 0)
		case counter:
			cd.Type = schema.TypeCounter
		default:
			cd.Type = RegularType(t, "type")
		}
		if i >= nPK+nCK && nCK > 0 && rapid.IntRange(0, 4).Draw(t, "static") == 0 {
			cd.Static = true
		}
		st.Columns = append(st.Columns, cd)
	}
	st.PartitionKey = names[:nPK]
	st.Clustering = names[nPK : nPK+nCK]
	if nPK == 1 && nCK == 0 && rapid.Bool().Draw(t, "inline") {
		st.Columns[0].PrimaryKey = true
		st.PartitionKey = nil
	}
	for _, name := range st.Clustering[:rapid.IntRange(0, nCK).Draw(t, "norder")] {
		st.ClusteringOrder = append(st.ClusteringOrder, schema.ClusteringColumn{Name: name, Order: rapid.SampledFrom([]schema.Order{schema.Asc, schema.Desc}).Draw(t, "order")})
	}
	st.Columns = rapid.Permutation(st.Columns).Draw(t, "definition order")
	if rapid.Bool().Draw(t, "explicit id") {
		st.ID = rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).Draw(t, "id")
	}
	for range rapid.IntRange(0, 3).Draw(t, "noptions") {
		k := rapid.StringMatching(`[a-z][a-z0-9_]{0,15}`).Filter(func(s string) bool { return s != "id" }).Draw(t, "option")
		if st.Options == nil {
			st.Options = map[string]string{}
		}
		st.Options[k] = OptionValue(t, "value")
	}
	return st
}

// CreateKeyspace draws a valid CREATE KEYSPACE.
func CreateKeyspace(t *rapid.T) *schema.CreateKeyspace {
	st := &schema.CreateKeyspace{Name: Name(t, "keyspace"), DurableWrites: rapid.Bool().Draw(t, "durable")}
	if rapid.Bool().Draw(t, "simple") {
		st.Replication = schema.Replication{Class: rapid.SampledFrom([]string{"SimpleStrategy", schema.SimpleStrategy}).Draw(t, "class"),
			Options: map[string]string{"replication_factor": fmt.Sprint(rapid.IntRange(1, 9).Draw(t, "rf"))}}
	} else {
		st.Replication = schema.Replication{Class: "NetworkTopologyStrategy",
			Options: rapid.MapOfN(rapid.StringMatching(`[a-zA-Z0-9_-]{1,8}`), rapid.Map(rapid.IntRange(0, 9), func(i int) string { return fmt.Sprint(i) }), 0, 3).Draw(t, "dcs")}
	}
	return st
}
