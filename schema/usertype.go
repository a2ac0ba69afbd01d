package schema

import (
	"strings"
	"unicode/utf8"

	"github.com/metalog/metalog/internal/clip"
)

// UserType is a user-defined type. Values reachable from a Schema must not
// be modified; build a new UserType instead.
type UserType struct {
	// Keyspace is the name of the keyspace holding the type.
	Keyspace string
	// Name is the type name.
	Name string
	// Fields are the fields in definition order.
	Fields []Field
}

// Field is a field of a user type.
type Field struct {
	// Name is the field name.
	Name string
	// Type is the field's type, in canonical form.
	Type Type
}

// QualifiedName returns "keyspace.type", each name quoted as CQL needs
// (QuoteQualified, QuoteTypeName), as messages name the type.
func (ut *UserType) QualifiedName() string { return qualifyType(ut.Keyspace, ut.Name) }

// Field returns the field with the given name.
func (ut *UserType) Field(name string) (*Field, bool) {
	for i := range ut.Fields {
		if ut.Fields[i].Name == name {
			return &ut.Fields[i], true
		}
	}
	return nil, false
}

// reservedTypeNames cannot name a user type (Cassandra's reserved type
// names, besides the native and collection type names).
var reservedTypeNames = map[string]bool{"byte": true, "complex": true, "enum": true, "date": true, "interval": true, "macaddr": true, "bitstring": true}

// typeNameReason says why name cannot name a user type: 1 to 48 characters,
// printable UTF-8 (any when quoted), and not a native or reserved type name.
func typeNameReason(name string) string {
	switch {
	case name == "":
		return "type name is empty"
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength:
		return "type name " + clip.Quote(name) + " is invalid: it must be 1 to 48 characters"
	case strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "type name " + clip.Quote(name) + " contains a control character"
	}
	lower := strings.ToLower(name)
	if _, native := NativeTypeByName(lower); native || collectionKeywords[lower] || reservedTypeNames[lower] {
		return "type name " + clip.String(name) + " is reserved"
	}
	return ""
}

// validateUserType checks the structural invariants of a user type, as for
// validateTable. Field types must be canonical; top-level fields may be
// non-frozen collections, nested user types must be frozen.
func validateUserType(ut *UserType) string {
	if r := nameReason("keyspace", ut.Keyspace); r != "" {
		return r
	}
	if r := typeNameReason(ut.Name); r != "" {
		return r
	}
	if len(ut.Fields) == 0 {
		return "a user type needs at least one field"
	}
	seen := make(map[string]bool, len(ut.Fields))
	for _, f := range ut.Fields {
		if r := fieldReason(f); r != "" {
			return r
		}
		if seen[f.Name] {
			return "duplicate field name " + clip.String(f.Name)
		}
		seen[f.Name] = true
	}
	return ""
}

// fieldReason checks one field: a column name, and a type that is neither
// a counter nor a non-frozen user type.
func fieldReason(f Field) string {
	if r := columnNameReason("field", f.Name); r != "" {
		return r
	}
	if f.Type == TypeCounter {
		return "field " + clip.String(f.Name) + ": a user type cannot contain counters"
	}
	if _, udt := f.Type.(UserTypeRef); udt {
		return "field " + clip.String(f.Name) + ": a user type cannot contain non-frozen user types; use frozen<" + clip.String(f.Type.String()) + ">"
	}
	if r := validateType(f.Type, 0); r != "" {
		return "field " + clip.String(f.Name) + ": " + r
	}
	return ""
}

// checkTypeRefs checks that every user type t refers to exists in k.
func checkTypeRefs(k *Keyspace, t Type) string {
	for _, name := range typeRefs(nil, t) {
		if _, ok := k.UserType(name); !ok {
			return "unknown type " + clip.String(k.Name) + "." + clip.String(name)
		}
	}
	return ""
}

// missingTypeReason says which of refs, the user types an object uses, k
// lacks, or "" when it has them all.
func missingTypeReason(k *Keyspace, refs []string) string {
	for _, ref := range refs {
		if _, ok := k.UserType(ref); !ok {
			return "type " + clip.String(k.Name) + "." + clip.String(ref) + " it uses does not exist"
		}
	}
	return ""
}

// reaches reports whether type from is, or refers (through fields) to,
// type target. visited bounds the walk by the types of the keyspace.
func reaches(k *Keyspace, from, target string, visited map[string]bool) bool {
	if from == target {
		return true
	}
	if visited[from] {
		return false
	}
	visited[from] = true
	ut, ok := k.UserType(from)
	if !ok {
		return false
	}
	for _, ref := range userTypeRefs(ut) {
		if reaches(k, ref, target, visited) {
			return true
		}
	}
	return false
}

// CreateType is CREATE TYPE.
type CreateType struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the type name.
	Name string
	// IfNotExists makes creating an existing type a no-op.
	IfNotExists bool
	// Fields are the fields in order; types are normalized on apply.
	Fields []Field
}

// Kind returns "CREATE TYPE".
func (*CreateType) Kind() string { return "CREATE TYPE" }

// Object returns "keyspace.type", or the type alone when the keyspace is
// left to the default.
func (st *CreateType) Object() string { return qualifyType(st.Keyspace, st.Name) }

func (st *CreateType) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, err := newTarget(s, env, st.Kind(), st.Keyspace, st.Name, &typeObject, false)
	k := tg.k
	if k == nil {
		return tg.end(err)
	}
	ks := k.Name
	if r := typeNameReason(st.Name); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	if _, exists := k.UserType(st.Name); exists {
		if st.IfNotExists {
			return tg.end(nil)
		}
		return tg.fail(ErrAlreadyExists, "type already exists")
	}
	ut := &UserType{Keyspace: ks, Name: st.Name, Fields: make([]Field, len(st.Fields))}
	for i, f := range st.Fields {
		if r := columnNameReason("field", f.Name); r != "" {
			return tg.fail(ErrInvalid, r)
		}
		t, r := normalizeType(f.Type, ks)
		if r != "" {
			return tg.fail(ErrInvalid, "field "+clip.String(f.Name)+": "+r)
		}
		if r := checkTypeRefs(k, t); r != "" {
			return tg.fail(ErrInvalid, "field "+clip.String(f.Name)+": "+r)
		}
		ut.Fields[i] = Field{Name: f.Name, Type: t}
	}
	if r := validateUserType(ut); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putUserType(k, ut), Diff{Changes: []Change{{Op: OpPutType, Keyspace: ks, Name: ut.Name, TypeValue: ut}}}, tg.res, nil
}

// RenameField is one "a TO b" of ALTER TYPE ... RENAME or ALTER TABLE ...
// RENAME.
type RenameField struct {
	// From is the current name.
	From string
	// To is the new name.
	To string
}

// AlterType is ALTER TYPE ... ADD or ALTER TYPE ... RENAME. Exactly one of
// Add and Rename is set.
type AlterType struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the type name.
	Name string
	// IfExists makes altering a missing type a no-op.
	IfExists bool
	// Add is the field to add.
	Add *Field
	// Rename lists the fields to rename.
	Rename []RenameField
	// ClauseIf is the IF of the clause (Cassandra 5.0): ADD IF NOT EXISTS
	// of a field the type has, and RENAME IF EXISTS of fields it does not
	// have, are skipped; with nothing left the statement is a no-op.
	ClauseIf bool
}

// Kind returns "ALTER TYPE".
func (*AlterType) Kind() string { return "ALTER TYPE" }

// Object returns "keyspace.type", or the type alone when the keyspace is
// left to the default.
func (st *AlterType) Object() string { return qualifyType(st.Keyspace, st.Name) }

func (st *AlterType) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, old, found, err := existing(s, env, st.Kind(), st.Keyspace, st.Name, &typeObject, st.IfExists)
	if !found {
		return tg.end(err)
	}
	k, ks := tg.k, tg.k.Name
	if (st.Add == nil) == (len(st.Rename) == 0) {
		return tg.fail(ErrInvalid, "ALTER TYPE needs exactly one of ADD or RENAME")
	}
	if st.ClauseIf {
		if st = st.withoutSkipped(old); st.Add == nil && len(st.Rename) == 0 {
			return s, Diff{}, tg.res, nil
		}
	}
	ut := &UserType{Keyspace: ks, Name: st.Name, Fields: append([]Field(nil), old.Fields...)}
	if f := st.Add; f != nil {
		if r := columnNameReason("field", f.Name); r != "" {
			return tg.fail(ErrInvalid, r)
		}
		if _, exists := old.Field(f.Name); exists {
			return tg.fail(ErrInvalid, "field "+clip.String(f.Name)+" already exists")
		}
		t, r := normalizeType(f.Type, ks)
		if r == "" {
			r = checkTypeRefs(k, t)
		}
		if r != "" {
			return tg.fail(ErrInvalid, "field "+clip.String(f.Name)+": "+r)
		}
		for _, ref := range typeRefs(nil, t) {
			if reaches(k, ref, st.Name, map[string]bool{}) {
				return tg.fail(ErrInvalid, "cannot add field "+clip.String(f.Name)+" of type "+clip.String(t.String())+": it would make type "+clip.String(st.Name)+" refer to itself")
			}
		}
		ut.Fields = append(ut.Fields, Field{Name: f.Name, Type: t})
	}
	for _, rn := range st.Rename {
		f, ok := ut.Field(rn.From)
		if !ok {
			return tg.fail(ErrInvalid, "unknown field "+clip.String(rn.From))
		}
		if r := columnNameReason("field", rn.To); r != "" {
			return tg.fail(ErrInvalid, r)
		}
		if _, taken := ut.Field(rn.To); taken {
			return tg.fail(ErrInvalid, "cannot rename field "+clip.String(rn.From)+" to "+clip.String(rn.To)+": a field of that name exists")
		}
		f.Name = rn.To
	}
	if r := validateUserType(ut); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putUserType(k, ut), Diff{Changes: []Change{{Op: OpPutType, Keyspace: ks, Name: ut.Name, TypeValue: ut}}}, tg.res, nil
}

// DropType is DROP TYPE. It fails while a table or another type uses the
// type.
type DropType struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the type name.
	Name string
	// IfExists makes dropping a missing type a no-op.
	IfExists bool
}

// Kind returns "DROP TYPE".
func (*DropType) Kind() string { return "DROP TYPE" }

// Object returns "keyspace.type", or the type alone when the keyspace is
// left to the default.
func (st *DropType) Object() string { return qualifyType(st.Keyspace, st.Name) }

func (st *DropType) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, ut, found, err := existing(s, env, st.Kind(), st.Keyspace, st.Name, &typeObject, st.IfExists)
	if !found {
		return tg.end(err)
	}
	k, ks := tg.k, tg.k.Name
	if users := k.typeUsers(st.Name, 4); len(users) > 0 {
		list := strings.Join(users[:min(3, len(users))], ", ")
		if len(users) > 3 {
			list += ", ..."
		}
		return tg.fail(ErrInvalid, "type is still used by "+list)
	}
	tg.res.Applied = true
	return s.deleteUserType(k, ut), Diff{Changes: []Change{{Op: OpDropType, Keyspace: ks, Name: st.Name}}}, tg.res, nil
}

// withoutSkipped returns a copy of st, whose clause has IF [NOT] EXISTS,
// without what the clause skips on type ut: an ADD of a field it has, the
// RENAMEs of fields it does not have.
func (st *AlterType) withoutSkipped(ut *UserType) *AlterType {
	c := *st
	if c.Add != nil {
		if _, ok := ut.Field(c.Add.Name); ok {
			c.Add = nil
		}
	}
	c.Rename = nil
	for _, rn := range st.Rename {
		if _, ok := ut.Field(rn.From); ok {
			c.Rename = append(c.Rename, rn)
		}
	}
	return &c
}

// typesInDependencyOrder returns k's user types so that every type comes
// after the types it uses, otherwise in name order.
func typesInDependencyOrder(k *Keyspace) []*UserType {
	types := k.UserTypes()
	out := make([]*UserType, 0, len(types))
	done := make(map[string]bool, len(types))
	var visit func(ut *UserType, depth int)
	visit = func(ut *UserType, depth int) {
		if done[ut.Name] || depth > len(types) {
			return
		}
		done[ut.Name] = true
		for _, ref := range userTypeRefs(ut) {
			if dep, ok := k.UserType(ref); ok {
				visit(dep, depth+1)
			}
		}
		out = append(out, ut)
	}
	for _, ut := range types {
		visit(ut, 0)
	}
	return out
}

// TypesInDependencyOrder returns k's user types so that every type comes
// after the types it uses, otherwise in name order, as describe.Keyspace
// lists them. The slice is new and owned by the caller; it walks all
// types of the keyspace.
func TypesInDependencyOrder(k *Keyspace) []*UserType {
	return typesInDependencyOrder(k)
}
