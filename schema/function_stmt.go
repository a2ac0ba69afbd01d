package schema

import (
	"strings"

	"github.com/metalog/metalog/internal/clip"
)

// FunctionArg is one argument of CREATE FUNCTION: a name and a type.
type FunctionArg struct {
	// Name is the argument name.
	Name string
	// Type is the argument type; it is normalized on apply.
	Type Type
}

// CreateFunction is CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS]. metalog
// stores the function and never runs it.
type CreateFunction struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the function name.
	Name string
	// OrReplace replaces a function of the same signature, which must
	// return the same type and have the same null-input behaviour.
	OrReplace bool
	// IfNotExists makes creating an existing function a no-op.
	IfNotExists bool
	// Args are the arguments in order.
	Args []FunctionArg
	// ReturnType is RETURNS.
	ReturnType Type
	// CalledOnNullInput is CALLED ON NULL INPUT; false is RETURNS NULL ON
	// NULL INPUT.
	CalledOnNullInput bool
	// Language is LANGUAGE, lowercase (the parser lowercases it).
	Language string
	// Body is the body (AS '...' or AS $$...$$).
	Body string
}

// Kind returns "CREATE FUNCTION".
func (*CreateFunction) Kind() string { return "CREATE FUNCTION" }

// Object returns "keyspace.function", or the function alone when the
// keyspace is left to the default.
func (st *CreateFunction) Object() string { return qualify(st.Keyspace, st.Name) }

// Cassandra's messages about functions, quoted in the reasons below.
const (
	bothDirectives = "Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives"
	onlyJava       = "Currently only Java UDFs are available in Cassandra. For more information - CASSANDRA-18252 and CASSANDRA-17281"
)

// functionTarget starts a function or aggregate statement: the keyspace
// resolved, not a system keyspace (Cassandra: "System keyspace 'system' is
// not user-modifiable"), and looked up; a missing keyspace ends it with
// missing as the reason (ErrNotFound), or as a no-op under ifExists.
func functionTarget(s Schema, env Env, kind, ks, name string, ifExists bool, missing func(ks string) string) (target, error) {
	ks = resolveKeyspace(ks, env)
	tg := target{s: s, kind: kind, obj: qualify(ks, name), res: Result{Kind: kind, Keyspace: ks, Name: name}}
	if ks == "" {
		return tg, newError(kind, tg.obj, ErrInvalid, noKeyspaceReason)
	}
	if IsReservedKeyspaceName(ks) {
		return tg, newError(kind, tg.obj, ErrInvalid, "System keyspace '"+clip.String(ks)+"' is not user-modifiable")
	}
	k, ok := s.Keyspace(ks)
	if !ok {
		if ifExists {
			return tg, nil
		}
		return tg, newError(kind, tg.obj, ErrNotFound, missing(ks))
	}
	tg.k = k
	return tg, nil
}

// functionArgTypes normalizes the argument types of a function or
// aggregate statement and checks them (not frozen, user types known).
func functionArgTypes(k *Keyspace, given []Type) ([]Type, string) {
	if len(given) == 0 {
		return nil, ""
	}
	out := make([]Type, len(given))
	for i, t := range given {
		n, r := functionTypeReason(k, "Argument", t)
		if r != "" {
			return nil, r
		}
		out[i] = n
	}
	return out, ""
}

// joinTypes is the types' CQL text separated by ", ", as Cassandra names
// argument lists in its messages.
func joinTypes(types []Type) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = typeString(t)
	}
	return strings.Join(parts, ", ")
}

func (st *CreateFunction) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, err := functionTarget(s, env, st.Kind(), st.Keyspace, st.Name, false, func(ks string) string {
		return "Keyspace '" + clip.String(ks) + "' doesn't exist"
	})
	if tg.k == nil {
		return tg.end(err)
	}
	k := tg.k
	if st.OrReplace && st.IfNotExists {
		return tg.fail(ErrInvalid, bothDirectives)
	}
	if st.Language != "java" {
		return tg.fail(ErrInvalid, "language "+clip.Quote(st.Language)+": "+onlyJava)
	}
	if r := functionNameReason("function", st.Name); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	names := make([]string, len(st.Args))
	given := make([]Type, len(st.Args))
	for i, a := range st.Args {
		if r := columnNameReason("argument", a.Name); r != "" {
			return tg.fail(ErrInvalid, r)
		}
		for _, prev := range names[:i] {
			if prev == a.Name {
				return tg.fail(ErrInvalid, "Duplicate argument names for given function "+clip.String(st.Name)+" with argument names "+clip.String(strings.Join(argNames(st.Args), ", ")))
			}
		}
		names[i], given[i] = a.Name, a.Type
	}
	args, r := functionArgTypes(k, given)
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	ret, r := functionTypeReason(k, "Return type", st.ReturnType)
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	if len(names) == 0 {
		names = nil
	}
	f := &Function{Keyspace: k.Name, Name: st.Name, Kind: ScalarFunction, ArgNames: names, ArgTypes: args, ReturnType: ret,
		CalledOnNullInput: st.CalledOnNullInput, Language: st.Language, Body: st.Body}
	sig := f.Signature()
	tg.obj, tg.res.Name = qualifySignature(k.Name, sig), sig
	if old, exists := k.Function(sig); exists {
		switch {
		case old.Kind == AggregateFunction:
			return tg.fail(ErrInvalid, "Function '"+clip.String(st.Name)+"' cannot replace an aggregate")
		case st.IfNotExists:
			return tg.end(nil)
		case !st.OrReplace:
			return tg.fail(ErrAlreadyExists, "Function '"+clip.String(st.Name)+"' already exists")
		case old.CalledOnNullInput != f.CalledOnNullInput:
			directive := "RETURNS NULL ON NULL INPUT"
			if f.CalledOnNullInput {
				directive = "CALLED ON NULL INPUT"
			}
			return tg.fail(ErrInvalid, "Function '"+clip.String(st.Name)+"' must have "+directive+" directive")
		case !TypesEqual(old.ReturnType, f.ReturnType):
			return tg.fail(ErrInvalid, "Cannot replace function '"+clip.String(st.Name)+"', the new return type "+clip.String(typeString(f.ReturnType))+
				" is not compatible with the return type "+clip.String(typeString(old.ReturnType))+" of existing function")
		}
	}
	if r := validateFunction(f); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putFunction(k, f), Diff{Changes: []Change{{Op: OpPutFunction, Keyspace: k.Name, Name: sig, FunctionValue: f}}}, tg.res, nil
}

// argNames lists the names of args.
func argNames(args []FunctionArg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.Name
	}
	return out
}

// CreateAggregate is CREATE [OR REPLACE] AGGREGATE [IF NOT EXISTS].
type CreateAggregate struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the aggregate name.
	Name string
	// OrReplace replaces an aggregate of the same signature, which must
	// return the same type.
	OrReplace bool
	// IfNotExists makes creating an existing aggregate a no-op.
	IfNotExists bool
	// ArgTypes are the argument types in order.
	ArgTypes []Type
	// StateFunc is SFUNC, a function of the keyspace.
	StateFunc string
	// StateType is STYPE.
	StateType Type
	// FinalFunc is FINALFUNC; empty when there is none.
	FinalFunc string
	// InitCond is the INITCOND term as CQL text; empty when there is none.
	InitCond string
}

// Kind returns "CREATE AGGREGATE".
func (*CreateAggregate) Kind() string { return "CREATE AGGREGATE" }

// Object returns "keyspace.aggregate", or the aggregate alone when the
// keyspace is left to the default.
func (st *CreateAggregate) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *CreateAggregate) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	tg, err := functionTarget(s, env, st.Kind(), st.Keyspace, st.Name, false, func(ks string) string {
		return "Keyspace '" + clip.String(ks) + "' doesn't exist"
	})
	if tg.k == nil {
		return tg.end(err)
	}
	k := tg.k
	if st.OrReplace && st.IfNotExists {
		return tg.fail(ErrInvalid, bothDirectives)
	}
	if r := functionNameReason("aggregate", st.Name); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	args, r := functionArgTypes(k, st.ArgTypes)
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	stype, r := functionTypeReason(k, "State type", st.StateType)
	if r != "" {
		return tg.fail(ErrInvalid, r)
	}
	a := &Function{Keyspace: k.Name, Name: st.Name, Kind: AggregateFunction, ArgTypes: args, StateFunc: st.StateFunc, StateType: stype, FinalFunc: st.FinalFunc}
	sig := a.Signature()
	tg.obj, tg.res.Name = qualifySignature(k.Name, sig), sig
	stateArgs := append([]Type{stype}, args...)
	stateName := clip.String(k.Name) + "." + clip.String(st.StateFunc) + "(" + clip.String(joinTypes(stateArgs)) + ")"
	sf, ok := k.Function(a.stateSignature())
	switch {
	case !ok:
		return tg.fail(ErrInvalid, "State function "+stateName+" doesn't exist")
	case sf.Kind != ScalarFunction:
		return tg.fail(ErrInvalid, "State function "+stateName+" isn't a scalar function")
	case !TypesEqual(sf.ReturnType, stype):
		return tg.fail(ErrInvalid, "State function "+stateName+" return type must be the same as the first argument type - check STYPE, argument and return types")
	}
	a.ReturnType = stype
	if st.FinalFunc != "" {
		finalName := clip.String(k.Name) + "." + clip.String(st.FinalFunc) + "(" + clip.String(typeString(stype)) + ")"
		ff, ok := k.Function(a.finalSignature())
		switch {
		case !ok:
			return tg.fail(ErrInvalid, "Final function "+finalName+" doesn't exist")
		case ff.Kind != ScalarFunction:
			return tg.fail(ErrInvalid, "Final function "+finalName+" isn't a scalar function")
		}
		a.ReturnType = ff.ReturnType
	}
	if st.InitCond != "" {
		if a.InitCond, r = canonicalLiteralIn(st.InitCond, stype, k.UserType); r != "" {
			return tg.fail(ErrInvalid, "Invalid value for INITCOND of type "+clip.String(typeString(stype))+": "+r)
		}
	}
	if !sf.CalledOnNullInput && a.InitCond == "" {
		return tg.fail(ErrInvalid, "Cannot create aggregate '"+clip.String(st.Name)+"' without INITCOND because state function "+clip.String(k.Name)+"."+clip.String(st.StateFunc)+" does not accept 'null' arguments")
	}
	if old, exists := k.Function(sig); exists {
		switch {
		case old.Kind != AggregateFunction:
			return tg.fail(ErrInvalid, "Aggregate '"+clip.String(st.Name)+"' cannot replace a function")
		case st.IfNotExists:
			return tg.end(nil)
		case !st.OrReplace:
			return tg.fail(ErrAlreadyExists, "Aggregate '"+clip.String(st.Name)+"' already exists")
		case !TypesEqual(old.ReturnType, a.ReturnType):
			return tg.fail(ErrInvalid, "Cannot replace aggregate '"+clip.String(st.Name)+"', the new return type "+clip.String(typeString(a.ReturnType))+
				" isn't compatible with the return type "+clip.String(typeString(old.ReturnType))+" of existing function")
		}
	}
	if r := validateFunction(a); r != "" {
		return tg.fail(ErrInvalid, r)
	}
	tg.res.Applied = true
	return s.putFunction(k, a), Diff{Changes: []Change{{Op: OpPutFunction, Keyspace: k.Name, Name: sig, FunctionValue: a}}}, tg.res, nil
}

// DropFunction is DROP FUNCTION [IF EXISTS] name [(types)]. It fails while
// an aggregate uses the function.
type DropFunction struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the function name.
	Name string
	// IfExists makes dropping a missing function a no-op.
	IfExists bool
	// ArgTypes are the argument types naming one overload, when ArgsGiven.
	ArgTypes []Type
	// ArgsGiven is set when the statement lists argument types (maybe
	// none: "f()"); without them the name must not be overloaded.
	ArgsGiven bool
}

// Kind returns "DROP FUNCTION".
func (*DropFunction) Kind() string { return "DROP FUNCTION" }

// Object returns "keyspace.function", or the function alone when the
// keyspace is left to the default.
func (st *DropFunction) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *DropFunction) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	return dropFunction(s, env, st.Kind(), "FUNCTION", ScalarFunction, st.Keyspace, st.Name, st.IfExists, st.ArgTypes, st.ArgsGiven)
}

// DropAggregate is DROP AGGREGATE [IF EXISTS] name [(types)].
type DropAggregate struct {
	// Keyspace is the keyspace; empty means Env.DefaultKeyspace.
	Keyspace string
	// Name is the aggregate name.
	Name string
	// IfExists makes dropping a missing aggregate a no-op.
	IfExists bool
	// ArgTypes are the argument types naming one overload, when ArgsGiven.
	ArgTypes []Type
	// ArgsGiven is set when the statement lists argument types.
	ArgsGiven bool
}

// Kind returns "DROP AGGREGATE".
func (*DropAggregate) Kind() string { return "DROP AGGREGATE" }

// Object returns "keyspace.aggregate", or the aggregate alone when the
// keyspace is left to the default.
func (st *DropAggregate) Object() string { return qualify(st.Keyspace, st.Name) }

func (st *DropAggregate) apply(s Schema, env Env) (Schema, Diff, Result, error) {
	return dropFunction(s, env, st.Kind(), "AGGREGATE", AggregateFunction, st.Keyspace, st.Name, st.IfExists, st.ArgTypes, st.ArgsGiven)
}

// dropFunction is DROP FUNCTION and DROP AGGREGATE (word), which drop a
// function or aggregate (kind) by name, and by argument types when
// argsGiven. As in Cassandra, a name without types must not be
// overloaded, by functions or aggregates.
func dropFunction(s Schema, env Env, stmt, word string, kind FunctionKind, ks, name string, ifExists bool, given []Type, argsGiven bool) (Schema, Diff, Result, error) {
	noun := strings.ToUpper(word[:1]) + strings.ToLower(word[1:])
	resolved := resolveKeyspace(ks, env)
	display := clip.String(resolved) + "." + clip.String(name)
	if argsGiven {
		display += "(" + clip.String(joinTypes(given)) + ")"
	}
	missing := func(string) string { return noun + " '" + display + "' doesn't exist" }
	tg, err := functionTarget(s, env, stmt, ks, name, ifExists, missing)
	if tg.k == nil {
		return tg.end(err)
	}
	k := tg.k
	overloads := k.FunctionsNamed(name)
	if len(overloads) > 1 && !argsGiven {
		n := clip.String(name)
		return tg.fail(ErrInvalid, "'DROP "+word+" "+n+"' matches multiple function definitions; specify the argument types by issuing a statement like 'DROP "+
			word+" "+n+" (type, type, ...)'. You can use cqlsh 'DESCRIBE "+word+" "+n+"' command to find all overloads")
	}
	var args []Type
	if argsGiven {
		var r string
		if args, r = functionArgTypes(k, given); r != "" {
			return tg.fail(ErrInvalid, r)
		}
	}
	var f *Function
	for _, o := range overloads {
		if o.Kind == kind && (!argsGiven || o.Signature() == FunctionSignature(name, args)) {
			f = o
			break
		}
	}
	if f == nil {
		if ifExists {
			return tg.end(nil)
		}
		return tg.fail(ErrNotFound, missing(""))
	}
	sig := f.Signature()
	tg.obj, tg.res.Name = qualifySignature(k.Name, sig), sig
	if users := k.functionUsers(sig, 4); len(users) > 0 {
		for i := range users {
			users[i] = clip.String(k.Name) + "." + clip.String(users[i])
		}
		list := strings.Join(users[:min(3, len(users))], ", ")
		if len(users) > 3 {
			list += ", ..."
		}
		return tg.fail(ErrInvalid, noun+" '"+clip.String(k.Name)+"."+clip.String(sig)+"' is still referenced by aggregates "+list)
	}
	tg.res.Applied = true
	return s.deleteFunction(k, f), Diff{Changes: []Change{{Op: OpDropFunction, Keyspace: k.Name, Name: sig}}}, tg.res, nil
}
