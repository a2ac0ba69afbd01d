package schema

import (
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// target is what a statement about one named object of a keyspace works
// on: the schema it applies to, the keyspace once found, the Result it
// returns and the object its errors name. The statements that change an
// existing table, index or type start from it (through existing), so that
// they resolve the default keyspace, report a missing keyspace or object
// and honour IF EXISTS in one way.
type target struct {
	s    Schema
	k    *Keyspace // nil until the keyspace is found
	res  Result
	kind string // the statement kind, e.g. "DROP TABLE"
	obj  string // "keyspace.name", as errors name the object
}

// fail ends the statement with an error about its object; the schema is
// unchanged.
func (tg *target) fail(code error, reason string) (Schema, Diff, Result, error) {
	return tg.s, Diff{}, tg.res, newError(tg.kind, tg.obj, code, reason)
}

// end ends the statement without a change: err is nil for a no-op (IF
// EXISTS, IF NOT EXISTS) and the statement's error otherwise.
func (tg *target) end(err error) (Schema, Diff, Result, error) {
	return tg.s, Diff{}, tg.res, err
}

// object says how a statement finds the kind of keyspace object it is
// about and how its Result names it.
type object[T any] struct {
	noun    string                            // "table", "index" or "type", as in "table does not exist"
	find    func(*Keyspace, string) (T, bool) // the keyspace's lookup by name
	inTable bool                              // Result.Table names the object (else Result.Name)
	qualify func(ks, name string) string      // how errors name the object: qualify, or qualifyType
}

var (
	tableObject = object[*Table]{noun: "table", find: (*Keyspace).Table, inTable: true, qualify: qualify}
	indexObject = object[*Index]{noun: "index", find: (*Keyspace).Index, qualify: qualify}
	typeObject  = object[*UserType]{noun: "type", find: (*Keyspace).UserType, qualify: qualifyType}
)

// newTarget starts a statement of kind about the object name, of kind o,
// in keyspace ks (Env.DefaultKeyspace when empty), and looks the keyspace
// up. tg.k is nil when the statement ends there, with tg.end(err) as its
// outcome: no keyspace at all is ErrInvalid, and a missing keyspace is a
// no-op under ifExists and ErrNotFound otherwise.
func newTarget[T any](s Schema, env Env, kind, ks, name string, o *object[T], ifExists bool) (tg target, err error) {
	ks = resolveKeyspace(ks, env)
	tg = target{s: s, kind: kind, obj: o.qualify(ks, name), res: Result{Kind: kind, Keyspace: ks}}
	if o.inTable {
		tg.res.Table = name
	} else {
		tg.res.Name = name
	}
	tg.k, err = keyspaceOf(s, kind, ks, tg.obj, ifExists)
	return tg, err
}

// existing is the start shared by the statements that change or drop an
// existing object: newTarget, then the object name in the keyspace. found
// is false when the statement ends there, with tg.end(err) as its outcome;
// a missing object is a no-op under ifExists and ErrNotFound otherwise.
func existing[T any](s Schema, env Env, kind, ks, name string, o *object[T], ifExists bool) (tg target, v T, found bool, err error) {
	tg, err = newTarget(s, env, kind, ks, name, o, ifExists)
	if tg.k == nil {
		return tg, v, false, err
	}
	v, found = o.find(tg.k, name)
	if !found && !ifExists {
		err = newError(kind, tg.obj, ErrNotFound, o.noun+" does not exist")
	}
	return tg, v, found, err
}

// keyspaceOf looks up keyspace ks for a statement of kind about obj. A
// missing keyspace is a no-op under IF EXISTS (nil keyspace and nil error)
// and ErrNotFound otherwise; no keyspace at all is ErrInvalid.
func keyspaceOf(s Schema, kind, ks, obj string, ifExists bool) (*Keyspace, error) {
	if ks == "" {
		return nil, newError(kind, obj, ErrInvalid, noKeyspaceReason)
	}
	k, ok := s.Keyspace(ks)
	if !ok {
		if ifExists {
			return nil, nil
		}
		return nil, newError(kind, obj, ErrNotFound, "keyspace "+clip.String(cqltext.QuoteIdentifier(ks))+" does not exist")
	}
	return k, nil
}

// resolveKeyspace returns the keyspace a statement naming ks is about: ks,
// or the session's default keyspace when the statement names none.
func resolveKeyspace(ks string, env Env) string {
	if ks == "" {
		return env.DefaultKeyspace
	}
	return ks
}
