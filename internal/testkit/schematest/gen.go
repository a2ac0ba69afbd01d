package schematest

import (
	"fmt"
	"unicode"

	"github.com/metalog/metalog/internal/cqltext"
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

// ColumnName draws a column name, sometimes one that needs quoting: any
// printable text (letters, marks, digits, punctuation, symbols, spaces) is
// a valid quoted name.
func ColumnName(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.StringMatching(`[a-z][a-z0-9_]{0,8}`),
		rapid.StringMatching(`[A-Za-z0-9_ "]{1,6}`),
		rapid.StringOfN(rapid.RuneFrom(nil, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs), 1, 4, -1),
		rapid.SampledFrom([]string{"and", "key", "primary", "static", "int", "list", "clustering"}),
	).Draw(t, label)
}

// scalarNatives are the native types allowed anywhere: all but counter and
// duration.
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

// collection draws a non-frozen list, set or map whose elements are allowed
// in it.
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

// Option draws a valid table property and its value as CQL literal text
// (not necessarily canonical: Apply canonicalizes it).
func Option(t *rapid.T) (string, string) {
	name := rapid.SampledFrom([]string{"comment", "default_time_to_live", "gc_grace_seconds", "bloom_filter_fp_chance",
		"caching", "compaction", "compression", "crc_check_chance", "speculative_retry", "additional_write_policy",
		"memtable_flush_period_in_ms", "min_index_interval", "read_repair", "cdc", "extensions"}).Draw(t, "option")
	var v string
	switch name {
	case "comment":
		v = cqltext.QuoteString(rapid.String().Draw(t, "comment"))
	case "default_time_to_live", "gc_grace_seconds", "memtable_flush_period_in_ms":
		v = fmt.Sprint(rapid.IntRange(0, 630720000).Draw(t, "int"))
	case "min_index_interval":
		v = fmt.Sprint(rapid.IntRange(1, 2048).Draw(t, "int"))
	case "bloom_filter_fp_chance", "crc_check_chance":
		v = rapid.SampledFrom([]string{"0.01", "1", "0.1", "1.5e-3", "'0.5'"}).Draw(t, "fraction")
	case "caching":
		v = rapid.SampledFrom([]string{"{'keys': 'ALL', 'rows_per_partition': 'NONE'}", "{'keys': 'none', 'rows_per_partition': 10}", "{}"}).Draw(t, "caching")
	case "compaction":
		v = "{'class': " + cqltext.QuoteString(rapid.SampledFrom([]string{"SizeTieredCompactionStrategy", "LeveledCompactionStrategy", "com.example.Custom"}).Draw(t, "class")) + ", 'min_threshold': 4}"
	case "compression":
		v = rapid.SampledFrom([]string{"{'class': 'LZ4Compressor', 'chunk_length_in_kb': 16}", "{'enabled': false}", "{}"}).Draw(t, "compression")
	case "speculative_retry", "additional_write_policy":
		v = rapid.SampledFrom([]string{"'99p'", "'99PERCENTILE'", "'NONE'", "'always'", "'50ms'", "'MIN(99p,50ms)'"}).Draw(t, "retry")
	case "read_repair":
		v = rapid.SampledFrom([]string{"'BLOCKING'", "'none'"}).Draw(t, "rr")
	case "cdc":
		v = rapid.SampledFrom([]string{"true", "false"}).Draw(t, "cdc")
	case "extensions":
		v = rapid.SampledFrom([]string{"{}", "{'a': 0x01, 'b': 0xFF}"}).Draw(t, "ext")
	}
	return name, v
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
		cd.Mask = Mask(t, cd.Type)
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
		k, v := Option(t)
		if st.Options == nil {
			st.Options = map[string]string{}
		}
		st.Options[k] = v
	}
	return st
}

// CreateTableWithTypes is CreateTable, sometimes giving regular columns
// one of the user types named in types (which must exist in ks, with no
// non-frozen collection fields when used unfrozen).
func CreateTableWithTypes(t *rapid.T, ks string, types []string) *schema.CreateTable {
	st := CreateTable(t, ks)
	if len(types) == 0 {
		return st
	}
	for i := range st.Columns {
		cd := &st.Columns[i]
		if cd.Type == schema.TypeCounter || containsName(st.PartitionKey, cd.Name) || containsName(st.Clustering, cd.Name) || cd.PrimaryKey {
			continue
		}
		if rapid.IntRange(0, 2).Draw(t, "use type") == 0 {
			ref := schema.UserTypeRef{Name: rapid.SampledFrom(types).Draw(t, "type ref")}
			cd.Type = schema.FrozenType{Inner: ref}
			if rapid.Bool().Draw(t, "in list") {
				cd.Type = schema.ListType{Elem: cd.Type}
			}
		}
	}
	return st
}

// containsName reports whether s is in list.
func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CreateType draws a valid CREATE TYPE for keyspace ks whose fields may
// use (frozen) the earlier types.
func CreateType(t *rapid.T, ks string, earlier []string) *schema.CreateType {
	st := &schema.CreateType{Keyspace: ks, Name: rapid.StringMatching(`[a-z][a-z0-9_]{0,8}`).Filter(func(s string) bool {
		_, native := schema.NativeTypeByName(s)
		return !native && !cqltext.IsReserved(s) && !containsName([]string{"list", "map", "frozen", "tuple", "vector", "byte", "complex", "enum", "interval", "macaddr", "bitstring"}, s)
	}).Draw(t, "type name")}
	names := rapid.SliceOfNDistinct(rapid.Custom(func(t *rapid.T) string { return ColumnName(t, "field") }), 1, 5, rapid.ID[string]).Draw(t, "fields")
	for _, n := range names {
		var typ schema.Type
		if len(earlier) > 0 && rapid.IntRange(0, 3).Draw(t, "nested") == 0 {
			typ = schema.FrozenType{Inner: schema.UserTypeRef{Name: rapid.SampledFrom(earlier).Draw(t, "nested type")}}
		} else {
			typ = rapid.SampledFrom(append(scalarNatives, schema.TypeDuration)).Draw(t, "field type")
		}
		st.Fields = append(st.Fields, schema.Field{Name: n, Type: typ})
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

// Mask draws, one time in eight, a mask valid on a column of type typ
// (nil otherwise): one that masks any type, or mask_inner or mask_outer
// on text, mask_hash on blob.
func Mask(t *rapid.T, typ schema.Type) *schema.MaskDef {
	if rapid.IntRange(0, 7).Draw(t, "masked") != 0 {
		return nil
	}
	choices := []*schema.MaskDef{
		{Function: "mask_default"},
		{Keyspace: "system", Function: "mask_null"},
		{Function: "mask_replace", Args: []schema.Literal{{Kind: schema.LitNull}}},
	}
	switch typ {
	case schema.TypeText, schema.TypeAscii:
		choices = append(choices, &schema.MaskDef{Function: "mask_inner", Args: []schema.Literal{{Kind: schema.LitInt, Text: "1"}, {Kind: schema.LitNull}}},
			&schema.MaskDef{Function: "mask_outer", Args: []schema.Literal{{Kind: schema.LitInt, Text: "2"}, {Kind: schema.LitInt, Text: "0"}, {Kind: schema.LitString, Text: "#"}}})
	case schema.TypeBlob:
		choices = append(choices, &schema.MaskDef{Function: "mask_hash", Args: []schema.Literal{{Kind: schema.LitString, Text: "SHA-256"}}})
	}
	return rapid.SampledFrom(choices).Draw(t, "mask")
}
