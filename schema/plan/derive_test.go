package plan

import (
	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// editClass says what an edit of a schema may make a plan do.
type editClass int

const (
	// safe edits add objects, columns, fields and indexes, or change or
	// remove properties: their plans drop nothing.
	safe editClass = iota
	// dropping edits remove columns or objects.
	dropping
	// impossible edits make a change that cannot be made in place.
	impossible
)

// edit is one kind of random change to a desired schema's statements.
type edit struct {
	name  string
	class editClass
	// do changes the statements (DESCRIBE of the schema, parsed) in place
	// or returns them changed; false means it does not apply to them.
	do func(e *editor, stmts []schema.Statement) ([]schema.Statement, bool)
}

// editor derives a desired schema b from a by random edits.
type editor struct {
	t     *rapid.T
	a, b  schema.Schema
	epoch uint64
	// applied counts the applied edits by name; worst is the highest
	// class among them.
	applied map[string]int
	worst   editClass
}

// derive returns a schema made from a by 1 to 6 random edits, each
// applied to the statements of DESCRIBE of the schema so far and kept
// only when the statements still apply, and the highest class of them.
func derive(t *rapid.T, a schema.Schema, counts map[string]int) (schema.Schema, editClass) {
	e := &editor{t: t, a: a, b: a, epoch: 5000, applied: counts}
	for range rapid.IntRange(1, 6).Draw(t, "edits") {
		ed := rapid.SampledFrom(edits).Draw(t, "edit")
		parsed, err := cql.Parse(describe.Schema(e.b))
		if err != nil {
			t.Fatalf("DESCRIBE does not parse: %v", err)
		}
		stmts := make([]schema.Statement, len(parsed))
		for i, p := range parsed {
			stmts[i] = p.Statement
		}
		stmts, ok := ed.do(e, stmts)
		if !ok {
			continue
		}
		e.epoch++
		nb, err := build(stmts, e.epoch)
		if err != nil {
			continue
		}
		e.b = nb
		e.applied[ed.name]++
		e.worst = max(e.worst, ed.class)
	}
	return e.b, e.worst
}

// build applies stmts in order to the empty schema at epoch.
func build(stmts []schema.Statement, epoch uint64) (schema.Schema, error) {
	var s schema.Schema
	for i, st := range stmts {
		var err error
		if s, _, _, err = schema.Apply(s, st, schema.Env{Epoch: epoch, Seq: uint32(i)}); err != nil {
			return s, err
		}
	}
	return s, nil
}

// statementsOf returns the statements of type T in stmts.
func statementsOf[T schema.Statement](stmts []schema.Statement) []T {
	var out []T
	for _, st := range stmts {
		if x, ok := st.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// pick draws one of xs, or reports there is none.
func pick[T any](e *editor, xs []T, label string) (T, bool) {
	var zero T
	if len(xs) == 0 {
		return zero, false
	}
	return rapid.SampledFrom(xs).Draw(e.t, label), true
}

// keyColumns returns the names of ct's primary key columns.
func keyColumns(ct *schema.CreateTable) map[string]bool {
	keys := map[string]bool{}
	for _, cd := range ct.Columns {
		if cd.PrimaryKey {
			keys[cd.Name] = true
		}
	}
	for _, n := range append(append([]string(nil), ct.PartitionKey...), ct.Clustering...) {
		keys[n] = true
	}
	return keys
}

// nonKey returns the indexes in ct.Columns of its non-key columns.
func nonKey(ct *schema.CreateTable) []int {
	keys := keyColumns(ct)
	var out []int
	for i, cd := range ct.Columns {
		if !keys[cd.Name] {
			out = append(out, i)
		}
	}
	return out
}

// isCounterDef reports whether ct defines a counter table.
func isCounterDef(ct *schema.CreateTable) bool {
	for _, cd := range ct.Columns {
		if cd.Type == schema.TypeCounter {
			return true
		}
	}
	return false
}

// freshColumn draws a column name neither ct nor table ct.Name of a has
// or had (dropped).
func (e *editor) freshColumn(ct *schema.CreateTable) (string, bool) {
	name := schematest.ColumnName(e.t, "new column")
	for _, cd := range ct.Columns {
		if cd.Name == name {
			return "", false
		}
	}
	if at, ok := e.a.Table(ct.Keyspace, ct.Name); ok {
		if _, had := at.Column(name); had {
			return "", false
		}
		if _, dropped := at.DroppedColumn(name); dropped {
			return "", false
		}
	}
	return name, true
}

// scalars are the types edits give columns and fields.
var scalars = []schema.Type{schema.TypeInt, schema.TypeBigint, schema.TypeText, schema.TypeUUID, schema.TypeTimestamp, schema.TypeBoolean, schema.TypeDouble}

// otherScalar draws a scalar type other than t.
func (e *editor) otherScalar(t schema.Type) schema.Type {
	var others []schema.Type
	for _, s := range scalars {
		if s.String() != t.String() {
			others = append(others, s)
		}
	}
	return rapid.SampledFrom(others).Draw(e.t, "other type")
}

// removeIndexes removes the CREATE INDEX statements of table ks.table
// (only those on column when it is not empty).
func removeIndexes(stmts []schema.Statement, ks, table, column string) []schema.Statement {
	out := stmts[:0]
	for _, st := range stmts {
		if ci, ok := st.(*schema.CreateIndex); ok && ci.Keyspace == ks && ci.Table == table && (column == "" || ci.Target.Column == column) {
			continue
		}
		out = append(out, st)
	}
	return out
}
