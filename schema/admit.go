package schema

// Admission rules are checked when a request is admitted, on the member
// that receives it, before it is proposed; Apply does not check them. A
// rule added after a log was written must not refuse, on replay, an entry
// that applied when it was written: members that replay it (a follower
// catching up after an upgrade, a repair) would then hold another schema
// than those that applied it then. Rules that tighten what a statement may
// name start here.

// Admit checks the admission rules of st, a statement of a new request:
// the names it creates (columns, user type fields and user types, by
// CREATE or RENAME; functions, aggregates and function arguments) hold no
// control character and no bidirectional formatting character (nor a line
// or paragraph separator): a quoted name could carry them, and every tool
// that shows the name (DESCRIBE, history, cqlsh) would then show
// something else than it is, in another order or with the screen
// rewritten. Names already in the schema may still be named. The error
// names the statement and the object, as Apply's do; for a refused name
// it is an *UnprintableNameError, which says which name.
func Admit(st Statement) error {
	for _, n := range newNames(st) {
		if r := unprintableReason(n.what, n.name); r != "" {
			return &UnprintableNameError{Name: n.name, Err: newError(st.Kind(), st.Object(), ErrInvalid, r)}
		}
	}
	return nil
}

// UnprintableNameError is Admit's error for a new name holding a control
// or bidirectional formatting character. Name lets the caller that has
// the statement's text point at the name (cql.Admit gives its line and
// column); Err is the *Error, matched by errors.Is(err, ErrInvalid).
type UnprintableNameError struct {
	// Name is the name refused, as the statement gives it.
	Name string
	// Err names the statement, the object and the reason.
	Err *Error
}

func (e *UnprintableNameError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UnprintableNameError) Unwrap() error { return e.Err }

// newName is a name a statement creates, and what it names.
type newName struct{ what, name string }

// newNames lists the column, field, type, function, aggregate and
// argument names st creates.
func newNames(st Statement) []newName {
	var out []newName
	switch st := st.(type) {
	case *CreateTable:
		for _, cd := range st.Columns {
			out = append(out, newName{"column", cd.Name})
		}
	case *AlterTable:
		for _, cd := range st.Add {
			out = append(out, newName{"column", cd.Name})
		}
		for _, rn := range st.Rename {
			out = append(out, newName{"column", rn.To})
		}
	case *CreateType:
		out = append(out, newName{"type", st.Name})
		for _, f := range st.Fields {
			out = append(out, newName{"field", f.Name})
		}
	case *AlterType:
		if st.Add != nil {
			out = append(out, newName{"field", st.Add.Name})
		}
		for _, rn := range st.Rename {
			out = append(out, newName{"field", rn.To})
		}
	case *CreateFunction:
		out = append(out, newName{"function", st.Name})
		for _, a := range st.Args {
			out = append(out, newName{"argument", a.Name})
		}
	case *CreateAggregate:
		out = append(out, newName{"aggregate", st.Name})
	}
	return out
}
