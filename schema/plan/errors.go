package plan

import (
	"errors"
	"strconv"
	"strings"
)

// ErrPlanDoesNotApply is wrapped by Diff's error when a statement of the
// plan it made is refused by schema.Apply on the current schema with the
// statements before it applied, or by the admission rules of a new request
// (schema.Admit). It is a bug of the planner (a rule of the applier it
// does not model), or a name no new request may carry (a control
// character in a name that predates the rule, which a recreation would
// write again), reported rather than handing out a plan that would stop
// half-way.
var ErrPlanDoesNotApply = errors.New("plan: the planned statements do not apply")

// Impossible is a change that cannot be made in place.
type Impossible struct {
	// Object names what cannot change in place, e.g. "shop.orders" (a
	// table or a user type, keyspace-qualified, as written in the schema).
	Object string
	// Reason says what differs and names Cassandra's rule, e.g. "the
	// partition key changes from (id int) to (id bigint): the primary key
	// of a table cannot be altered (...)".
	Reason string
	// Recreatable reports whether Options.AllowRecreate plans the change
	// (as DROP and CREATE). When false the change cannot be planned at
	// all, and Diff reports it even with AllowRecreate.
	Recreatable bool
}

// String returns "object: reason".
func (c Impossible) String() string { return c.Object + ": " + c.Reason }

// ImpossibleError is returned by Diff when the desired schema needs changes
// that cannot be made in place: any when Options.AllowRecreate is false,
// and those that not even a DROP and CREATE can make when it is true. It
// lists all of them, in plan order (keyspace, then types, then tables).
type ImpossibleError struct {
	// Changes are the changes that cannot be made, at least one.
	Changes []Impossible
}

// Error returns e.g. "plan: 1 change cannot be made in place: shop.orders:
// ... (allowing recreation plans such changes as DROP and CREATE, losing
// the data: allow_recreate, plan --allow-recreate)"; Options.AllowRecreate
// is what the API's allow_recreate and the CLI's flag set.
func (e *ImpossibleError) Error() string {
	var b strings.Builder
	b.WriteString("plan: ")
	b.WriteString(strconv.Itoa(len(e.Changes)))
	if len(e.Changes) == 1 {
		b.WriteString(" change cannot be made in place: ")
	} else {
		b.WriteString(" changes cannot be made in place: ")
	}
	recreatable := false
	for i, c := range e.Changes {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
		recreatable = recreatable || c.Recreatable
	}
	if recreatable {
		b.WriteString(" (allowing recreation plans such changes as DROP and CREATE, losing the data: allow_recreate, plan --allow-recreate)")
	}
	return b.String()
}

// LoadError is returned by Load for a desired schema text that does not
// parse, or whose statement Statement cannot be applied to what the
// statements before it built.
type LoadError struct {
	// Statement is the 1-based number of the failing statement, 0 for a
	// syntax error (the text is parsed as a whole first).
	Statement int
	// Line and Column locate the failing statement's first token, or the
	// offending token of a syntax error (1-based).
	Line, Column int
	// Err is the *cql.SyntaxError or the *schema.Error.
	Err error
}

// Error returns e.g. "plan: desired schema: statement 3 (line 12:1):
// CREATE TABLE shop.orders: keyspace shop does not exist".
func (e *LoadError) Error() string {
	if e.Statement == 0 {
		return "plan: desired schema: " + e.Err.Error()
	}
	return "plan: desired schema: statement " + strconv.Itoa(e.Statement) + " (line " +
		strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + "): " + e.Err.Error()
}

// Unwrap returns Err, so that errors.Is(err, schema.ErrNotFound) and
// errors.As(err, &syntaxErr) work.
func (e *LoadError) Unwrap() error { return e.Err }
