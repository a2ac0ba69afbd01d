package systemschema

import (
	"slices"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// rowOf is a row of t being filled by column name.
type rowOf struct {
	t   *Table
	row Row
}

// newRow starts a row of t, every value null.
func newRow(t *Table) rowOf { return rowOf{t: t, row: make(Row, len(t.Columns))} }

// set sets column name to v; a column t lacks is a bug in this package.
func (r rowOf) set(name string, v any) rowOf {
	i := r.t.ColumnIndex(name)
	if i < 0 {
		panic("systemschema: table " + r.t.Name + " has no column " + name)
	}
	r.row[i] = v
	return r
}

// scanKeyspaces yields k's keyspaces row.
func scanKeyspaces(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	if resumed {
		return true
	}
	repl := make(map[string]string, len(k.Replication.Options)+1)
	for o, v := range k.Replication.Options {
		repl[o] = v
	}
	repl["class"] = k.Replication.Class
	r := newRow(t).set("keyspace_name", k.Name).set("durable_writes", k.DurableWrites).set("replication", repl)
	return yield(Position{Keyspace: k.Name}, r.row)
}

// scanTables yields the rows of k's tables, views left out.
func scanTables(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachTable(k, q, resumed, func(tb *schema.Table) bool {
		if tb.IsView() || skipObject(q, resumed, tb.Name) {
			return true
		}
		r := newRow(t).set("keyspace_name", k.Name).set("table_name", tb.Name)
		r.set("id", [16]byte(tb.ID)).set("flags", tableFlags(tb))
		setParams(r, tb)
		return yield(Position{Keyspace: k.Name, Object: tb.Name}, r.row)
	})
}

// tableFlags returns the flags of a CQL table: compound, and counter when
// it has counter columns, as Cassandra 5.0 sets them.
func tableFlags(tb *schema.Table) []string {
	for _, c := range tb.Columns {
		if c.Type == schema.TypeCounter {
			return []string{"compound", "counter"}
		}
	}
	return []string{"compound"}
}

// scanViews yields the rows of k's materialized views.
func scanViews(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachTable(k, q, resumed, func(v *schema.Table) bool {
		if !v.IsView() || skipObject(q, resumed, v.Name) {
			return true
		}
		r := newRow(t).set("keyspace_name", k.Name).set("view_name", v.Name).set("id", [16]byte(v.ID))
		view := v.View()
		r.set("base_table_name", view.Base).set("include_all_columns", view.AllColumns)
		r.set("where_clause", schema.WhereText(view.Where))
		if base, ok := k.Table(view.Base); ok {
			r.set("base_table_id", [16]byte(base.ID))
		}
		setParams(r, v)
		return yield(Position{Keyspace: k.Name, Object: v.Name}, r.row)
	})
}

// scanColumns yields the rows of the columns of k's tables and views, by
// table, then by column name.
func scanColumns(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachTable(k, q, resumed, func(tb *schema.Table) bool {
		order := make([]int, len(tb.Columns))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return compareStrings(tb.Columns[a].Name, tb.Columns[b].Name) })
		for _, i := range order {
			c := &tb.Columns[i]
			if skipItem(q, resumed, tb.Name, c.Name) {
				continue
			}
			if !yield(Position{Keyspace: k.Name, Object: tb.Name, Item: c.Name}, columnRow(t, tb, c)) {
				return false
			}
		}
		return true
	})
}

// columnRow returns the columns row of column c of table tb.
func columnRow(t *Table, tb *schema.Table, c *schema.Column) Row {
	pos, order := int32(-1), "none"
	switch c.Kind {
	case schema.PartitionKey:
		pos = int32(slices.Index(tb.PartitionKey, c.Name))
	case schema.Clustering:
		i := slices.IndexFunc(tb.Clustering, func(cc schema.ClusteringColumn) bool { return cc.Name == c.Name })
		pos, order = int32(i), "asc"
		if i >= 0 && tb.Clustering[i].Order == schema.Desc {
			order = "desc"
		}
	}
	r := newRow(t).set("keyspace_name", tb.Keyspace).set("table_name", tb.Name).set("column_name", c.Name)
	r.set("clustering_order", order).set("column_name_bytes", []byte(c.Name)).set("kind", c.Kind.String())
	r.set("position", pos).set("type", TypeText(c.Type))
	return r.row
}

// scanDropped yields the rows of the dropped columns of k's tables and
// views, by table, then by column name.
func scanDropped(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachTable(k, q, resumed, func(tb *schema.Table) bool {
		dropped := tb.DroppedColumns()
		if len(dropped) == 0 {
			return true
		}
		order := make([]int, len(dropped))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			return compareStrings(dropped[a].Name, dropped[b].Name)
		})
		for _, i := range order {
			d := &dropped[i]
			if skipItem(q, resumed, tb.Name, d.Name) {
				continue
			}
			kind := "regular"
			if d.Kind == schema.DroppedStatic {
				kind = "static"
			}
			r := newRow(t).set("keyspace_name", k.Name).set("table_name", tb.Name).set("column_name", d.Name)
			r.set("dropped_time", droppedTime(d.Epoch)).set("kind", kind).set("type", TypeText(d.Type))
			if !yield(Position{Keyspace: k.Name, Object: tb.Name, Item: d.Name}, r.row) {
				return false
			}
		}
		return true
	})
}

// droppedTime is the dropped_time of a drop at epoch: Cassandra writes the
// drop's write timestamp (microseconds) in milliseconds; metalog's drop
// epoch stands in for it, which is the drop's USING TIMESTAMP when it had
// one.
func droppedTime(epoch uint64) int64 { return int64(epoch / 1000) }

// scanTriggers yields the rows of the triggers of k's tables.
func scanTriggers(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachTable(k, q, resumed, func(tb *schema.Table) bool {
		for _, tr := range tb.Triggers() {
			if skipItem(q, resumed, tb.Name, tr.Name) {
				continue
			}
			r := newRow(t).set("keyspace_name", k.Name).set("table_name", tb.Name).set("trigger_name", tr.Name)
			r.set("options", map[string]string{"class": tr.Class})
			if !yield(Position{Keyspace: k.Name, Object: tb.Name, Item: tr.Name}, r.row) {
				return false
			}
		}
		return true
	})
}

// scanIndexes yields the rows of k's indexes, by table, then by index
// name.
func scanIndexes(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	table, name := q.Name, ""
	if resumed && (q.After.Object > table || q.After.Object == table && q.After.Item > name) {
		table, name = q.After.Object, q.After.Item
	}
	for ix := range schema.IndexesFrom(k, table, name) {
		if q.Name != "" && ix.Table != q.Name {
			return true
		}
		if skipItem(q, resumed, ix.Table, ix.Name) {
			continue
		}
		if !yield(Position{Keyspace: k.Name, Object: ix.Table, Item: ix.Name}, indexRow(t, ix)) {
			return false
		}
	}
	return true
}

// indexRow returns the indexes row of ix: kind CUSTOM with the class as
// class_name for a custom index, COMPOSITES for a regular one, and the
// target in options, as Cassandra 5.0's IndexMetadata keeps them.
func indexRow(t *Table, ix *schema.Index) Row {
	opts := make(map[string]string, len(ix.Options)+2)
	for o, v := range ix.Options {
		opts[o] = v
	}
	opts["target"] = ix.Target.String()
	kind := "COMPOSITES"
	if ix.Custom || ix.Class != "" {
		kind = "CUSTOM"
		opts["class_name"] = ix.Class
	}
	r := newRow(t).set("keyspace_name", ix.Keyspace).set("table_name", ix.Table).set("index_name", ix.Name)
	return r.set("kind", kind).set("options", opts).row
}

// scanTypes yields the rows of k's user types.
func scanTypes(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	start := q.Name
	if resumed && q.After.Object > start {
		start = q.After.Object
	}
	for ut := range schema.UserTypesFrom(k, start) {
		if q.Name != "" && ut.Name != q.Name {
			return true
		}
		if skipObject(q, resumed, ut.Name) {
			continue
		}
		names := make([]string, len(ut.Fields))
		types := make([]string, len(ut.Fields))
		for i, f := range ut.Fields {
			names[i], types[i] = f.Name, TypeText(f.Type)
		}
		r := newRow(t).set("keyspace_name", k.Name).set("type_name", ut.Name)
		r.set("field_names", names).set("field_types", types)
		if !yield(Position{Keyspace: k.Name, Object: ut.Name}, r.row) {
			return false
		}
	}
	return true
}

// eachFunction calls fn with the functions (or aggregates) of k that q
// selects, in signature order, after q.After when resumed.
func eachFunction(k *schema.Keyspace, q *Query, resumed bool, kind schema.FunctionKind, fn func(f *schema.Function) bool) bool {
	start := ""
	if q.Name != "" {
		start = q.Name + "("
	}
	if resumed && q.After.Object > start {
		start = q.After.Object
	}
	for f := range schema.FunctionsFrom(k, start) {
		if q.Name != "" && f.Name != q.Name {
			return true
		}
		if f.Kind != kind || skipObject(q, resumed, f.Signature()) {
			continue
		}
		if !fn(f) {
			return false
		}
	}
	return true
}

// scanFunctions yields the rows of k's functions.
func scanFunctions(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachFunction(k, q, resumed, schema.ScalarFunction, func(f *schema.Function) bool {
		r := newRow(t).set("keyspace_name", k.Name).set("function_name", f.Name)
		r.set("argument_types", typeTexts(f.ArgTypes)).set("argument_names", slices.Clone(f.ArgNames))
		r.set("body", f.Body).set("called_on_null_input", f.CalledOnNullInput)
		r.set("language", f.Language).set("return_type", TypeText(f.ReturnType))
		return yield(Position{Keyspace: k.Name, Object: f.Signature()}, r.row)
	})
}

// scanAggregates yields the rows of k's aggregates.
func scanAggregates(t *Table, k *schema.Keyspace, q *Query, resumed bool, yield func(Position, Row) bool) bool {
	return eachFunction(k, q, resumed, schema.AggregateFunction, func(f *schema.Function) bool {
		r := newRow(t).set("keyspace_name", k.Name).set("aggregate_name", f.Name)
		r.set("argument_types", typeTexts(f.ArgTypes)).set("return_type", TypeText(f.ReturnType))
		r.set("state_func", f.StateFunc).set("state_type", TypeText(f.StateType))
		if f.FinalFunc != "" {
			r.set("final_func", f.FinalFunc)
		}
		if f.InitCond != "" {
			r.set("initcond", f.InitCond)
		}
		return yield(Position{Keyspace: k.Name, Object: f.Signature()}, r.row)
	})
}

// typeTexts returns the Cassandra text of each type.
func typeTexts(ts []schema.Type) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = TypeText(t)
	}
	return out
}

// compareStrings orders names as Cassandra orders text clustering
// values: by their UTF-8 bytes.
func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// quoteName quotes an identifier as Cassandra's maybeQuote does: bare
// when it reads back as itself, in double quotes otherwise.
func quoteName(name string) string { return cqltext.QuoteIdentifier(name) }
