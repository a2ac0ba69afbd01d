package plan

import (
	"slices"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
)

// edits are the kinds of random changes derive makes.
var edits = []edit{
	{"add column", safe, addColumn},
	{"set property", safe, setProperty},
	{"remove property", safe, removeProperty},
	{"add table", safe, addTable},
	{"add type", safe, addType},
	{"add field", safe, addField},
	{"add index", safe, addIndex},
	{"alter keyspace", safe, alterKeyspaceEdit},
	{"add keyspace", safe, addKeyspace},
	{"drop column", dropping, dropColumn},
	{"drop table", dropping, dropTableEdit},
	{"drop index", dropping, dropIndexEdit},
	{"drop type", dropping, dropTypeEdit},
	{"drop keyspace", dropping, dropKeyspaceEdit},
	{"retype column", impossible, retypeColumn},
	{"flip static", impossible, flipStatic},
	{"flip clustering order", impossible, flipOrder},
	{"retype key column", impossible, retypeKey},
	{"remove field", impossible, removeField},
	{"retype field", impossible, retypeField},
	{"reorder fields", impossible, reorderFields},
	{"re-add dropped column", impossible, reAddDropped},
	{"make counter table", impossible, makeCounter},
}

// addColumn adds a column of a fresh name (a counter to a counter table) to a table.
func addColumn(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	name, ok := e.freshColumn(ct)
	if !ok {
		return nil, false
	}
	cd := schema.ColumnDef{Name: name, Type: schematest.RegularType(e.t, "new column type")}
	if isCounterDef(ct) {
		cd.Type = schema.TypeCounter
	}
	cd.Static = len(ct.Clustering) > 0 && rapid.IntRange(0, 3).Draw(e.t, "static") == 0
	ct.Columns = append(ct.Columns, cd)
	return stmts, true
}

// setProperty sets a random property of a table.
func setProperty(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	k, v := schematest.Option(e.t)
	if ct.Options == nil {
		ct.Options = map[string]string{}
	}
	ct.Options[k] = v
	return stmts, true
}

// removeProperty removes one of a table's properties.
func removeProperty(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok || len(ct.Options) == 0 {
		return nil, false
	}
	names := make([]string, 0, len(ct.Options))
	for k := range ct.Options {
		names = append(names, k)
	}
	slices.Sort(names)
	delete(ct.Options, rapid.SampledFrom(names).Draw(e.t, "removed property"))
	return stmts, true
}

// typesIn returns the names of the types stmts create in keyspace ks.
func typesIn(stmts []schema.Statement, ks string) []string {
	var names []string
	for _, ct := range statementsOf[*schema.CreateType](stmts) {
		if ct.Keyspace == ks {
			names = append(names, ct.Name)
		}
	}
	return names
}

// freshIn reports whether neither a nor b has an object called name of the
// kind has looks for in keyspace ks.
func (e *editor) freshIn(ks string, has func(k *schema.Keyspace) bool) bool {
	for _, s := range []schema.Schema{e.a, e.b} {
		if k, ok := s.Keyspace(ks); ok && has(k) {
			return false
		}
	}
	return true
}

// addTable adds a table of a fresh name, maybe using the keyspace's types.
func addTable(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ck, ok := pick(e, statementsOf[*schema.CreateKeyspace](stmts), "keyspace")
	if !ok {
		return nil, false
	}
	ct := schematest.CreateTableWithTypes(e.t, ck.Name, typesIn(stmts, ck.Name))
	ct.ID = ""
	if !e.freshIn(ck.Name, func(k *schema.Keyspace) bool { _, ok := k.Table(ct.Name); return ok }) {
		return nil, false
	}
	return append(stmts, ct), true
}

// addType adds a type of a fresh name, maybe using the keyspace's types.
func addType(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ck, ok := pick(e, statementsOf[*schema.CreateKeyspace](stmts), "keyspace")
	if !ok {
		return nil, false
	}
	ut := schematest.CreateType(e.t, ck.Name, typesIn(stmts, ck.Name))
	if !e.freshIn(ck.Name, func(k *schema.Keyspace) bool { _, ok := k.UserType(ut.Name); return ok }) {
		return nil, false
	}
	return append(stmts, ut), true
}

// addField appends a field of a fresh name to a type.
func addField(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ut, ok := pick(e, statementsOf[*schema.CreateType](stmts), "type")
	if !ok {
		return nil, false
	}
	name := schematest.ColumnName(e.t, "new field")
	for _, f := range ut.Fields {
		if f.Name == name {
			return nil, false
		}
	}
	ut.Fields = append(ut.Fields, schema.Field{Name: name, Type: rapid.SampledFrom(scalars).Draw(e.t, "field type")})
	return stmts, true
}

// addIndex adds an index of a fresh name on a table.
func addIndex(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	tbl, ok := e.b.Table(ct.Keyspace, ct.Name)
	if !ok {
		return nil, false
	}
	ci := schematest.CreateIndex(e.t, tbl, nil)
	if ci == nil || !e.freshIn(ct.Keyspace, func(k *schema.Keyspace) bool { _, ok := k.Index(ci.Name); return ok }) {
		return nil, false
	}
	return append(stmts, ci), true
}

// alterKeyspaceEdit changes a keyspace's durable_writes or replication.
func alterKeyspaceEdit(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ck, ok := pick(e, statementsOf[*schema.CreateKeyspace](stmts), "keyspace")
	if !ok {
		return nil, false
	}
	if rapid.Bool().Draw(e.t, "durable") {
		ck.DurableWrites = !ck.DurableWrites
	} else {
		ck.Replication = schematest.CreateKeyspace(e.t).Replication
	}
	return stmts, true
}

// addKeyspace adds a keyspace of a fresh name, maybe with a table.
func addKeyspace(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ck := schematest.CreateKeyspace(e.t)
	if _, ok := e.a.Keyspace(ck.Name); ok {
		return nil, false
	}
	stmts = append(stmts, ck)
	if rapid.Bool().Draw(e.t, "with a table") {
		ct := schematest.CreateTable(e.t, ck.Name)
		stmts = append(stmts, ct)
	}
	return stmts, true
}

// dropColumn removes a non-key column of a table and the indexes on it.
func dropColumn(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	i, ok := pick(e, nonKey(ct), "dropped column")
	if !ok {
		return nil, false
	}
	name := ct.Columns[i].Name
	ct.Columns = slices.Delete(ct.Columns, i, i+1)
	return removeIndexes(stmts, ct.Keyspace, ct.Name, name), true
}

// dropTableEdit removes a table and its indexes.
func dropTableEdit(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	stmts = slices.DeleteFunc(stmts, func(st schema.Statement) bool { return st == schema.Statement(ct) })
	return removeIndexes(stmts, ct.Keyspace, ct.Name, ""), true
}

// dropIndexEdit removes an index.
func dropIndexEdit(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ci, ok := pick(e, statementsOf[*schema.CreateIndex](stmts), "index")
	if !ok {
		return nil, false
	}
	return slices.DeleteFunc(stmts, func(st schema.Statement) bool { return st == schema.Statement(ci) }), true
}

// dropTypeEdit removes a type (the edit is dropped if something uses it).
func dropTypeEdit(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ut, ok := pick(e, statementsOf[*schema.CreateType](stmts), "type")
	if !ok {
		return nil, false
	}
	return slices.DeleteFunc(stmts, func(st schema.Statement) bool { return st == schema.Statement(ut) }), true
}

// dropKeyspaceEdit removes a keyspace and everything in it.
func dropKeyspaceEdit(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ck, ok := pick(e, statementsOf[*schema.CreateKeyspace](stmts), "keyspace")
	if !ok {
		return nil, false
	}
	return slices.DeleteFunc(stmts, func(st schema.Statement) bool {
		switch st := st.(type) {
		case *schema.CreateKeyspace:
			return st.Name == ck.Name
		case *schema.CreateType:
			return st.Keyspace == ck.Name
		case *schema.CreateTable:
			return st.Keyspace == ck.Name
		case *schema.CreateIndex:
			return st.Keyspace == ck.Name
		}
		return false
	}), true
}

// retypeColumn gives a non-key column of a non-counter table another scalar type.
func retypeColumn(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok || isCounterDef(ct) {
		return nil, false
	}
	i, ok := pick(e, nonKey(ct), "retyped column")
	if !ok {
		return nil, false
	}
	ct.Columns[i].Type = e.otherScalar(ct.Columns[i].Type)
	return stmts, true
}

// flipStatic makes a non-key column of a table with clustering columns static, or regular.
func flipStatic(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok || len(ct.Clustering) == 0 {
		return nil, false
	}
	i, ok := pick(e, nonKey(ct), "flipped column")
	if !ok {
		return nil, false
	}
	ct.Columns[i].Static = !ct.Columns[i].Static
	return stmts, true
}

// flipOrder flips the clustering order of one clustering column.
func flipOrder(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok || len(ct.Clustering) == 0 {
		return nil, false
	}
	for _, name := range ct.Clustering[len(ct.ClusteringOrder):] {
		ct.ClusteringOrder = append(ct.ClusteringOrder, schema.ClusteringColumn{Name: name, Order: schema.Asc})
	}
	i := rapid.IntRange(0, len(ct.ClusteringOrder)-1).Draw(e.t, "flipped order")
	ct.ClusteringOrder[i].Order = 1 - ct.ClusteringOrder[i].Order
	return stmts, true
}

// retypeKey gives a primary key column another scalar type.
func retypeKey(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	keys := keyColumns(ct)
	var idx []int
	for i, cd := range ct.Columns {
		if keys[cd.Name] {
			idx = append(idx, i)
		}
	}
	i, _ := pick(e, idx, "retyped key column")
	ct.Columns[i].Type = e.otherScalar(ct.Columns[i].Type)
	return stmts, true
}

// removeField removes a field of a type.
func removeField(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ut, ok := pick(e, statementsOf[*schema.CreateType](stmts), "type")
	if !ok || len(ut.Fields) < 2 {
		return nil, false
	}
	i := rapid.IntRange(0, len(ut.Fields)-1).Draw(e.t, "removed field")
	ut.Fields = slices.Delete(ut.Fields, i, i+1)
	return stmts, true
}

// retypeField gives a field of a type another scalar type.
func retypeField(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ut, ok := pick(e, statementsOf[*schema.CreateType](stmts), "type")
	if !ok {
		return nil, false
	}
	i := rapid.IntRange(0, len(ut.Fields)-1).Draw(e.t, "retyped field")
	ut.Fields[i].Type = e.otherScalar(ut.Fields[i].Type)
	return stmts, true
}

// reorderFields swaps the first field of a type with another.
func reorderFields(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ut, ok := pick(e, statementsOf[*schema.CreateType](stmts), "type")
	if !ok || len(ut.Fields) < 2 {
		return nil, false
	}
	i := rapid.IntRange(1, len(ut.Fields)-1).Draw(e.t, "moved field")
	ut.Fields[0], ut.Fields[i] = ut.Fields[i], ut.Fields[0]
	return stmts, true
}

// reAddDropped adds back a column the current table dropped, with a type ALTER TABLE refuses (a counter, or boolean or int).
func reAddDropped(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok {
		return nil, false
	}
	at, ok := e.a.Table(ct.Keyspace, ct.Name)
	if !ok {
		return nil, false
	}
	d, ok := pick(e, at.DroppedColumns(), "re-added column")
	if !ok {
		return nil, false
	}
	for _, cd := range ct.Columns {
		if cd.Name == d.Name {
			return nil, false
		}
	}
	typ := schema.Type(schema.TypeBoolean)
	switch {
	case isCounterDef(ct):
		typ = schema.TypeCounter
	case d.Type == schema.TypeBoolean:
		typ = schema.TypeInt
	}
	ct.Columns = append(ct.Columns, schema.ColumnDef{Name: d.Name, Type: typ})
	return stmts, true
}

// makeCounter turns a non-counter table into a counter table (its non-key columns counters, one more counter), without its indexes.
func makeCounter(e *editor, stmts []schema.Statement) ([]schema.Statement, bool) {
	ct, ok := pick(e, statementsOf[*schema.CreateTable](stmts), "table")
	if !ok || isCounterDef(ct) {
		return nil, false
	}
	for _, i := range nonKey(ct) {
		ct.Columns[i].Type = schema.TypeCounter
	}
	name, ok := e.freshColumn(ct)
	if !ok {
		return nil, false
	}
	ct.Columns = append(ct.Columns, schema.ColumnDef{Name: name, Type: schema.TypeCounter})
	return removeIndexes(stmts, ct.Keyspace, ct.Name, ""), true
}
