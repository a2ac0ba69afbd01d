package plan

import (
	"strings"

	"github.com/metalog/metalog/schema"
)

// emit plans the statements of the analysed keyspace, each in its phase.
func (kp *ksPlan) emit() {
	kp.views.emitDrops(kp)
	kp.emitDrops()
	kp.triggers.emitDrops(kp)
	kp.functions.emitDrops(kp)
	kp.emitTypes()
	kp.functions.emit(kp)
	kp.emitTables()
	kp.emitIndexes()
	kp.triggers.emit(kp)
	kp.views.emit(kp)
}

// emitDrops plans the drops: indexes, then columns (after a counter
// table's new counters, so that the table stays a counter table), then
// tables, then types, users before the types they use.
func (kp *ksPlan) emitDrops() {
	p := kp.p
	for _, ix := range kp.cur.Indexes() {
		if kp.dropIndexes[ix.Name] {
			p.emit(phaseDropIndexes, dropIndex(ix), false, "")
		}
	}
	for _, t := range tables(kp.cur) {
		d, ok := kp.alters[t.Name]
		if !ok || len(d.drop) == 0 {
			continue
		}
		if isCounterTable(t) && len(d.add) > 0 {
			p.emit(phaseDropColumns, alterTableAdd(t, d.add), false, "")
		}
		text := alterTableDrop(t, d.drop)
		p.emit(phaseDropColumns, text, true, text+" drops the data of "+columnList(d.drop))
	}
	for _, t := range tables(kp.cur) {
		if reasons, re := kp.recreateTables[t.Name]; re {
			p.emit(phaseDropTables, dropTable(t), true, "DROP TABLE "+tableName(t)+" drops the table and its data, to create it again: "+strings.Join(reasons, "; "))
		} else if kp.dropTables[t.Name] {
			p.emit(phaseDropTables, dropTable(t), true, "DROP TABLE "+tableName(t)+" drops the table and its data")
		}
	}
	types := schema.TypesInDependencyOrder(kp.cur)
	for i := len(types) - 1; i >= 0; i-- {
		if kp.typeGoing(types[i].Name) {
			p.emit(phaseDropTypes, dropType(kp.cur.Name, types[i].Name), false, "")
		}
	}
}

// columnList is "column a" or "columns a, b", quoted.
func columnList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = clipName(n)
	}
	if len(names) == 1 {
		return "column " + quoted[0]
	}
	return "columns " + strings.Join(quoted, ", ")
}

// emitTypes plans the types in the desired dependency order: created when
// new or recreated, else gaining their new fields.
func (kp *ksPlan) emitTypes() {
	for _, ut := range schema.TypesInDependencyOrder(kp.want) {
		_, exists := kp.cur.UserType(ut.Name)
		_, re := kp.recreateTypes[ut.Name]
		if !exists || re {
			kp.p.emit(phaseTypes, createType(ut), false, "")
			continue
		}
		for _, f := range kp.typeAdds[ut.Name] {
			kp.p.emit(phaseTypes, alterTypeAdd(ut, f), false, "")
		}
	}
}

// emitTables plans the desired tables in name order: created when new or
// recreated, else altered (new columns, then masks, then properties).
func (kp *ksPlan) emitTables() {
	for _, t := range tables(kp.want) {
		old, exists := table(kp.cur, t.Name)
		if _, re := kp.recreateTables[t.Name]; re || !exists {
			var replaced *schema.Table
			if exists {
				replaced = old
			}
			kp.p.emit(phaseTables, createTable(t, kp.keepID(t, replaced)), false, "")
			continue
		}
		d := kp.alters[t.Name]
		if len(d.add) > 0 && !(isCounterTable(old) && len(d.drop) > 0) {
			kp.p.emit(phaseTables, alterTableAdd(old, d.add), false, "")
		}
		for _, m := range d.masks {
			kp.p.emit(phaseTables, alterTableMask(old, m), false, "")
		}
		if len(d.props) > 0 {
			kp.p.emit(phaseTables, alterTableWith(old, d.props), false, "")
		}
	}
}

// keepID reports whether CREATE TABLE t names t's id: only an assigned id
// (UnassignedID), not the id of the table it replaces (a recreated table
// is a new table), and not one a table of the plan's result already has;
// otherwise the cluster assigns one.
func (kp *ksPlan) keepID(t, replaced *schema.Table) bool {
	if UnassignedID(t.ID) {
		return false
	}
	if replaced != nil && replaced.ID == t.ID {
		kp.p.note("table %s is created again without its id %s: a recreated table is a new table, and the cluster gives it a new id", tableName(t), t.ID)
		return false
	}
	if other, taken := kp.p.idOwner(t.ID); taken {
		kp.p.note("table %s is created without its id %s, which table %s has: the cluster gives it a new id", tableName(t), t.ID, other)
		return false
	}
	kp.p.liveIDs[t.ID] = tableName(t)
	return true
}

// emitIndexes plans the desired indexes to create, table by table in name
// order.
func (kp *ksPlan) emitIndexes() {
	for _, t := range tables(kp.want) {
		for _, ix := range kp.want.TableIndexes(t.Name) {
			if kp.createIndexes[ix.Name] {
				kp.p.emit(phaseIndexes, createIndex(ix), false, "")
			}
		}
	}
}
