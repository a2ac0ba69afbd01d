package plan

import (
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
)

// analyzeIndexes decides, once the tables are decided, which indexes are
// created and dropped. A desired index is created when its table is new or
// recreated, when the current keyspace lacks it, or when its definition
// differs (the current one dropped first: an index cannot be altered). A
// current index the desired keyspace lacks goes with its table when that
// is dropped, is dropped with Prune, and without Prune is kept unless it
// cannot stay: its column is dropped, or a desired index duplicates it
// (Cassandra refuses two indexes of the same target and class).
func (kp *ksPlan) analyzeIndexes() {
	for _, ix := range kp.want.Indexes() {
		old, ok := kp.cur.Index(ix.Name)
		switch {
		case kp.tableCreated(ix.Table):
			kp.createIndexes[ix.Name] = true
			if ok && !kp.tableGoing(old.Table) {
				kp.dropIndexes[ix.Name] = true
			}
		case !ok:
			kp.createIndexes[ix.Name] = true
		case !sameIndex(old, ix):
			kp.createIndexes[ix.Name] = true
			if !kp.tableGoing(old.Table) {
				kp.dropIndexes[ix.Name] = true
			}
			kp.p.note("index %s changes from (%s) to (%s): it is dropped and created again, which rebuilds it from its table's data", indexName(ix), indexText(old), indexText(ix))
		}
	}
	for _, old := range kp.cur.Indexes() {
		if _, ok := kp.want.Index(old.Name); ok {
			continue
		}
		switch {
		case kp.tableGoing(old.Table):
			if _, re := kp.recreateTables[old.Table]; re && !kp.p.opt.Prune {
				kp.p.warn("index %s is not in the desired schema but goes with table %s, which is recreated", indexName(old), q(old.Keyspace)+"."+q(old.Table))
			}
		case kp.p.opt.Prune:
			kp.dropIndexes[old.Name] = true
		case kp.columnDropped(old.Table, old.Target.Column):
			kp.dropIndexes[old.Name] = true
			kp.p.warn("index %s is not in the desired schema and is dropped although Prune is off: column %s, which it indexes, is dropped", indexName(old), clipName(old.Target.Column))
		case kp.duplicated(old) != nil:
			kp.dropIndexes[old.Name] = true
			kp.p.note("index %s is not in the desired schema and is dropped although Prune is off: index %s of the desired schema indexes the same, and Cassandra refuses duplicate indexes", indexName(old), indexName(kp.duplicated(old)))
		default:
			kp.p.note("index %s is not in the desired schema: kept (--prune drops it)", indexName(old))
		}
	}
}

// tableCreated reports whether the plan creates table name (new or
// recreated).
func (kp *ksPlan) tableCreated(name string) bool {
	if _, re := kp.recreateTables[name]; re {
		return true
	}
	_, exists := table(kp.cur, name)
	return !exists
}

// tableGoing reports whether the plan drops current table name (pruned
// or recreated), which drops its indexes.
func (kp *ksPlan) tableGoing(name string) bool {
	_, re := kp.recreateTables[name]
	return re || kp.dropTables[name]
}

// columnDropped reports whether ALTER TABLE ... DROP removes column of
// table.
func (kp *ksPlan) columnDropped(table, column string) bool {
	d, ok := kp.alters[table]
	return ok && contains(d.drop, column)
}

// duplicated returns the desired index the plan creates on old's table
// with old's target and class, or nil.
func (kp *ksPlan) duplicated(old *schema.Index) *schema.Index {
	for _, ix := range kp.want.TableIndexes(old.Table) {
		if kp.createIndexes[ix.Name] && ix.Target == old.Target && ix.Class == old.Class {
			return ix
		}
	}
	return nil
}

// sameIndex reports whether two indexes of one name are defined alike.
func sameIndex(a, b *schema.Index) bool {
	if a.Table != b.Table || a.Target != b.Target || a.Custom != b.Custom || a.Class != b.Class || len(a.Options) != len(b.Options) {
		return false
	}
	for k, v := range a.Options {
		if w, ok := b.Options[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// indexName is ks.index, quoted.
func indexName(ix *schema.Index) string { return q(ix.Keyspace) + "." + q(ix.Name) }

// indexText is what an index covers and how, for messages: its CREATE
// INDEX statement from ON.
func indexText(ix *schema.Index) string {
	text := createIndex(ix)
	if _, on, ok := strings.Cut(text, " ON "); ok {
		text = on
	}
	return clip.String(text)
}
