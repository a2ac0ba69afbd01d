package plan

import (
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// triggerPlan is what happens to the triggers of one keyspace: the
// current triggers dropped and the desired ones created, each keyed by
// table "\x00" trigger (a trigger is named within its table). Its zero
// value plans nothing; analyze fills it from the keyspace's plan, once
// its tables are decided, and emitDrops and emit plan its statements.
type triggerPlan struct {
	drop, create map[string]bool
}

// triggerKey is the key of trigger name of table in a triggerPlan.
func triggerKey(table, name string) string { return table + "\x00" + name }

// mark sets key in *m, making the map on first use.
func mark(m *map[string]bool, key string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[key] = true
}

// analyze decides, once the tables are decided, which triggers
// are created and dropped. A trigger cannot be altered, and lives in its
// table: a desired trigger is created when its table is new or
// recreated, when the current table lacks it, or when its class differs
// (the current one dropped first). A current trigger the desired table
// lacks is dropped with Prune and kept otherwise; the triggers of a table
// the plan drops go with it, and those of a current table the desired
// schema lacks stay or go with that table.
func (tp *triggerPlan) analyze(kp *ksPlan) {
	for _, t := range tables(kp.want) {
		created := kp.tableCreated(t.Name)
		old, _ := table(kp.cur, t.Name)
		for _, tr := range t.Triggers() {
			key := triggerKey(t.Name, tr.Name)
			if created {
				mark(&tp.create, key)
				continue
			}
			switch cur, ok := old.Trigger(tr.Name); {
			case !ok:
				mark(&tp.create, key)
			case cur.Class != tr.Class:
				mark(&tp.drop, key)
				mark(&tp.create, key)
				kp.p.note("trigger %s on %s changes class from %s to %s: it is dropped and created again", q(tr.Name), tableName(t), cqltext.QuoteString(clip.String(cur.Class)), cqltext.QuoteString(clip.String(tr.Class)))
			}
		}
	}
	for _, old := range tables(kp.cur) {
		want, ok := table(kp.want, old.Name)
		if !ok || kp.tableGoing(old.Name) {
			continue
		}
		for _, tr := range old.Triggers() {
			if _, kept := want.Trigger(tr.Name); kept {
				continue
			}
			if kp.p.opt.Prune {
				mark(&tp.drop, triggerKey(old.Name, tr.Name))
			} else {
				kp.p.note("trigger %s on %s is not in the desired schema: kept (--prune drops it)", q(tr.Name), tableName(old))
			}
		}
	}
}

// emitDrops plans DROP TRIGGER for the triggers dropped, table by
// table in name order.
func (tp *triggerPlan) emitDrops(kp *ksPlan) {
	for _, t := range tables(kp.cur) {
		for _, tr := range t.Triggers() {
			if tp.drop[triggerKey(t.Name, tr.Name)] {
				kp.p.emit(phaseDropTriggers, dropTrigger(t, tr), false, "")
			}
		}
	}
}

// emit plans CREATE TRIGGER for the desired triggers created,
// table by table in name order, after the tables and their indexes.
func (tp *triggerPlan) emit(kp *ksPlan) {
	for _, t := range tables(kp.want) {
		for _, tr := range t.Triggers() {
			if tp.create[triggerKey(t.Name, tr.Name)] {
				kp.p.emit(phaseTriggers, createTrigger(t, tr), false, "")
			}
		}
	}
}

// createTrigger is CREATE TRIGGER tr ON t USING its class.
func createTrigger(t *schema.Table, tr schema.Trigger) string {
	return statementOf(describe.Trigger(t, tr))
}

// dropTrigger is DROP TRIGGER tr ON t.
func dropTrigger(t *schema.Table, tr schema.Trigger) string {
	return "DROP TRIGGER " + q(tr.Name) + " ON " + tableName(t)
}
