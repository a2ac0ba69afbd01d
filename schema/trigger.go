package schema

import (
	"sort"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/clip"
)

// Triggers live in the Table value (Table.Triggers), not in a keyspace map
// of their own: a trigger belongs to exactly one table, its name is unique
// only within that table, and it is dropped with it, as in Cassandra, whose
// TableMetadata holds its triggers. So CREATE and DROP TRIGGER are an
// OpPutTable of the table with the trigger added or removed, and a trigger
// rides with its table through the encoding, the digest, the store,
// snapshots, history events, Undo and the planner without a change kind of
// its own. metalog stores triggers; it never runs them.

// maxTriggerClassLength bounds a trigger's class name (Cassandra has no
// limit; a Java class name is far shorter, and this keeps hostile input
// small).
const maxTriggerClassLength = 1024

// Trigger is a trigger of a table: a name, unique in the table, and the
// class Cassandra would run on each write to it.
type Trigger struct {
	// Name is the trigger name, with the rules of index names (ValidName).
	Name string
	// Class is the trigger implementation class, e.g.
	// "org.apache.cassandra.triggers.AuditTrigger"; never empty.
	Class string
}

// Trigger returns the trigger of t with the given name.
func (t *Table) Trigger(name string) (*Trigger, bool) {
	triggers := t.Triggers()
	for i := range triggers {
		if triggers[i].Name == name {
			return &triggers[i], true
		}
	}
	return nil, false
}

// triggerClassReason says why class cannot be a trigger class, or "".
func triggerClassReason(class string) string {
	switch {
	case class == "":
		return "trigger class is empty"
	case len(class) > maxTriggerClassLength:
		return "trigger class is longer than 1024 bytes"
	case !utf8.ValidString(class):
		return "trigger class is not valid UTF-8"
	}
	return ""
}

// triggersReason checks t's triggers: valid names, sorted by name and
// distinct (so that equal tables encode equally), and valid classes.
func triggersReason(t *Table) string {
	triggers := t.Triggers()
	for i := range triggers {
		tr := &triggers[i]
		if r := nameReason("trigger", tr.Name); r != "" {
			return r
		}
		if i > 0 && triggers[i-1].Name >= tr.Name {
			return "triggers are not sorted by name and distinct at " + clip.String(tr.Name)
		}
		if r := triggerClassReason(tr.Class); r != "" {
			return "trigger " + clip.String(tr.Name) + ": " + r
		}
	}
	return ""
}

// withTrigger returns a copy of t with tr added in name order; t is not
// modified (its triggers are shared by the schemas holding t).
func withTrigger(t *Table, tr Trigger) *Table {
	c := *t
	old := t.Triggers()
	i := sort.Search(len(old), func(i int) bool { return old[i].Name >= tr.Name })
	triggers := make([]Trigger, 0, len(old)+1)
	c.SetTriggers(append(append(append(triggers, old[:i]...), tr), old[i:]...))
	return &c
}

// withoutTrigger returns a copy of t without trigger name (no triggers
// when it was the last one).
func withoutTrigger(t *Table, name string) *Table {
	c := *t
	var triggers []Trigger
	for _, tr := range t.Triggers() {
		if tr.Name != name {
			triggers = append(triggers, tr)
		}
	}
	c.SetTriggers(triggers)
	return &c
}

// CreateTrigger is CREATE TRIGGER [IF NOT EXISTS] name ON [ks.]table
// USING 'class'.
type CreateTrigger struct {
	// Keyspace is the keyspace of the table; empty means
	// Env.DefaultKeyspace.
	Keyspace string
	// Table is the table the trigger belongs to.
	Table string
	// Name is the trigger name, unique in the table.
	Name string
	// IfNotExists makes creating a trigger the table has a no-op.
	IfNotExists bool
	// Class is the USING class; it must not be empty.
	Class string
}

// Kind returns "CREATE TRIGGER".
func (*CreateTrigger) Kind() string { return "CREATE TRIGGER" }

// Object returns "name ON keyspace.table" (the table alone when the
// keyspace is left to the default).
func (st *CreateTrigger) Object() string { return triggerObject(st.Name, st.Keyspace, st.Table) }

// triggerObject names a trigger in errors, as CQL does: "name ON ks.table",
// each name quoted as CQL needs.
func triggerObject(name, ks, table string) string {
	return quoteNonEmpty(name) + " ON " + qualify(ks, table)
}

// triggerTarget starts a trigger statement: the keyspace (Env's default
// when ks is empty) and the table, with tg.obj naming the trigger. t is
// nil when the statement ends there, with tg.end(err): a missing keyspace
// or table is a no-op under ifExists and ErrNotFound otherwise.
func triggerTarget(s Schema, env Env, kind, ks, table, name string, ifExists bool) (tg target, t *Table, err error) {
	ks = resolveKeyspace(ks, env)
	tg = target{s: s, kind: kind, obj: triggerObject(name, ks, table), res: Result{Kind: kind, Keyspace: ks, Table: table, Name: name}}
	if tg.k, err = keyspaceOf(s, kind, ks, tg.obj, ifExists); tg.k == nil {
		return tg, nil, err
	}
	t, ok := tg.k.Table(table)
	if !ok && !ifExists {
		err = newError(kind, tg.obj, ErrNotFound, "table "+clip.String(qualify(ks, table))+" does not exist")
	}
	return tg, t, err
}

func (st *CreateTrigger) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, t, err := triggerTarget(s, env, st.Kind(), st.Keyspace, st.Table, st.Name, false)
	if t == nil {
		return tg.end(err)
	}
	if t.View() != nil {
		return tg.fail(ErrInvalid, viewNoTriggers)
	}
	if r := nameReason("trigger", st.Name); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	if _, exists := t.Trigger(st.Name); exists {
		if st.IfNotExists {
			return tg.end(nil)
		}
		return tg.fail(ErrAlreadyExists, "trigger "+clip.String(st.Name)+" already exists on table "+clip.String(t.QualifiedName()))
	}
	if r := triggerClassReason(st.Class); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	nt := withTrigger(t, Trigger{Name: st.Name, Class: st.Class})
	tg.res.Applied = true
	return s.putTable(tg.k, nt), Diff{Changes: []Change{{Op: OpPutTable, Keyspace: tg.k.Name, Table: nt.Name, TableValue: nt}}}, tg.res, nil
}

// DropTrigger is DROP TRIGGER [IF EXISTS] name ON [ks.]table.
type DropTrigger struct {
	// Keyspace is the keyspace of the table; empty means
	// Env.DefaultKeyspace.
	Keyspace string
	// Table is the table the trigger belongs to.
	Table string
	// Name is the trigger name.
	Name string
	// IfExists makes dropping a missing trigger (or one of a missing
	// table or keyspace, as in Cassandra) a no-op.
	IfExists bool
}

// Kind returns "DROP TRIGGER".
func (*DropTrigger) Kind() string { return "DROP TRIGGER" }

// Object returns "name ON keyspace.table" (the table alone when the
// keyspace is left to the default).
func (st *DropTrigger) Object() string { return triggerObject(st.Name, st.Keyspace, st.Table) }

func (st *DropTrigger) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, t, err := triggerTarget(s, env, st.Kind(), st.Keyspace, st.Table, st.Name, st.IfExists)
	if t == nil {
		return tg.end(err)
	}
	if _, exists := t.Trigger(st.Name); !exists {
		if st.IfExists {
			return tg.end(nil)
		}
		return tg.fail(ErrNotFound, "trigger "+clip.String(st.Name)+" does not exist on table "+clip.String(t.QualifiedName()))
	}
	nt := withoutTrigger(t, st.Name)
	tg.res.Applied = true
	return s.putTable(tg.k, nt), Diff{Changes: []Change{{Op: OpPutTable, Keyspace: tg.k.Name, Table: nt.Name, TableValue: nt}}}, tg.res, nil
}
