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

// ErrDefinedTwice is matched by a *LoadError for a CREATE of an object
// that an earlier statement of the desired schema created (in the same
// text or another): one desired schema defines an object once. The error
// names both places (LoadError.First).
var ErrDefinedTwice = errors.New("plan: an object is defined twice in the desired schema")

// Place locates a statement of a desired schema.
type Place struct {
	// Source is the name of the text it is in (Source.Name); "" for
	// Load's text.
	Source string
	// Statement is its 1-based number within its text.
	Statement int
	// Line and Column locate its first token (1-based).
	Line, Column int
}

// String returns e.g. "shop.cql: statement 3 (line 12:1)", without the
// name for a text of no name.
func (p Place) String() string {
	s := "statement " + strconv.Itoa(p.Statement) + " (line " + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column) + ")"
	if p.Source != "" {
		s = p.Source + ": " + s
	}
	return s
}

// LoadError is returned by Load and LoadSources for a desired schema text
// that does not parse, or whose statement Statement cannot be applied to
// what the statements before it built.
type LoadError struct {
	// Source is the name of the text that fails (Source.Name); "" for
	// Load's text.
	Source string
	// Statement is the 1-based number of the failing statement within
	// its text, 0 for a syntax error (a text is parsed as a whole first).
	Statement int
	// Line and Column locate the failing statement's first token, or the
	// offending token of a syntax error (1-based).
	Line, Column int
	// Err is the *cql.SyntaxError or the *schema.Error.
	Err error
	// First, for a statement refused because what it creates exists
	// (schema.ErrAlreadyExists), is the statement that created it, in
	// this text or another; the error then matches ErrDefinedTwice. Nil
	// otherwise.
	First *Place
}

// Error returns e.g. "plan: desired schema: b.cql: statement 3 (line
// 12:1): CREATE TABLE shop.orders: keyspace shop does not exist", and for
// an object defined twice "...: table already exists: it is defined twice,
// first at a.cql: statement 2 (line 4:1); keep one definition".
func (e *LoadError) Error() string {
	head := "plan: desired schema: "
	if e.Source != "" {
		head += e.Source + ": "
	}
	if e.Statement == 0 {
		return head + e.Err.Error()
	}
	at := Place{Statement: e.Statement, Line: e.Line, Column: e.Column}
	msg := head + at.String() + ": " + e.Err.Error()
	if e.First != nil {
		msg += ": it is defined twice, first at " + e.First.String() + "; keep one definition"
	}
	return msg
}

// Unwrap returns Err, and ErrDefinedTwice with First, so that
// errors.Is(err, schema.ErrNotFound), errors.Is(err, ErrDefinedTwice) and
// errors.As(err, &syntaxErr) work.
func (e *LoadError) Unwrap() []error {
	if e.First != nil {
		return []error{e.Err, ErrDefinedTwice}
	}
	return []error{e.Err}
}
