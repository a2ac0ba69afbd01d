package schematest

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
	"pgregory.net/rapid"
)

// Pool is the names a random schema draws its keyspaces, types, tables
// and indexes from. Small pools make two schemas drawn independently
// share objects, so that comparing them is more than "all new".
type Pool struct {
	// Keyspaces, Types, Tables and Indexes are the names of each kind.
	Keyspaces, Types, Tables, Indexes []string
	// Views are the names of materialized views, which share the
	// tables' namespace.
	Views []string
}

// SmallPool has a few names of each kind, some of which need quoting (mixed
// case, reserved words, a type named like a keyword).
var SmallPool = Pool{
	Keyspaces: []string{"ks", "Ks2", "select"},
	Types:     []string{"addr", "Point", "key"},
	Tables:    []string{"t1", "T2", "table"},
	Indexes:   []string{"i1", "I2", "index"},
	Views:     []string{"v1", "V2", "view"},
}

// Stats counts what Schema drew, for tests to report and to check that
// the draws exercise every kind of object.
type Stats struct {
	// Applied and Refused count the statements Apply took and refused.
	Applied, Refused int
	// Kinds counts the applied statements by kind ("CREATE TABLE"...).
	Kinds map[string]int
}

// Schema draws a schema by applying random statements to the empty one
// with schema.Apply, at epoch (and Seq numbering the statements, so table
// ids derive from them): keyspaces, user types (some using earlier types,
// some extended by ALTER TYPE ADD), tables (collections, frozen types,
// static and counter columns, properties, quoted names), columns dropped
// and added back (so that tables remember dropped columns), indexes,
// triggers, functions, aggregates and materialized views, all named from pool. Statements Apply refuses (a duplicate index, a
// column re-added with another type) are skipped and counted in stats,
// which may be nil.
func Schema(t *rapid.T, pool Pool, epoch uint64, stats *Stats) schema.Schema {
	g := &schemaGen{t: t, env: schema.Env{Epoch: epoch}, stats: stats}
	for _, ks := range rapid.SliceOfDistinct(rapid.SampledFrom(pool.Keyspaces), rapid.ID[string]).Draw(t, "keyspaces") {
		st := CreateKeyspace(t)
		st.Name = ks
		g.apply(st)
		var types []string
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom(pool.Types), rapid.ID[string]).Draw(t, "types") {
			ct := CreateType(t, ks, types)
			ct.Name = name
			if g.apply(ct) {
				types = append(types, name)
			}
			if rapid.IntRange(0, 3).Draw(t, "alter type") == 0 {
				g.apply(&schema.AlterType{Keyspace: ks, Name: name, Add: &schema.Field{Name: ColumnName(t, "new field"), Type: rapid.SampledFrom(scalarNatives).Draw(t, "new field type")}})
			}
		}
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom(pool.Tables), rapid.ID[string]).Draw(t, "tables") {
			ct := CreateTableWithTypes(t, ks, types)
			ct.Name = name
			if g.apply(ct) {
				g.dropAndAdd(ks, name)
			}
		}
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom(pool.Indexes), rapid.ID[string]).Draw(t, "indexes") {
			k, _ := g.s.Keyspace(ks)
			tables := k.Tables()
			if len(tables) == 0 {
				break
			}
			if ci := CreateIndex(t, rapid.SampledFrom(tables).Draw(t, "indexed table"), []string{name}); ci != nil {
				g.apply(ci)
			}
		}
		g.triggers(ks, pool)
		g.functions(ks, types, pool)
		g.views(ks, pool)
	}
	return g.s
}

// functionBodies are the bodies drawn functions have; two, so that two
// schemas drawn independently may hold the same function with another
// body (replaced in place).
var functionBodies = []string{"return s;", "return null;"}

// functions draws a few functions, named from the pool's table names (so
// that some overload others), each a state function candidate f(s, a int)
// whose state type is int, text or one of the keyspace's types, returning
// the state type (or, now and then, another type), called on null input
// or not; then an aggregate or two over them, named from the index
// names, with an INITCOND of the state type when the state function
// needs one.
func (g *schemaGen) functions(ks string, types []string, pool Pool) {
	states := []schema.Type{schema.TypeInt, schema.TypeText}
	for _, ut := range types {
		states = append(states, schema.UserTypeRef{Name: ut})
	}
	var candidates []*schema.CreateFunction
	for range rapid.IntRange(0, 3).Draw(g.t, "functions") {
		state := rapid.SampledFrom(states).Draw(g.t, "state type")
		ret := state
		if rapid.IntRange(0, 3).Draw(g.t, "other return type") == 0 {
			ret = rapid.SampledFrom(states).Draw(g.t, "return type")
		}
		st := &schema.CreateFunction{Keyspace: ks, Name: rapid.SampledFrom(pool.Tables).Draw(g.t, "function name"),
			Args: []schema.FunctionArg{{Name: "s", Type: state}, {Name: "a", Type: schema.TypeInt}}, ReturnType: ret,
			CalledOnNullInput: rapid.Bool().Draw(g.t, "called on null input"), Language: "java",
			Body: rapid.SampledFrom(functionBodies).Draw(g.t, "function body")}
		if g.apply(st) && schema.TypesEqual(ret, state) {
			candidates = append(candidates, st)
		}
	}
	if len(candidates) == 0 {
		return
	}
	for range rapid.IntRange(0, 2).Draw(g.t, "aggregates") {
		f := rapid.SampledFrom(candidates).Draw(g.t, "state function")
		st := &schema.CreateAggregate{Keyspace: ks, Name: rapid.SampledFrom(pool.Indexes).Draw(g.t, "aggregate name"),
			ArgTypes: []schema.Type{schema.TypeInt}, StateFunc: f.Name, StateType: f.ReturnType}
		if !f.CalledOnNullInput || rapid.Bool().Draw(g.t, "initcond") {
			switch t := f.ReturnType.(type) {
			case schema.UserTypeRef:
				k, _ := g.s.Keyspace(ks)
				ut, _ := k.UserType(t.Name)
				st.InitCond = "{" + cqltext.QuoteIdentifier(ut.Fields[0].Name) + ": null}"
			case schema.NativeType:
				st.InitCond = map[schema.NativeType]string{schema.TypeInt: "0", schema.TypeText: "''"}[t]
			}
		}
		g.apply(st)
	}
}

// views draws a few materialized views, named from the pool's view
// names, on the tables of keyspace ks without counters: a key of the
// base's key columns, in another order, sometimes led by a regular
// column of a key type; SELECT * (when the base has no static column)
// or the key and some other columns; IS NOT NULL on the key in an order
// of its own; sometimes a clustering order and a comment. Drawn last, as
// a base with views loses no column.
func (g *schemaGen) views(ks string, pool Pool) {
	k, _ := g.s.Keyspace(ks)
	var bases []*schema.Table
	for _, t := range k.Tables() {
		if !t.IsView() && !isCounter(t) {
			bases = append(bases, t)
		}
	}
	if len(bases) == 0 || len(pool.Views) == 0 {
		return
	}
	for range rapid.IntRange(0, 2).Draw(g.t, "views") {
		base := rapid.SampledFrom(bases).Draw(g.t, "view base")
		var key, others []string
		static := false
		for _, name := range base.PartitionKey {
			key = append(key, name)
		}
		for _, cc := range base.Clustering {
			key = append(key, cc.Name)
		}
		for _, c := range base.Columns {
			switch {
			case c.Kind == schema.Static:
				static = true
			case c.Kind == schema.Regular:
				others = append(others, c.Name)
			}
		}
		key = rapid.Permutation(key).Draw(g.t, "view key order")
		if rapid.Bool().Draw(g.t, "regular in key") {
			for _, name := range others {
				if c, _ := base.Column(name); isKeyable(c.Type) {
					key = append([]string{name}, key...)
					break
				}
			}
		}
		pk := rapid.IntRange(1, len(key)).Draw(g.t, "view partition key")
		st := &schema.CreateView{Keyspace: ks, Name: rapid.SampledFrom(pool.Views).Draw(g.t, "view name"), Base: base.Name,
			PartitionKey: key[:pk], Clustering: key[pk:], AllColumns: !static && rapid.Bool().Draw(g.t, "select *")}
		if !st.AllColumns {
			st.Columns = append([]string(nil), key...)
			for _, name := range others {
				if !containsName(st.Columns, name) && rapid.Bool().Draw(g.t, "select "+name) {
					st.Columns = append(st.Columns, name)
				}
			}
		}
		for _, name := range rapid.Permutation(key).Draw(g.t, "where order") {
			st.Where = append(st.Where, schema.ViewRelation{Columns: []string{name}, Op: schema.RelIsNot, Value: "NULL"})
		}
		if len(st.Clustering) > 0 && rapid.Bool().Draw(g.t, "view clustering order") {
			for _, name := range st.Clustering {
				st.ClusteringOrder = append(st.ClusteringOrder, schema.ClusteringColumn{Name: name, Order: rapid.SampledFrom([]schema.Order{schema.Asc, schema.Desc}).Draw(g.t, "order")})
			}
		}
		if rapid.Bool().Draw(g.t, "view comment") {
			st.Options = map[string]string{"comment": cqltext.QuoteString(rapid.SampledFrom([]string{"a", "b"}).Draw(g.t, "comment"))}
		}
		g.apply(st)
	}
}

// isCounter reports whether t is a counter table.
func isCounter(t *schema.Table) bool {
	for _, c := range t.Columns {
		if c.Type == schema.TypeCounter {
			return true
		}
	}
	return false
}

// isKeyable reports whether a column of type t goes in a view's key: a
// native type other than duration and counter, or a frozen collection of
// them. No user type: the schemas drawn keep user types out of keys
// (where ALTER TYPE ADD cannot change them), and a view's key is one.
func isKeyable(t schema.Type) bool {
	switch t := t.(type) {
	case schema.NativeType:
		return t != schema.TypeDuration && t != schema.TypeCounter
	case schema.FrozenType:
		return !strings.Contains(t.String(), "duration") && len(schema.UserTypeRefs(t)) == 0
	}
	return false
}

// triggerClasses are the classes drawn triggers use; two, so that two
// schemas drawn independently may hold the same trigger with another
// class.
var triggerClasses = []string{"org.example.Audit", "org.example.Notify"}

// triggers draws a few triggers, named from the pool's index names, on
// the tables of keyspace ks.
func (g *schemaGen) triggers(ks string, pool Pool) {
	k, _ := g.s.Keyspace(ks)
	tables := k.Tables()
	if len(tables) == 0 {
		return
	}
	for range rapid.IntRange(0, 2).Draw(g.t, "triggers") {
		t := rapid.SampledFrom(tables).Draw(g.t, "trigger table")
		g.apply(&schema.CreateTrigger{Keyspace: ks, Table: t.Name, Name: rapid.SampledFrom(pool.Indexes).Draw(g.t, "trigger name"),
			Class: rapid.SampledFrom(triggerClasses).Draw(g.t, "trigger class")})
	}
}

// schemaGen is the state of one Schema draw.
type schemaGen struct {
	t     *rapid.T
	s     schema.Schema
	env   schema.Env
	stats *Stats
}

// apply applies st, counting it, and reports whether Apply took it.
func (g *schemaGen) apply(st schema.Statement) bool {
	ns, _, _, err := schema.Apply(g.s, st, g.env)
	g.env.Seq++
	if g.stats != nil {
		if g.stats.Kinds == nil {
			g.stats.Kinds = map[string]int{}
		}
		if err != nil {
			g.stats.Refused++
		} else {
			g.stats.Applied++
			g.stats.Kinds[st.Kind()]++
		}
	}
	if err != nil {
		return false
	}
	g.s = ns
	return true
}

// dropAndAdd sometimes drops a non-key column of table ks.name, and then
// sometimes adds it back with a type of its own, which Apply refuses
// unless it reads the old values: so tables carry dropped-column records.
func (g *schemaGen) dropAndAdd(ks, name string) {
	if rapid.IntRange(0, 3).Draw(g.t, "drop column") > 0 {
		return
	}
	tbl, _ := g.s.Table(ks, name)
	var regular []schema.Column
	for _, c := range tbl.Columns {
		if c.Kind == schema.Regular || c.Kind == schema.Static {
			regular = append(regular, c)
		}
	}
	if len(regular) < 2 {
		return
	}
	c := rapid.SampledFrom(regular).Draw(g.t, "dropped column")
	if !g.apply(&schema.AlterTable{Keyspace: ks, Name: name, Drop: []string{c.Name}}) || rapid.Bool().Draw(g.t, "add back") {
		return
	}
	typ := c.Type
	if c.Type != schema.TypeCounter && rapid.Bool().Draw(g.t, "retype") {
		typ = RegularType(g.t, "re-added type")
	}
	g.apply(&schema.AlterTable{Keyspace: ks, Name: name, Add: []schema.ColumnDef{{Name: c.Name, Type: typ, Static: c.Kind == schema.Static}}})
}
