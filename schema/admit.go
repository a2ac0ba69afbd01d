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
// CREATE or RENAME) hold no control character. The error names the
// statement and the object, as Apply's do.
func Admit(st Statement) error {
	for _, n := range newNames(st) {
		if r := controlReason(n.what, n.name); r != "" {
			return newError(st.Kind(), st.Object(), ErrInvalid, r)
		}
	}
	return nil
}

// newName is a name a statement creates, and what it names.
type newName struct{ what, name string }

// newNames lists the column, field and type names st creates.
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
	}
	return out
}
