package plan

import (
	"strconv"

	"github.com/metalog/metalog/schema"
)

// ksPlan is the analysis of one covered keyspace that the desired schema
// has: what happens to each of its types, tables, indexes, triggers,
// functions and views. It is built whole (analyze) before any statement
// is emitted (emit), since whether a table is recreated can depend on a
// type, and an index on its table. ksPlan decides the types, tables and
// indexes itself; the objects decided once those are, the triggers, the
// functions and aggregates and the materialized views, have their own
// plans (triggerPlan, functionPlan, viewPlan), which read the keyspace's
// decisions through the ksPlan they are handed.
type ksPlan struct {
	p *planner
	// cur is the current keyspace, nil when the plan creates it; want is
	// the desired one.
	cur, want *schema.Keyspace

	// typeAdds are the fields each type altered in place gains.
	typeAdds map[string][]schema.Field
	// recreateTypes are the types dropped and created again, with why.
	recreateTypes map[string]string
	// dropTypes are the current types the desired keyspace lacks, which
	// Prune drops.
	dropTypes map[string]bool

	// alters are the in-place changes of the tables of both sides.
	alters map[string]*tableDiff
	// recreateTables are the tables dropped and created again, with why.
	recreateTables map[string][]string
	// dropTables are the current tables the desired keyspace lacks, which
	// Prune drops.
	dropTables map[string]bool

	// dropIndexes are the current indexes dropped (those changed
	// included), and createIndexes the desired indexes created.
	dropIndexes, createIndexes map[string]bool

	// triggers are the triggers dropped and created.
	triggers triggerPlan
	// functions are the functions and aggregates dropped, created and
	// replaced.
	functions functionPlan
	// views are the materialized views dropped, created and altered.
	views viewPlan
}

// analyze plans keyspace name, which at least one side has.
func (p *planner) analyze(from, to schema.Schema, name string) {
	cur, inFrom := from.Keyspace(name)
	want, inTo := to.Keyspace(name)
	switch {
	case !inTo:
		if !p.opt.Prune {
			p.note("keyspace %s is not in the desired schema: kept (--prune drops it)", q(name))
			return
		}
		p.emit(phaseDropKeyspaces, dropKeyspace(name), true, dropKeyspaceWarning(cur))
		for _, t := range cur.Tables() {
			p.droppedIDs = append(p.droppedIDs, t.ID)
		}
		return
	case !inFrom:
		p.emit(phaseKeyspaces, createKeyspace(want), false, "")
		cur = nil
	case cur == want:
		// The same immutable value (two epochs share unchanged
		// keyspaces): nothing differs, and nothing needs a walk.
		return
	default:
		if text, ok := alterKeyspace(cur, want); ok {
			p.emit(phaseKeyspaces, text, false, "")
		}
	}
	kp := &ksPlan{p: p, cur: cur, want: want,
		typeAdds: map[string][]schema.Field{}, recreateTypes: map[string]string{}, dropTypes: map[string]bool{},
		alters: map[string]*tableDiff{}, recreateTables: map[string][]string{}, dropTables: map[string]bool{},
		dropIndexes: map[string]bool{}, createIndexes: map[string]bool{}}
	kp.analyzeTypes()
	kp.analyzeTables()
	kp.keepUsedTypes()
	kp.analyzeTableViewClashes()
	if p.opt.AllowRecreate {
		kp.cascade()
	}
	kp.analyzeIndexes()
	kp.triggers.analyze(kp)
	kp.functions.analyze(kp)
	kp.views.analyze(kp)
	for name := range kp.recreateTables {
		t, _ := cur.Table(name)
		p.droppedIDs = append(p.droppedIDs, t.ID)
	}
	for name := range kp.dropTables {
		t, _ := cur.Table(name)
		p.droppedIDs = append(p.droppedIDs, t.ID)
	}
	p.keyspaces = append(p.keyspaces, kp)
}

// dropKeyspaceWarning says what DROP KEYSPACE k drops.
func dropKeyspaceWarning(k *schema.Keyspace) string {
	head := "DROP KEYSPACE " + q(k.Name) + " drops the keyspace"
	switch n := k.TableCount(); n {
	case 0:
		return head + " (it has no tables)"
	case 1:
		return head + " with its table and its data"
	default:
		return head + " with its " + strconv.Itoa(n) + " tables and their data"
	}
}
