package plan

import (
	"sort"

	"github.com/metalog/metalog/schema"
)

// Options says what a plan covers. The zero value plans the keyspaces of
// the desired schema, keeps what it lacks (objects and columns), and
// refuses changes that cannot be made in place.
type Options struct {
	// Keyspaces limits the plan to these keyspaces: objects of other
	// keyspaces, on either side, are never touched. One that neither
	// schema has gets a warning (a typo, or a keyspace already dropped).
	// Empty: the keyspaces the desired schema has (with Complete, those
	// of either schema).
	Keyspaces []string
	// Complete plans every keyspace of either side (or of Keyspaces) and
	// drops whatever the desired side lacks, keyspaces and columns
	// included: the diff between two epochs or two files. It implies
	// Prune and DropColumns, and says nothing of the keyspaces it does
	// not cover.
	Complete bool
	// Prune drops, within the covered keyspaces, the keyspaces, tables,
	// types, functions, aggregates, indexes, triggers and materialized
	// views the desired schema lacks. Without it they are kept, each with
	// a line in Plan.Notes.
	Prune bool
	// DropColumns drops the columns a table of both sides has and the
	// desired table lacks (ALTER TABLE ... DROP, destructive). Without it
	// they are kept, with a line in Plan.Notes, and so are the user types
	// they use. It is apart from Prune, so that neither a pruned plan nor
	// a column missing from a file by mistake loses a column's data
	// unasked.
	DropColumns bool
	// AllowRecreate plans a change Cassandra cannot make in place as DROP
	// and CREATE of the table or type (losing the table's data, and
	// recreating the tables that use a recreated type) instead of
	// refusing it with an *ImpossibleError.
	AllowRecreate bool
}

// Statement is one planned DDL statement.
type Statement struct {
	// CQL is one statement, without a final ';': valid CQL that cql.Parse
	// and schema.Apply accept, in plan order. CREATE statements are
	// DESCRIBE text and span several lines.
	CQL string
	// Destructive reports whether the statement loses data: DROP
	// KEYSPACE, DROP TABLE (a pruned or a recreated table) and ALTER
	// TABLE ... DROP. DROP INDEX and DROP TYPE are not (an index's
	// content is derived from its table, and a type holds no data once
	// the columns using it are gone).
	Destructive bool
}

// Plan is the DDL that turns the current schema into the desired one.
type Plan struct {
	// Statements are the statements to apply in order; none when the
	// schemas agree on what the plan covers.
	Statements []Statement
	// Warnings are what the plan loses: a line per destructive statement,
	// in plan order, saying what data it drops, then a line for each
	// object dropped with something else or in its way although the
	// options do not drop it (an index on a dropped column, a view of a
	// dropped table). Nothing else is a warning, so that a plan without
	// warnings loses nothing.
	Warnings []string
	// Notes are what the plan leaves alone although the schemas differ
	// (objects and columns kept, desired keyspaces outside
	// Options.Keyspaces, properties with no known default, table ids) or
	// does at a cost that loses no data (indexes and views rebuilt,
	// functions replaced), a line each.
	Notes []string
	// Destructive reports whether any statement is destructive.
	Destructive bool
}

// Empty reports whether the plan has no statement.
func (p Plan) Empty() bool { return len(p.Statements) == 0 }

// Diff plans the DDL that turns from, the current schema, into to, the
// desired one, within the keyspaces opt covers:
//
//   - a keyspace the desired schema adds is created, one it lacks is
//     dropped (with Prune), and replication or durable_writes that differ
//     are set with ALTER KEYSPACE;
//   - a type, table or index the desired schema adds is created, one it
//     lacks is dropped (with Prune) or kept;
//   - a type gains its new fields (ALTER TYPE ... ADD);
//   - a table gains its new columns (ALTER TABLE ... ADD), loses those
//     the desired table lacks (with DropColumns: ALTER TABLE ... DROP,
//     destructive) or keeps them, and gets the properties that differ
//     (ALTER TABLE ... WITH, a property the desired table leaves out
//     reset to Cassandra's default);
//   - an index whose definition differs is dropped and created again;
//   - a trigger the desired table adds is created, one it lacks is
//     dropped (with Prune) or kept, and one whose class differs is
//     dropped and created again (DROP TRIGGER is not destructive);
//   - a function or aggregate the desired schema adds is created, one it
//     lacks is dropped (with Prune) or kept, one that differs is replaced
//     with CREATE OR REPLACE when Cassandra allows it (same return type
//     and null-input directive) and otherwise dropped and created again
//     with a warning, together with the aggregates using it.
//   - a materialized view the desired schema adds is created after its
//     base table, one it lacks is dropped (with Prune) or kept, one whose
//     properties differ is altered (ALTER MATERIALIZED VIEW ... WITH),
//     and one whose definition differs is dropped and created again; a
//     view is dropped first when its base table is dropped or recreated
//     or drops a column, which Cassandra refuses while it has views
//     (DROP MATERIALIZED VIEW is not destructive).
//
// Changes Cassandra cannot make in place (a key, a clustering order, a
// column's type or kind, a counter table, a re-added dropped column of
// another type, a user type's fields removed, retyped or reordered) are
// refused with an *ImpossibleError listing them all, or, with
// AllowRecreate, planned as DROP and CREATE. Tables are matched by name:
// an id the desired schema gives is used for a table it creates but never
// makes a table another one (see UnassignedID).
//
// The statements are ordered so that each applies after the ones before
// it: keyspace creations and alterations; then drops in reverse
// dependency order (views, indexes, triggers, columns, tables,
// aggregates, functions, types with their users first, keyspaces); then
// creations and additions in dependency order (types, each after those it
// uses, functions, aggregates, tables, indexes, triggers, views). Diff
// checks the plan
// by applying it to from; a statement that does not apply is reported as
// ErrPlanDoesNotApply. Diff(s, s, opt) is empty.
func Diff(from, to schema.Schema, opt Options) (Plan, error) {
	if opt.Complete {
		opt.Prune, opt.DropColumns = true, true
	}
	p := &planner{opt: opt, from: from}
	names := coveredKeyspaces(from, to, opt)
	if len(opt.Keyspaces) > 0 && !opt.Complete {
		for _, k := range to.Keyspaces() {
			if !contains(names, k.Name) {
				p.note("keyspace %s of the desired schema is not among the keyspaces the plan covers: ignored", q(k.Name))
			}
		}
	}
	for _, name := range names {
		_, inFrom := from.Keyspace(name)
		_, inTo := to.Keyspace(name)
		if !inFrom && !inTo {
			p.note("keyspace %s, named for the plan, is in neither schema: nothing to plan", q(name))
			continue
		}
		p.analyze(from, to, name)
	}
	if err := p.refusal(); err != nil {
		return Plan{}, err
	}
	for _, kp := range p.keyspaces {
		kp.emit()
	}
	out := p.plan()
	if err := verify(from, out); err != nil {
		return Plan{}, err
	}
	return out, nil
}

// coveredKeyspaces returns the names of the keyspaces opt covers, sorted:
// opt.Keyspaces, or else those of to, or with Complete those of either.
func coveredKeyspaces(from, to schema.Schema, opt Options) []string {
	var names []string
	if len(opt.Keyspaces) > 0 {
		for _, name := range opt.Keyspaces {
			if !contains(names, name) {
				names = append(names, name)
			}
		}
	} else {
		for _, k := range to.Keyspaces() {
			names = append(names, k.Name)
		}
		if opt.Complete {
			for _, k := range from.Keyspaces() {
				if _, ok := to.Keyspace(k.Name); !ok {
					names = append(names, k.Name)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}
