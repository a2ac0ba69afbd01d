package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// Prior returns the value that the object changed by c has in s, the
// schema c is applied to: what a change history keeps so that Undo can
// take the change back. For OpPutKeyspace and OpDropKeyspace it is the
// whole *Keyspace, with its objects; for table operations the *Table
// (c.Keyspace, c.Table); for type operations the *UserType (c.Keyspace,
// c.Name); for index operations the *Index (c.Keyspace, c.Name); for
// function operations the *Function (c.Keyspace, c.Name, the signature). It is an
// untyped nil when the object is absent (a create) or c.Op is unknown.
//
// The changes of one statement touch distinct objects, so the priors of
// all of them may be taken on the schema before the statement. Prior costs
// O(log n) and does not allocate.
func Prior(s Schema, c Change) any {
	k, ok := s.Keyspace(c.Keyspace)
	if !ok {
		return nil
	}
	switch c.Op {
	case OpPutKeyspace, OpDropKeyspace:
		return k
	case OpPutTable, OpDropTable:
		if t, ok := k.Table(c.Table); ok {
			return t
		}
	case OpPutType, OpDropType:
		if ut, ok := k.UserType(c.Name); ok {
			return ut
		}
	case OpPutIndex, OpDropIndex:
		if ix, ok := k.Index(c.Name); ok {
			return ix
		}
	case OpPutFunction, OpDropFunction:
		if f, ok := k.Function(c.Name); ok {
			return f
		}
	}
	return nil
}

// Undo returns s with c taken back, where s is the schema just after c
// (or after c and changes since undone) and prior is what Prior returned
// for c on the schema before it, or its decoded equivalent: DecodeKeyspace
// for the prior of OpPutKeyspace, DecodeKeyspaceObjects for that of
// OpDropKeyspace, DecodeTable, DecodeUserType, DecodeIndex and
// DecodeFunction for the others. Undoing every change newest-first rebuilds each earlier schema
// exactly: digest, encoded size, object and table counts and the type-users
// bookkeeping come out as they were.
//
// A put with a nil prior (a create) removes the object, which must then
// hold nothing that later changes added: an undone CREATE KEYSPACE must
// find its keyspace empty, an undone CREATE TABLE its table without
// indexes, an undone CREATE TYPE its type unused. A put with a prior puts
// the prior back (for a keyspace only its own properties: its objects are
// s's; for a table, s's indexes of it are kept). A drop puts its prior
// back and needs the object absent; a dropped keyspace comes back whole
// through its maintained digest, in O(log n), without walking its objects.
//
// Bad input (a prior of another type or object, a missing prior for a
// drop, an object missing where the undo needs it or present where it
// must not be, an unknown op) returns s and an *Error matching ErrInvalid
// that names the op and the object. Undo costs O(log n) plus the size of
// the objects it puts back, as Apply does.
func Undo(s Schema, c Change, prior any) (Schema, error) {
	u := undo{s: s, c: c}
	switch c.Op {
	case OpPutKeyspace, OpDropKeyspace:
		return u.keyspace(prior)
	case OpPutTable, OpDropTable:
		return u.table(prior)
	case OpPutType, OpDropType:
		return u.userType(prior)
	case OpPutIndex, OpDropIndex:
		return u.index(prior)
	case OpPutFunction, OpDropFunction:
		return u.function(prior)
	}
	return u.fail("unknown change op " + strconv.Itoa(int(c.Op)))
}

// undo is one Undo call: the schema and the change to take back.
type undo struct {
	s Schema
	c Change
}

// fail returns the schema unchanged and an ErrInvalid *Error naming the op
// (as "UNDO PutTable", or "UNDO" for an unknown op) and the object.
func (u undo) fail(reason string) (Schema, error) {
	stmt := "UNDO"
	if u.c.Op >= OpPutKeyspace && u.c.Op <= OpDropFunction {
		stmt += " " + u.c.Op.String()
	}
	return u.s, newError(stmt, u.object(), ErrInvalid, reason)
}

// wrongPrior fails on a prior that is not a want (or nil).
func (u undo) wrongPrior(prior any, want string) (Schema, error) {
	return u.fail(fmt.Sprintf("prior is a %T, want %s or nil", prior, want))
}

// object names the changed object: "ks", "ks.table", "ks.type" or
// "ks.index"; for an unknown op, the most precise name the change has.
func (u undo) object() string {
	switch u.c.Op {
	case OpPutKeyspace, OpDropKeyspace:
		return u.c.Keyspace
	case OpPutTable, OpDropTable:
		return qualify(u.c.Keyspace, u.c.Table)
	case OpPutType, OpDropType, OpPutIndex, OpDropIndex, OpPutFunction, OpDropFunction:
		return qualify(u.c.Keyspace, u.c.Name)
	}
	switch {
	case u.c.Name != "":
		return qualify(u.c.Keyspace, u.c.Name)
	case u.c.Table != "":
		return qualify(u.c.Keyspace, u.c.Table)
	}
	return u.c.Keyspace
}

// isDrop reports whether the change is a drop, whose undo needs a prior
// and the object absent.
func (u undo) isDrop() bool {
	switch u.c.Op {
	case OpDropKeyspace, OpDropTable, OpDropType, OpDropIndex, OpDropFunction:
		return true
	}
	return false
}

// presence checks that the object is where the undo needs it: absent for
// a drop, present for a put, a drop having a prior. It returns the reason
// it is not, or "".
func (u undo) presence(what string, exists, hasPrior bool) string {
	switch {
	case u.isDrop() && !hasPrior:
		return "no prior " + what + ": a dropped " + what + " existed"
	case u.isDrop() && exists:
		return what + " exists: it cannot be put back"
	case !u.isDrop() && !exists:
		return what + " does not exist"
	}
	return ""
}

// priorAs returns prior as a *T, nil for an absent prior (an untyped nil or
// a nil *T), and ok false for a value of another type.
func priorAs[T any](prior any) (p *T, ok bool) {
	if prior == nil {
		return nil, true
	}
	p, ok = prior.(*T)
	return p, ok
}

// keyspace undoes OpPutKeyspace or OpDropKeyspace.
func (u undo) keyspace(prior any) (Schema, error) {
	p, ok := priorAs[Keyspace](prior)
	if !ok {
		return u.wrongPrior(prior, "*schema.Keyspace")
	}
	if p != nil && p.Name != u.c.Keyspace {
		return u.fail("prior is keyspace " + clip.String(p.Name))
	}
	cur, exists := u.s.Keyspace(u.c.Keyspace)
	if r := u.presence("keyspace", exists, p != nil); r != "" {
		return u.fail(r)
	}
	switch {
	case u.isDrop():
		return u.s.restoreKeyspace(p), nil
	case p != nil:
		return u.s.putKeyspace(p), nil
	case cur.digest.count > 1:
		return u.fail("keyspace still holds " + strconv.FormatInt(cur.digest.count-1, 10) + " objects: undo their changes first")
	}
	return u.s.deleteKeyspace(cur), nil
}

// restoreKeyspace puts k, absent from s, back with its objects, in
// O(log n): its digest is added as a whole. A k built as a literal (never
// in a Schema, so without objects or digest) gets its digest computed.
func (s Schema) restoreKeyspace(k *Keyspace) Schema {
	if k.digest.count == 0 {
		c := *k
		c.digest = keyspaceDigest(&c)
		k = &c
	}
	return s.replaceKeyspace(nil, k, k.TableCount())
}

// table undoes OpPutTable or OpDropTable.
func (u undo) table(prior any) (Schema, error) {
	p, ok := priorAs[Table](prior)
	if !ok {
		return u.wrongPrior(prior, "*schema.Table")
	}
	k, ok := u.s.Keyspace(u.c.Keyspace)
	if !ok {
		return u.fail("keyspace " + clip.String(u.c.Keyspace) + " does not exist")
	}
	if p != nil {
		if p.Keyspace != u.c.Keyspace || p.Name != u.c.Table {
			return u.fail("prior is table " + clip.String(p.QualifiedName()))
		}
		if r := validateTable(p); r != "" {
			return u.fail("prior table: " + r)
		}
		if r := missingTypeReason(k, tableTypeRefs(p)); r != "" {
			return u.fail("prior table: " + r)
		}
		if p.View() != nil {
			if base, ok := k.Table(p.View().Base); !ok || base.View() != nil {
				return u.fail("base table " + clip.String(qualify(k.Name, p.View().Base)) + " of the prior materialized view does not exist")
			}
		}
	}
	cur, exists := k.Table(u.c.Table)
	if r := u.presence("table", exists, p != nil); r != "" {
		return u.fail(r)
	}
	switch {
	case p != nil:
		return u.s.putTable(k, p), nil
	case k.hasTableIndexes(cur.Name):
		return u.fail("table still has indexes: undo their changes first")
	case k.hasViews(cur.Name):
		return u.fail("table still has materialized views: undo their changes first")
	}
	s, _ := u.s.deleteTable(k, cur)
	return s, nil
}

// userType undoes OpPutType or OpDropType.
func (u undo) userType(prior any) (Schema, error) {
	p, ok := priorAs[UserType](prior)
	if !ok {
		return u.wrongPrior(prior, "*schema.UserType")
	}
	k, ok := u.s.Keyspace(u.c.Keyspace)
	if !ok {
		return u.fail("keyspace " + clip.String(u.c.Keyspace) + " does not exist")
	}
	if p != nil {
		if p.Keyspace != u.c.Keyspace || p.Name != u.c.Name {
			return u.fail("prior is type " + clip.String(p.QualifiedName()))
		}
		if r := validateUserType(p); r != "" {
			return u.fail("prior type: " + r)
		}
		if r := missingTypeReason(k, userTypeRefs(p)); r != "" {
			return u.fail("prior type: " + r)
		}
	}
	cur, exists := k.UserType(u.c.Name)
	if r := u.presence("type", exists, p != nil); r != "" {
		return u.fail(r)
	}
	if p != nil {
		return u.s.putUserType(k, p), nil
	}
	if users := k.typeUsers(cur.Name, 1); len(users) > 0 {
		return u.fail("type is still used by " + users[0] + ": undo that change first")
	}
	return u.s.deleteUserType(k, cur), nil
}

// index undoes OpPutIndex or OpDropIndex.
func (u undo) index(prior any) (Schema, error) {
	p, ok := priorAs[Index](prior)
	if !ok {
		return u.wrongPrior(prior, "*schema.Index")
	}
	k, ok := u.s.Keyspace(u.c.Keyspace)
	if !ok {
		return u.fail("keyspace " + clip.String(u.c.Keyspace) + " does not exist")
	}
	if p != nil {
		if p.Keyspace != u.c.Keyspace || p.Name != u.c.Name {
			return u.fail("prior is index " + clip.String(p.QualifiedName()))
		}
		if r := validateIndex(p); r != "" {
			return u.fail("prior index: " + r)
		}
		t, ok := k.Table(p.Table)
		if !ok {
			return u.fail("table " + clip.String(qualify(k.Name, p.Table)) + " of the prior index does not exist")
		}
		if _, ok := t.Column(p.Target.Column); !ok {
			return u.fail("column " + clip.String(p.Target.Column) + " of the prior index does not exist in table " + clip.String(t.QualifiedName()))
		}
	}
	cur, exists := k.Index(u.c.Name)
	if r := u.presence("index", exists, p != nil); r != "" {
		return u.fail(r)
	}
	if p != nil {
		return u.s.putIndex(k, p), nil
	}
	return u.s.deleteIndex(k, cur), nil
}

// hasTableIndexes reports whether table has an index, in O(log n).
func (k *Keyspace) hasTableIndexes(table string) bool {
	if k.byTable == nil {
		return false
	}
	it := k.byTable.Iterator()
	it.Seek(table + "\x00")
	if it.Done() {
		return false
	}
	key, _, _ := it.Next()
	return strings.HasPrefix(key, table+"\x00")
}
