package snapshot_test

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
	"github.com/metalog/metalog/snapshot"
)

// The generators below build schemas from random statements applied with
// schema.Apply, skipping any the schema refuses, so every schema drawn is
// one a cluster could reach. (schema/internal/schematest is internal to
// schema and cannot be imported here.)

var natives = []schema.NativeType{
	schema.TypeAscii, schema.TypeBigint, schema.TypeBlob, schema.TypeBoolean,
	schema.TypeDate, schema.TypeDecimal, schema.TypeDouble, schema.TypeFloat,
	schema.TypeInet, schema.TypeInt, schema.TypeSmallint, schema.TypeText,
	schema.TypeTime, schema.TypeTimestamp, schema.TypeTimeuuid,
	schema.TypeTinyint, schema.TypeUUID, schema.TypeVarint,
}

func genName(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"a", "b", "c", "orders", "users"}),
		rapid.StringMatching(`[a-z][a-z0-9_]{0,10}`),
		rapid.StringMatching(`[A-Z][A-Za-z0-9_]{0,6}`),
	).Draw(t, label)
}

func genNative(t *rapid.T, label string) schema.Type {
	return rapid.SampledFrom(natives).Draw(t, label)
}

// genColumnType draws a regular column type, sometimes one of types.
func genColumnType(t *rapid.T, types []string) schema.Type {
	switch rapid.IntRange(0, 7).Draw(t, "type kind") {
	case 0:
		return schema.ListType{Elem: genNative(t, "list elem")}
	case 1:
		return schema.SetType{Elem: genNative(t, "set elem")}
	case 2:
		return schema.MapType{Key: genNative(t, "map key"), Value: genNative(t, "map value")}
	case 3:
		return schema.FrozenType{Inner: schema.ListType{Elem: genNative(t, "frozen elem")}}
	case 4:
		return schema.TupleType{Elems: []schema.Type{genNative(t, "tuple a"), genNative(t, "tuple b")}}
	case 5:
		return schema.VectorType{Elem: schema.TypeFloat, Dimension: rapid.IntRange(1, 64).Draw(t, "dim")}
	case 6:
		if len(types) > 0 {
			return schema.FrozenType{Inner: schema.UserTypeRef{Name: rapid.SampledFrom(types).Draw(t, "udt")}}
		}
	}
	return genNative(t, "native")
}

func genCreateTable(t *rapid.T, ks string, types []string) *schema.CreateTable {
	st := &schema.CreateTable{Keyspace: ks, Name: genName(t, "table")}
	cols := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z][a-z0-9]{0,5}`), 1, 8, rapid.ID[string]).Draw(t, "columns")
	nPK := rapid.IntRange(1, min(2, len(cols))).Draw(t, "npk")
	nCK := rapid.IntRange(0, min(2, len(cols)-nPK)).Draw(t, "nck")
	for i, c := range cols {
		cd := schema.ColumnDef{Name: c}
		if i < nPK+nCK {
			cd.Type = genNative(t, "key type")
		} else {
			cd.Type = genColumnType(t, types)
			cd.Static = nCK > 0 && rapid.IntRange(0, 5).Draw(t, "static") == 0
		}
		st.Columns = append(st.Columns, cd)
	}
	st.PartitionKey, st.Clustering = cols[:nPK], cols[nPK:nPK+nCK]
	for _, c := range st.Clustering {
		if rapid.Bool().Draw(t, "desc") {
			st.ClusteringOrder = append(st.ClusteringOrder, schema.ClusteringColumn{Name: c, Order: schema.Desc})
		} else {
			st.ClusteringOrder = append(st.ClusteringOrder, schema.ClusteringColumn{Name: c, Order: schema.Asc})
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "explicit id") == 0 {
		st.ID = rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).Draw(t, "id")
	}
	if rapid.Bool().Draw(t, "options") {
		st.Options = map[string]string{
			"comment":              cqltext.QuoteString(rapid.String().Draw(t, "comment")),
			"gc_grace_seconds":     fmt.Sprint(rapid.IntRange(0, 1_000_000).Draw(t, "gc")),
			"default_time_to_live": fmt.Sprint(rapid.IntRange(0, 1_000_000).Draw(t, "ttl")),
		}
	}
	return st
}

// genSchema applies random statements and returns the schema reached.
func genSchema(t *rapid.T) schema.Schema {
	var s schema.Schema
	var epoch uint64
	apply := func(st schema.Statement) bool {
		ns, _, res, err := schema.Apply(s, st, schema.Env{Epoch: epoch + 1})
		if err != nil || !res.Applied {
			return false
		}
		s = ns
		epoch++
		return true
	}
	types := map[string][]string{}
	var keyspaces []string
	for range rapid.IntRange(0, 40).Draw(t, "statements") {
		if len(keyspaces) == 0 || rapid.IntRange(0, 6).Draw(t, "new keyspace") == 0 {
			st := &schema.CreateKeyspace{Name: genName(t, "keyspace"), DurableWrites: rapid.Bool().Draw(t, "durable")}
			if rapid.Bool().Draw(t, "simple") {
				st.Replication = schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": fmt.Sprint(rapid.IntRange(1, 5).Draw(t, "rf"))}}
			} else {
				st.Replication = schema.Replication{Class: "NetworkTopologyStrategy", Options: rapid.MapOfN(rapid.StringMatching(`dc[0-9]`), rapid.SampledFrom([]string{"1", "2", "3"}), 0, 3).Draw(t, "dcs")}
			}
			if apply(st) {
				keyspaces = append(keyspaces, st.Name)
			}
			continue
		}
		ks := rapid.SampledFrom(keyspaces).Draw(t, "ks")
		switch rapid.IntRange(0, 9).Draw(t, "op") {
		case 0, 1:
			st := &schema.CreateType{Keyspace: ks, Name: rapid.StringMatching(`ut[a-z0-9]{0,4}`).Draw(t, "type name")}
			for _, f := range rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z][a-z0-9]{0,4}`), 1, 4, rapid.ID[string]).Draw(t, "fields") {
				typ := genNative(t, "field type")
				if len(types[ks]) > 0 && rapid.IntRange(0, 3).Draw(t, "nested") == 0 {
					typ = schema.FrozenType{Inner: schema.UserTypeRef{Name: rapid.SampledFrom(types[ks]).Draw(t, "nested type")}}
				}
				st.Fields = append(st.Fields, schema.Field{Name: f, Type: typ})
			}
			if apply(st) {
				types[ks] = append(types[ks], st.Name)
			}
		case 2, 3, 4, 5:
			apply(genCreateTable(t, ks, types[ks]))
		case 6, 7:
			// An index on a random column of a random table.
			k, _ := s.Keyspace(ks)
			if tables := k.Tables(); len(tables) > 0 {
				tbl := rapid.SampledFrom(tables).Draw(t, "indexed table")
				col := rapid.SampledFrom(tbl.Columns).Draw(t, "indexed column")
				st := &schema.CreateIndex{Keyspace: ks, Table: tbl.Name, Target: schema.IndexTarget{Column: col.Name}}
				if rapid.Bool().Draw(t, "named") {
					st.Name = genName(t, "index name")
				}
				if rapid.IntRange(0, 3).Draw(t, "sai") == 0 {
					st.Custom, st.Class = true, "sai"
				}
				apply(st)
			}
		case 8:
			// Drop a regular column, leaving a dropped-column record.
			k, _ := s.Keyspace(ks)
			if tables := k.Tables(); len(tables) > 0 {
				tbl := rapid.SampledFrom(tables).Draw(t, "altered table")
				col := rapid.SampledFrom(tbl.Columns).Draw(t, "dropped column")
				apply(&schema.AlterTable{Keyspace: ks, Name: tbl.Name, Drop: []string{col.Name}})
			}
		case 9:
			k, _ := s.Keyspace(ks)
			if tables := k.Tables(); len(tables) > 0 {
				apply(&schema.DropTable{Keyspace: ks, Name: rapid.SampledFrom(tables).Draw(t, "dropped table").Name})
			}
		}
	}
	return s
}

func genContents(t *rapid.T) *snapshot.Contents {
	c := &snapshot.Contents{
		Epoch:  rapid.Uint64().Draw(t, "epoch"),
		Index:  rapid.Uint64().Draw(t, "index"),
		Schema: genSchema(t),
	}
	ids := rapid.SliceOfNDistinct(rapid.StringN(1, 40, -1), 0, 20, rapid.ID[string]).Draw(t, "request ids")
	for _, id := range ids {
		c.Requests = append(c.Requests, snapshot.Request{ID: id, Record: rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "record")})
	}
	if rapid.Bool().Draw(t, "guardrails") {
		c.Sections = []snapshot.Section{{Tag: snapshot.SectionGuardrails, Data: rapid.SliceOfN(rapid.Byte(), 0, 50).Draw(t, "guardrails data")}}
	}
	return c
}

// TestPropertyRoundTrip: Encode then Decode gives the same digest, DESCRIBE
// text, epoch, index, requests and sections, and re-encodes to the same
// bytes.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genContents(t)
		b := snapshot.Encode(nil, c)
		got, err := snapshot.Decode(b)
		if err != nil {
			t.Fatalf("Decode: %v\n%s", err, describe.Schema(c.Schema))
		}
		sameContents(t, c, got)
		if string(snapshot.Encode(nil, got)) != string(b) {
			t.Fatal("re-encoding is not canonical")
		}
	})
}

// TestPropertyCorruptionDetected: changing any single byte of a snapshot
// is detected.
func TestPropertyCorruptionDetected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := snapshot.Encode(nil, genContents(t))
		i := rapid.IntRange(0, len(b)-1).Draw(t, "byte")
		delta := rapid.ByteRange(1, 255).Draw(t, "xor")
		b[i] ^= delta
		if c, err := snapshot.Decode(b); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("byte %d of %d xor %#x: Decode = %v, %v", i, len(b), delta, c, err)
		}
	})
}
