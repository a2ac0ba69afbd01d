package plan

import (
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// Materialized views are tables of the keyspace's table map (schema's
// Table with a View); the planner keeps them apart from tables (tables,
// table) and plans them last, after their base tables: a view's
// definition (its base, selection, WHERE clause and key) cannot change
// (Cassandra has no such ALTER), so a view whose definition differs is
// dropped and created again, which is not destructive (a view's data is
// derived from its base) but rebuilds it. Its properties change with
// ALTER MATERIALIZED VIEW ... WITH. A view is dropped before anything
// that Cassandra refuses to change while it exists: its base table
// (DROP TABLE refuses a table with views) and any column of its base
// (ALTER TABLE ... DROP refuses a column of a table with views, whether
// a view selects it or not).

// Reasons a view is dropped and created again, naming Cassandra's rule.
const (
	ruleViewDefinition = "a materialized view's selection, WHERE clause, primary key and clustering order cannot be altered (Cassandra's ALTER MATERIALIZED VIEW changes only its properties)"
	ruleViewBaseColumn = "Cassandra refuses to drop a column of a table with materialized views"
	ruleViewBaseGrace  = "Cassandra refuses gc_grace_seconds = 0 on the base table of a materialized view"
	ruleViewGrace      = "Cassandra's ALTER MATERIALIZED VIEW refuses gc_grace_seconds = 0 (CREATE takes it)"
	ruleViewStatic     = "a SELECT * view cannot hold a static column, so metalog refuses to add one to its base table"
	ruleTableToView    = "a table cannot become a materialized view (Cassandra: a table and a view cannot have the same name, and a view is created from its base table)"
)

// viewPlan is what happens to the views of one keyspace: the current
// views dropped, the desired views created, and the properties of those
// kept in place. Its zero value plans nothing; analyze fills it from the
// keyspace's plan, once its tables are decided, and emitDrops and emit
// plan its statements.
type viewPlan struct {
	drop, create map[string]bool
	alter        map[string][]property
}

// tables returns k's tables without its views, in name order.
func tables(k *schema.Keyspace) []*schema.Table {
	all := k.Tables()
	out := all[:0]
	for _, t := range all {
		if !t.IsView() {
			out = append(out, t)
		}
	}
	return out
}

// table returns table name of k, not a view of that name.
func table(k *schema.Keyspace, name string) (*schema.Table, bool) {
	t, ok := k.Table(name)
	if !ok || t.IsView() {
		return nil, false
	}
	return t, true
}

// views returns k's materialized views in name order.
func views(k *schema.Keyspace) []*schema.Table {
	var out []*schema.Table
	for _, t := range k.Tables() {
		if t.IsView() {
			out = append(out, t)
		}
	}
	return out
}

// view returns materialized view name of k, not a table of that name.
func view(k *schema.Keyspace, name string) (*schema.Table, bool) {
	t, ok := k.Table(name)
	if !ok || !t.IsView() {
		return nil, false
	}
	return t, true
}

// analyzeTableViewClashes records the current tables whose name the
// desired schema gives a view: a table cannot become a view, so with
// AllowRecreate the table is dropped (destructive) for the view.
func (kp *ksPlan) analyzeTableViewClashes() {
	for _, v := range views(kp.want) {
		if t, ok := table(kp.cur, v.Name); ok {
			kp.p.cannot(tableName(t), "it is a materialized view in the desired schema: "+ruleTableToView, true)
			kp.dropTables[t.Name] = true
		}
	}
}

// analyze decides, once the tables are decided, which views are
// dropped, created and altered. A current view is dropped when its base
// table is dropped or recreated, when its base drops a column, gets
// gc_grace_seconds = 0 or (for a SELECT * view) a static column, when the
// desired schema has it with another
// definition or as a table, or with Prune when the desired schema lacks
// it; it is kept otherwise. A desired view is created when the current
// schema lacks it or it was dropped; one kept gets the properties that
// differ (gc_grace_seconds = 0 excepted: it is recreated with it).
func (vp *viewPlan) analyze(kp *ksPlan) {
	ks := kp.want.Name
	for _, old := range views(kp.cur) {
		want, inWant := view(kp.want, old.Name)
		base := old.View().Base
		why := ""
		switch {
		case kp.tableGoing(base):
			why = "its base table " + q(ks) + "." + q(base) + " is dropped"
			if _, re := kp.recreateTables[base]; re {
				why = "its base table " + q(ks) + "." + q(base) + " is recreated"
			}
		case kp.baseDropsColumns(base):
			why = "its base table " + q(ks) + "." + q(base) + " drops columns, and " + ruleViewBaseColumn
		case kp.baseGraceZero(base):
			why = "its base table " + q(ks) + "." + q(base) + " gets gc_grace_seconds = 0, and " + ruleViewBaseGrace
		case old.View().AllColumns && kp.baseAddsStatic(base):
			why = "its base table " + q(ks) + "." + q(base) + " gains a static column, and " + ruleViewStatic
		case inWant && !schema.SameViewDefinition(old, want):
			kp.p.note("materialized view %s changes from (%s) to (%s): it is dropped and created again, which rebuilds it from its base table's data (%s)",
				tableName(old), viewText(old), viewText(want), ruleViewDefinition)
			mark(&vp.drop, old.Name)
			mark(&vp.create, old.Name)
			continue
		case inWant:
			props, unknown := propertyChanges(old, want)
			if hasProperty(props, "gc_grace_seconds", "0") {
				kp.p.note("materialized view %s gets gc_grace_seconds = 0: it is dropped and created again, which rebuilds it from its base table's data (%s)", tableName(old), ruleViewGrace)
				mark(&vp.drop, old.Name)
				mark(&vp.create, old.Name)
				continue
			}
			if len(props) > 0 {
				if vp.alter == nil {
					vp.alter = map[string][]property{}
				}
				vp.alter[old.Name] = props
			}
			if !UnassignedID(want.ID) && want.ID != old.ID {
				kp.p.note("materialized view %s keeps its id %s, not the desired %s: a view's id cannot be altered", tableName(old), old.ID, want.ID)
			}
			for _, name := range unknown {
				kp.p.note("materialized view %s sets %s = %s, which the desired view leaves out, and it has no known default to reset it to: left as is", tableName(old), name, old.Options()[name])
			}
			continue
		}
		switch {
		case why != "":
			mark(&vp.drop, old.Name)
			if inWant {
				mark(&vp.create, old.Name)
				kp.p.note("materialized view %s is dropped and created again, which rebuilds it from its base table's data: %s", tableName(old), why)
			} else if !kp.p.opt.Prune {
				kp.p.warn("materialized view %s is not in the desired schema and is dropped although Prune is off: %s", tableName(old), why)
			}
		case kp.wantsTable(old.Name):
			mark(&vp.drop, old.Name)
			if !kp.p.opt.Prune {
				kp.p.warn("materialized view %s is dropped although Prune is off: the desired schema has a table of that name", tableName(old))
			}
		case kp.p.opt.Prune:
			mark(&vp.drop, old.Name)
		default:
			kp.p.note("materialized view %s is not in the desired schema: kept (--prune drops it)", tableName(old))
		}
	}
	for _, v := range views(kp.want) {
		if _, ok := view(kp.cur, v.Name); !ok {
			mark(&vp.create, v.Name)
		}
	}
	for name := range vp.drop {
		t, _ := kp.cur.Table(name)
		kp.p.droppedIDs = append(kp.p.droppedIDs, t.ID)
	}
}

// wantsTable reports whether the desired keyspace has a table (not a
// view) called name.
func (kp *ksPlan) wantsTable(name string) bool {
	_, ok := table(kp.want, name)
	return ok
}

// baseDropsColumns reports whether the plan drops columns of table base
// in place.
func (kp *ksPlan) baseDropsColumns(base string) bool {
	d, ok := kp.alters[base]
	return ok && len(d.drop) > 0
}

// baseGraceZero reports whether the plan sets gc_grace_seconds of table
// base to 0.
func (kp *ksPlan) baseGraceZero(base string) bool {
	d, ok := kp.alters[base]
	return ok && hasProperty(d.props, "gc_grace_seconds", "0")
}

// baseAddsStatic reports whether the plan adds a static column to table
// base in place.
func (kp *ksPlan) baseAddsStatic(base string) bool {
	d, ok := kp.alters[base]
	if !ok {
		return false
	}
	for _, c := range d.add {
		if c.Kind == schema.Static {
			return true
		}
	}
	return false
}

// hasProperty reports whether props set name to value.
func hasProperty(props []property, name, value string) bool {
	for _, p := range props {
		if p.name == name && p.value == value {
			return true
		}
	}
	return false
}

// emitDrops plans DROP MATERIALIZED VIEW for the views dropped, in
// name order, before any other drop.
func (vp *viewPlan) emitDrops(kp *ksPlan) {
	for _, v := range views(kp.cur) {
		if vp.drop[v.Name] {
			kp.p.emit(phaseDropViews, dropView(v), false, "")
		}
	}
}

// emit plans the desired views in name order, after their base
// tables: created (with their id when the plan may keep it, see keepID)
// or altered.
func (vp *viewPlan) emit(kp *ksPlan) {
	for _, v := range views(kp.want) {
		switch {
		case vp.create[v.Name]:
			var replaced *schema.Table
			if old, ok := view(kp.cur, v.Name); ok {
				replaced = old
			}
			kp.p.emit(phaseViews, createView(v, kp.keepID(v, replaced)), false, "")
		case len(vp.alter[v.Name]) > 0:
			kp.p.emit(phaseViews, alterViewWith(v, vp.alter[v.Name]), false, "")
		}
	}
}

// createView is CREATE MATERIALIZED VIEW v, with WITH ID unless withID
// is false.
func createView(v *schema.Table, withID bool) string {
	if withID {
		return statementOf(describe.View(v))
	}
	return statementOf(describe.Options{OmitID: true}.Table(v))
}

// alterViewWith is ALTER MATERIALIZED VIEW v WITH the properties.
func alterViewWith(v *schema.Table, props []property) string {
	parts := make([]string, len(props))
	for i, p := range props {
		parts[i] = p.name + " = " + p.value
	}
	return "ALTER MATERIALIZED VIEW " + tableName(v) + " WITH " + strings.Join(parts, " AND ")
}

// dropView is DROP MATERIALIZED VIEW v.
func dropView(v *schema.Table) string { return "DROP MATERIALIZED VIEW " + tableName(v) }

// viewText is what a view selects, for messages: its statement from
// SELECT to its key and clustering order, on one line.
func viewText(v *schema.Table) string {
	c := *v
	c.SetOptions(nil)
	text := (describe.Options{OmitID: true}).Table(&c)
	if _, rest, ok := strings.Cut(text, " AS\n    "); ok {
		text = rest
	}
	text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), ";")
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\n WITH ", " WITH "), "\n    ", " ")
	return clip.String(text)
}
