package plan

import (
	"fmt"

	"github.com/metalog/metalog/schema"
)

// phase is a step of a plan; statements are emitted into their phase and
// the plan lists the phases in order.
type phase int

// The phases, in plan order.
const (
	phaseKeyspaces     phase = iota // CREATE and ALTER KEYSPACE
	phaseDropViews                  // DROP MATERIALIZED VIEW
	phaseDropIndexes                // DROP INDEX
	phaseDropTriggers               // DROP TRIGGER
	phaseDropColumns                // ALTER TABLE DROP (and a counter table's ADD)
	phaseDropTables                 // DROP TABLE
	phaseDropFunctions              // DROP AGGREGATE, then DROP FUNCTION
	phaseDropTypes                  // DROP TYPE, users first
	phaseDropKeyspaces              // DROP KEYSPACE
	phaseTypes                      // CREATE TYPE, ALTER TYPE ADD
	phaseFunctions                  // CREATE [OR REPLACE] FUNCTION
	phaseAggregates                 // CREATE [OR REPLACE] AGGREGATE
	phaseTables                     // CREATE TABLE, ALTER TABLE ADD and WITH
	phaseIndexes                    // CREATE INDEX
	phaseTriggers                   // CREATE TRIGGER
	phaseViews                      // CREATE and ALTER MATERIALIZED VIEW
	numPhases
)

// pending is a planned statement and its warning, if destructive.
type pending struct {
	st      Statement
	warning string
}

// planner builds one plan.
type planner struct {
	opt Options
	// keyspaces are the analyses of the covered keyspaces that exist in
	// the desired schema, in name order.
	keyspaces []*ksPlan
	phases    [numPhases][]pending
	// warnings are the warnings about what the plan loses without a
	// destructive statement of its own, and notes what it leaves alone or
	// does at a cost, each in the order found.
	warnings, notes []string
	impossible      []Impossible
	// from is the current schema.
	from schema.Schema
	// liveIDs maps the id of every table of the current schema that the
	// plan keeps, and of every table it creates with an id, to its name,
	// so that no CREATE TABLE reuses one. Made on first use (idOwner), as
	// it walks all tables.
	liveIDs map[schema.UUID]string
	// droppedIDs are the ids of the tables the plan drops or recreates.
	droppedIDs []schema.UUID
}

// emit plans a statement in phase ph; warning is said for a destructive one.
func (p *planner) emit(ph phase, cql string, destructive bool, warning string) {
	p.phases[ph] = append(p.phases[ph], pending{st: Statement{CQL: cql, Destructive: destructive}, warning: warning})
}

// note records what the plan leaves alone, or does at a cost that loses
// no data (a Plan.Notes line).
func (p *planner) note(format string, args ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, args...))
}

// warn records an object the plan drops without a destructive statement
// of its own and without being asked to (a Plan.Warnings line).
func (p *planner) warn(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

// cannot records a change that cannot be made in place.
func (p *planner) cannot(object, reason string, recreatable bool) {
	p.impossible = append(p.impossible, Impossible{Object: object, Reason: reason, Recreatable: recreatable})
}

// refusal returns the *ImpossibleError for the changes the options do not
// let the plan make, or nil.
func (p *planner) refusal() error {
	var refused []Impossible
	for _, c := range p.impossible {
		if !c.Recreatable || !p.opt.AllowRecreate {
			refused = append(refused, c)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return &ImpossibleError{Changes: refused}
}

// plan returns the statements of every phase in order, the warnings and
// the notes.
func (p *planner) plan() Plan {
	var out Plan
	for _, ph := range p.phases {
		for _, pd := range ph {
			out.Statements = append(out.Statements, pd.st)
			if pd.st.Destructive {
				out.Destructive = true
				out.Warnings = append(out.Warnings, pd.warning)
			}
		}
	}
	out.Warnings = append(out.Warnings, p.warnings...)
	out.Notes = p.notes
	return out
}

// idOwner returns the name of the table of the plan's result that has
// table id id, if any. Call it only once the drops are all decided.
func (p *planner) idOwner(id schema.UUID) (string, bool) {
	if p.liveIDs == nil {
		p.liveIDs = tableIDs(p.from)
		for _, dropped := range p.droppedIDs {
			delete(p.liveIDs, dropped)
		}
	}
	name, ok := p.liveIDs[id]
	return name, ok
}

// tableIDs maps the id of every table of s to its quoted name.
func tableIDs(s schema.Schema) map[schema.UUID]string {
	ids := make(map[schema.UUID]string, s.TableCount())
	for _, k := range s.Keyspaces() {
		for _, t := range k.Tables() {
			ids[t.ID] = tableName(t)
		}
	}
	return ids
}

// contains reports whether s is in list.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
