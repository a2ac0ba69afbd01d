package schema

// Keyspaces returns the keyspaces st touches: the keyspace whose objects
// it changes (or the keyspace it creates, alters or drops) first, then any
// other keyspace it reads (the table CREATE TABLE ... LIKE copies, the base
// of a materialized view as written, the keyspace of a USE), each once. A
// keyspace st leaves unqualified is defaultKeyspace, as Apply resolves it
// with Env.DefaultKeyspace; cql.Parse has already qualified the statements
// after a USE. An empty name in the result means st names no keyspace and
// defaultKeyspace is empty: Apply refuses such a statement, as no keyspace
// has an empty name (NoKeyspace is the error it gives).
//
// It looks at the statement only, never at a schema, and allocates only
// the returned slice. Access control checks what a request touches with
// it, before the request is applied.
func Keyspaces(st Statement, defaultKeyspace string) []string {
	if st == nil {
		return nil
	}
	return st.keyspaces(make([]string, 0, 2), defaultKeyspace)
}

// NoKeyspace is the error of a statement that names no keyspace when there
// is no default keyspace, as Apply gives it to the statements that look
// their keyspace up first.
func NoKeyspace(st Statement) error {
	return newError(st.Kind(), st.Object(), ErrInvalid, noKeyspaceReason)
}

// noKeyspaceReason is why a statement without a keyspace cannot apply.
const noKeyspaceReason = "no keyspace specified and no default keyspace"

// addKeyspace appends ks, resolved with def, to dst unless it is there.
func addKeyspace(dst []string, ks, def string) []string {
	if ks == "" {
		ks = def
	}
	for _, have := range dst {
		if have == ks {
			return dst
		}
	}
	return append(dst, ks)
}

func (st *CreateKeyspace) keyspaces(dst []string, _ string) []string {
	return addKeyspace(dst, st.Name, "")
}

func (st *AlterKeyspace) keyspaces(dst []string, _ string) []string {
	return addKeyspace(dst, st.Name, "")
}

func (st *DropKeyspace) keyspaces(dst []string, _ string) []string {
	return addKeyspace(dst, st.Name, "")
}

// keyspaces of USE: the keyspace it checks (it reads whether it exists).
func (st *Use) keyspaces(dst []string, _ string) []string {
	return addKeyspace(dst, st.Keyspace, "")
}

func (st *CreateTable) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

// keyspaces of CREATE TABLE ... LIKE: the new table's and the source's,
// whose schema it reads.
func (st *CreateTableLike) keyspaces(dst []string, def string) []string {
	return addKeyspace(addKeyspace(dst, st.Keyspace, def), st.SourceKeyspace, def)
}

func (st *AlterTable) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropTable) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *CreateType) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *AlterType) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropType) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *CreateIndex) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropIndex) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *CreateTrigger) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropTrigger) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *CreateFunction) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *CreateAggregate) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropFunction) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropAggregate) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

// keyspaces of CREATE MATERIALIZED VIEW: the view's, then the base's as
// written (Apply refuses a base in another keyspace, but the statement
// still names it).
func (st *CreateView) keyspaces(dst []string, def string) []string {
	dst = addKeyspace(dst, st.Keyspace, def)
	if st.BaseKeyspace != "" {
		dst = addKeyspace(dst, st.BaseKeyspace, def)
	}
	return dst
}

func (st *AlterView) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}

func (st *DropView) keyspaces(dst []string, def string) []string {
	return addKeyspace(dst, st.Keyspace, def)
}
