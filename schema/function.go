package schema

import (
	"strings"
	"unicode/utf8"

	"github.com/benbjohnson/immutable"
	"github.com/metalog/metalog/internal/clip"
)

// Function is a user-defined function (CREATE FUNCTION) or aggregate
// (CREATE AGGREGATE). metalog stores them as schema objects and never runs
// them. Functions and aggregates share one namespace per keyspace, as in
// Cassandra: they are keyed by their signature, the name and the argument
// types (Signature), so a name may be overloaded by argument types, but a
// function and an aggregate cannot have the same signature. Values
// reachable from a Schema must not be modified; build a new Function
// instead.
type Function struct {
	// Keyspace is the name of the keyspace holding the function.
	Keyspace string
	// Name is the function name.
	Name string
	// Kind says whether this is a function or an aggregate.
	Kind FunctionKind
	// ArgNames are the argument names of a function, one per argument
	// type; nil for an aggregate, whose arguments have no names.
	ArgNames []string
	// ArgTypes are the argument types, in canonical form.
	ArgTypes []Type
	// ReturnType is the return type: a function's RETURNS, an aggregate's
	// final function's return type or else its state type.
	ReturnType Type

	// CalledOnNullInput is CALLED ON NULL INPUT (false: RETURNS NULL ON
	// NULL INPUT), for a function.
	CalledOnNullInput bool
	// Language is the function's language, lowercase (Cassandra 5 takes
	// only java), for a function.
	Language string
	// Body is the function's body as written, for a function.
	Body string

	// StateFunc is an aggregate's SFUNC, a function of the same keyspace
	// taking (StateType, ArgTypes...) and returning StateType.
	StateFunc string
	// StateType is an aggregate's STYPE, in canonical form.
	StateType Type
	// FinalFunc is an aggregate's FINALFUNC, a function of the same
	// keyspace taking (StateType); empty when there is none.
	FinalFunc string
	// InitCond is an aggregate's INITCOND as canonical CQL literal text;
	// empty when there is none (INITCOND null is none).
	InitCond string
}

// FunctionKind says whether a Function is a function or an aggregate.
type FunctionKind uint8

// Function kinds. Their numeric values are part of the encoding.
const (
	// ScalarFunction is a function (CREATE FUNCTION).
	ScalarFunction FunctionKind = iota + 1
	// AggregateFunction is an aggregate (CREATE AGGREGATE).
	AggregateFunction
)

// String returns "function" or "aggregate".
func (k FunctionKind) String() string {
	switch k {
	case ScalarFunction:
		return "function"
	case AggregateFunction:
		return "aggregate"
	}
	return "invalid"
}

// Signature returns the function's key in its keyspace: its name and
// argument types, as FunctionSignature.
func (f *Function) Signature() string { return FunctionSignature(f.Name, f.ArgTypes) }

// QualifiedName returns "keyspace.signature", the keyspace and the
// function's name quoted as CQL needs (QuoteSignature), as messages name
// the function.
func (f *Function) QualifiedName() string { return qualifySignature(f.Keyspace, f.Signature()) }

// FunctionSignature returns "name(type,type,...)", the key of a function or
// aggregate in its keyspace, with the types in their CQL text (pass them in
// canonical form, as a Function holds them).
func FunctionSignature(name string, args []Type) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	for i, t := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(typeString(t))
	}
	b.WriteByte(')')
	return b.String()
}

// stateSignature is the signature of an aggregate's state function.
func (f *Function) stateSignature() string {
	args := make([]Type, 0, len(f.ArgTypes)+1)
	args = append(append(args, f.StateType), f.ArgTypes...)
	return FunctionSignature(f.StateFunc, args)
}

// finalSignature is the signature of an aggregate's final function, ""
// when it has none.
func (f *Function) finalSignature() string {
	if f.FinalFunc == "" {
		return ""
	}
	return FunctionSignature(f.FinalFunc, []Type{f.StateType})
}

// functionNameReason says why name cannot name a function or aggregate: 1
// to 48 characters of UTF-8 without control characters (any when quoted).
func functionNameReason(what, name string) string {
	switch {
	case name == "":
		return what + " name is empty"
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength:
		return what + " name " + clip.Quote(name) + " is invalid: it must be 1 to 48 characters"
	}
	return controlReason(what, name)
}

// functionTypeReason checks an argument, return or state type given as t
// (before normalizing) and returns it in canonical form: Cassandra refuses
// frozen<> there (a function takes and returns values whole), except on a
// tuple, which is frozen anyway. what names the type in the message
// ("Argument", "Return type", "State type").
func functionTypeReason(k *Keyspace, what string, t Type) (Type, string) {
	if fr, ok := t.(FrozenType); ok {
		if _, tuple := fr.Inner.(TupleType); !tuple {
			s := typeString(t)
			return nil, what + " '" + clip.String(s) + "' cannot be frozen; remove frozen<> modifier from '" + clip.String(s) + "'"
		}
	}
	n, r := normalizeType(t, k.Name)
	if r == "" {
		r = validateType(n, 0)
	}
	if r == "" {
		r = checkTypeRefs(k, n)
	}
	if r != "" {
		return nil, strings.ToLower(what[:1]) + what[1:] + " " + clip.String(typeString(t)) + ": " + r
	}
	return n, ""
}

// validateFunction checks the structural invariants of f, as validateTable
// does for a table: names, canonical types, the fields of its kind. It does
// not check that the user types and functions it uses exist.
func validateFunction(f *Function) string {
	if r := nameReason("keyspace", f.Keyspace); r != "" {
		return r
	}
	if r := functionNameReason(f.Kind.String(), f.Name); r != "" {
		return r
	}
	for _, t := range f.ArgTypes {
		if r := canonicalTypeReason(t); r != "" {
			return "argument type " + clip.String(typeString(t)) + ": " + r
		}
	}
	if r := canonicalTypeReason(f.ReturnType); r != "" {
		return "return type " + clip.String(typeString(f.ReturnType)) + ": " + r
	}
	switch f.Kind {
	case ScalarFunction:
		if len(f.ArgNames) != len(f.ArgTypes) {
			return "a function needs one name per argument type"
		}
		seen := make(map[string]bool, len(f.ArgNames))
		for _, n := range f.ArgNames {
			if r := columnNameReason("argument", n); r != "" {
				return r
			}
			if seen[n] {
				return "duplicate argument name " + clip.String(n)
			}
			seen[n] = true
		}
		if f.Language == "" || f.Language != strings.ToLower(f.Language) {
			return "function language " + clip.Quote(f.Language) + " is not a lowercase name"
		}
		if f.StateFunc != "" || f.StateType != nil || f.FinalFunc != "" || f.InitCond != "" {
			return "a function has no SFUNC, STYPE, FINALFUNC or INITCOND"
		}
	case AggregateFunction:
		if f.ArgNames != nil || f.Language != "" || f.Body != "" || f.CalledOnNullInput {
			return "an aggregate has no argument names, language, body or null-input behaviour"
		}
		if r := functionNameReason("state function", f.StateFunc); r != "" {
			return r
		}
		if f.FinalFunc != "" {
			if r := functionNameReason("final function", f.FinalFunc); r != "" {
				return r
			}
		}
		if r := canonicalTypeReason(f.StateType); r != "" {
			return "state type " + clip.String(typeString(f.StateType)) + ": " + r
		}
		if f.InitCond != "" {
			if _, r := canonicalLiteral(f.InitCond, f.StateType); r != "" {
				return "INITCOND: " + r
			}
		}
	default:
		return "unknown function kind " + clip.String(f.Kind.String())
	}
	return ""
}

// canonicalTypeReason says why t is not a valid type in canonical form
// for a function: valid, and equal to its own normal form.
func canonicalTypeReason(t Type) string {
	if r := validateType(t, 0); r != "" {
		return r
	}
	if _, frozen := t.(FrozenType); frozen {
		return "a function type cannot be frozen"
	}
	n, r := normalize(t, "", false, 0)
	if r != "" {
		return r
	}
	if !TypesEqual(n, t) {
		return "type is not in canonical form (" + clip.String(typeString(n)) + ")"
	}
	return ""
}

// functionTypeRefs lists the user types f uses: its argument and return
// types and, for an aggregate, its state type.
func functionTypeRefs(f *Function) []string {
	var refs []string
	for _, t := range f.ArgTypes {
		refs = typeRefs(refs, t)
	}
	refs = typeRefs(refs, f.ReturnType)
	if f.StateType != nil {
		refs = typeRefs(refs, f.StateType)
	}
	return refs
}

// functionFuncRefs lists the signatures of the functions an aggregate
// uses (its state and final functions); none for a function.
func functionFuncRefs(f *Function) []string {
	if f.Kind != AggregateFunction {
		return nil
	}
	refs := []string{f.stateSignature()}
	if fin := f.finalSignature(); fin != "" && fin != refs[0] {
		refs = append(refs, fin)
	}
	return refs
}

// userKind is the kind letter of f in Keyspace.users: 'f' for a function,
// 'a' for an aggregate.
func (f *Function) userKind() byte {
	if f.Kind == AggregateFunction {
		return 'a'
	}
	return 'f'
}

// funcUserPrefix starts the keys of Keyspace.users that record an
// aggregate using a function: "\x00" sig "\x00" 'a' aggregate. A user type
// name cannot start with a control character, so these keys never mix
// with those of the types.
const funcUserPrefix = "\x00"

// updateFuncUsers records in m, the keyspace's users index, the user types
// and functions aggregate or function f uses, replacing those of old
// (nil for a new one) and removing them when f is nil.
func updateFuncUsers(m *immutable.SortedMap[string, struct{}], old, f *Function) *immutable.SortedMap[string, struct{}] {
	var oldT, newT, oldF, newF []string
	var kind byte
	var sig string
	if old != nil {
		oldT, oldF, kind, sig = functionTypeRefs(old), functionFuncRefs(old), old.userKind(), old.Signature()
	}
	if f != nil {
		newT, newF, kind, sig = functionTypeRefs(f), functionFuncRefs(f), f.userKind(), f.Signature()
	}
	m = updateUsers(m, kind, sig, oldT, newT)
	for i := range oldF {
		oldF[i] = funcUserPrefix + oldF[i]
	}
	for i := range newF {
		newF[i] = funcUserPrefix + newF[i]
	}
	return updateUsers(m, 'a', sig, oldF, newF)
}

// functionUsers returns up to max aggregates using function sig, as their
// signatures, in O(log n + max).
func (k *Keyspace) functionUsers(sig string, max int) []string {
	if k.users == nil {
		return nil
	}
	prefix := funcUserPrefix + sig + "\x00"
	var out []string
	it := k.users.Iterator()
	it.Seek(prefix)
	for !it.Done() && len(out) < max {
		key, _, _ := it.Next()
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok || rest == "" {
			break
		}
		out = append(out, rest[1:])
	}
	return out
}

// Function returns the function or aggregate with signature sig
// (FunctionSignature).
func (k *Keyspace) Function(sig string) (*Function, bool) {
	if k == nil || k.functions == nil {
		return nil, false
	}
	return k.functions.Get(sig)
}

// Functions returns the keyspace's functions and aggregates sorted by
// signature, in a new slice the caller owns. It walks all of them.
func (k *Keyspace) Functions() []*Function {
	if k == nil {
		return nil
	}
	return values(k.functions)
}

// FunctionCount returns the number of functions and aggregates.
func (k *Keyspace) FunctionCount() int {
	if k == nil || k.functions == nil {
		return 0
	}
	return k.functions.Len()
}

// FunctionsNamed returns the functions and aggregates named name (every
// overload), in signature order, in a new slice the caller owns, in
// O(log n + overloads): signatures of one name sort together after
// name "(".
func (k *Keyspace) FunctionsNamed(name string) []*Function {
	if k == nil || k.functions == nil {
		return nil
	}
	prefix := name + "("
	var out []*Function
	it := k.functions.Iterator()
	it.Seek(prefix)
	for !it.Done() {
		key, f, _ := it.Next()
		if !strings.HasPrefix(key, prefix) {
			break
		}
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// putFunction stores f in keyspace k (which must be in s), keeping the
// users index and the digest up to date.
func (s Schema) putFunction(k *Keyspace, f *Function) Schema {
	c := *k
	old, _ := k.Function(f.Signature())
	if old != nil {
		c.digest.sub(functionHash(old))
	}
	c.users = updateFuncUsers(c.users, old, f)
	c.digest.add(functionHash(f))
	c.functions = setMap(c.functions, f.Signature(), f)
	return s.replaceKeyspace(k, &c, 0)
}

// deleteFunction removes f from keyspace k (which must be in s).
func (s Schema) deleteFunction(k *Keyspace, f *Function) Schema {
	c := *k
	c.digest.sub(functionHash(f))
	c.users = updateFuncUsers(c.users, f, nil)
	c.functions = c.functions.Delete(f.Signature())
	return s.replaceKeyspace(k, &c, 0)
}

// missingFunctionReason says which user type or function f uses k lacks,
// or "" when k has them all (and the functions are functions returning
// what the aggregate needs).
func missingFunctionReason(k *Keyspace, f *Function) string {
	if r := missingTypeReason(k, functionTypeRefs(f)); r != "" {
		return r
	}
	for _, sig := range functionFuncRefs(f) {
		if g, ok := k.Function(sig); !ok || g.Kind != ScalarFunction {
			return "function " + clip.String(k.Name) + "." + clip.String(sig) + " it uses does not exist"
		}
	}
	return ""
}

// function undoes OpPutFunction or OpDropFunction. A prior must find the
// types and functions it uses; a created function must be unused by
// aggregates to be removed.
func (u undo) function(prior any) (Schema, error) {
	p, ok := priorAs[Function](prior)
	if !ok {
		return u.wrongPrior(prior, "*schema.Function")
	}
	k, ok := u.s.Keyspace(u.c.Keyspace)
	if !ok {
		return u.fail("keyspace " + clip.String(u.c.Keyspace) + " does not exist")
	}
	if p != nil {
		if p.Keyspace != u.c.Keyspace || p.Signature() != u.c.Name {
			return u.fail("prior is " + p.Kind.String() + " " + clip.String(p.QualifiedName()))
		}
		if r := validateFunction(p); r != "" {
			return u.fail("prior " + p.Kind.String() + ": " + r)
		}
		if r := missingFunctionReason(k, p); r != "" {
			return u.fail("prior " + p.Kind.String() + ": " + r)
		}
	}
	cur, exists := k.Function(u.c.Name)
	if r := u.presence("function", exists, p != nil); r != "" {
		return u.fail(r)
	}
	if p != nil {
		return u.s.putFunction(k, p), nil
	}
	if users := k.functionUsers(cur.Signature(), 1); len(users) > 0 {
		return u.fail("function is still used by aggregate " + clip.String(users[0]) + ": undo that change first")
	}
	return u.s.deleteFunction(k, cur), nil
}
