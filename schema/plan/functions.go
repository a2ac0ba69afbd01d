package plan

import (
	"bytes"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// Reasons a function or aggregate is dropped and created again rather
// than replaced, naming Cassandra's rule.
const (
	ruleFunctionReplace  = "Cassandra's CREATE OR REPLACE keeps a function's return type and its null-input directive"
	ruleAggregateReplace = "Cassandra's CREATE OR REPLACE keeps an aggregate's return type"
	ruleFunctionKind     = "a function and an aggregate cannot replace each other"
	ruleFunctionInUse    = "a function cannot be dropped while an aggregate uses it, nor a type while a function uses it (Cassandra refuses DROP FUNCTION and DROP TYPE), so what uses a recreated one is recreated too"
)

// functionPlan is what happens to the functions and aggregates of one
// keyspace, by signature: the current ones dropped, the desired ones
// created (new or recreated) or replaced in place (CREATE OR REPLACE).
// Its zero value plans nothing; analyze fills it from the keyspace's
// plan, once its types are decided, and emitDrops and emit plan its
// statements.
type functionPlan struct {
	drop, create, replace map[string]bool
}

// analyze decides, once the types are decided, what happens to
// each function and aggregate. A desired one the current keyspace lacks
// is created; one that differs is replaced with CREATE OR REPLACE when
// Cassandra allows it (same kind, same return type and, for a function,
// the same null-input directive) and otherwise dropped and created again
// with a warning. A current one the desired keyspace lacks is dropped with
// Prune and kept otherwise. Then, to a fixed point, whatever uses a
// dropped one is recreated: a function or aggregate using a recreated
// type, an aggregate using a dropped function (a kept one that would have
// to be is reported as impossible).
func (fp *functionPlan) analyze(kp *ksPlan) {
	ks := kp.want.Name
	for _, f := range kp.want.Functions() {
		sig := f.Signature()
		old, ok := kp.cur.Function(sig)
		switch {
		case !ok:
			mark(&fp.create, sig)
		case sameFunction(old, f):
		case old.Kind == f.Kind && schema.TypesEqual(old.ReturnType, f.ReturnType) && (f.Kind == schema.AggregateFunction || old.CalledOnNullInput == f.CalledOnNullInput):
			mark(&fp.replace, sig)
		default:
			mark(&fp.drop, sig)
			mark(&fp.create, sig)
			kp.p.note("%s %s changes %s: it is dropped and created again (%s)", f.Kind, functionName(ks, sig), functionChange(old, f), replaceRule(old, f))
		}
	}
	for _, f := range kp.cur.Functions() {
		sig := f.Signature()
		if _, ok := kp.want.Function(sig); ok {
			continue
		}
		if kp.p.opt.Prune {
			mark(&fp.drop, sig)
		} else {
			kp.p.note("%s %s is not in the desired schema: kept (--prune drops it)", f.Kind, functionName(ks, sig))
		}
	}
	for changed := true; changed; {
		changed = false
		for _, f := range kp.cur.Functions() {
			sig := f.Signature()
			if fp.drop[sig] {
				continue
			}
			why := fp.goingUse(kp, f)
			if why == "" {
				continue
			}
			if _, inWant := kp.want.Function(sig); !inWant {
				kp.p.cannot(functionName(ks, sig), "it "+why+", and the desired schema lacks it: "+ruleKeptTypeUse, false)
				continue
			}
			mark(&fp.drop, sig)
			mark(&fp.create, sig)
			delete(fp.replace, sig)
			kp.p.note("%s %s %s: it is dropped and created again (%s)", f.Kind, functionName(ks, sig), why, ruleFunctionInUse)
			changed = true
		}
	}
}

// goingUse says how f uses a type or function the plan drops ("uses type
// ks.t, which is recreated"), or "".
func (fp *functionPlan) goingUse(kp *ksPlan, f *schema.Function) string {
	for _, t := range functionTypes(f) {
		if used := goingRef(kp, t); used != "" {
			return "uses type " + typeName(kp.want.Name, used) + ", which is recreated"
		}
	}
	for _, sig := range usedFunctions(f) {
		if fp.drop[sig] {
			return "uses function " + functionName(kp.want.Name, sig) + ", which is dropped"
		}
	}
	return ""
}

// functionTypes lists the types f's signature, result and state use.
func functionTypes(f *schema.Function) []schema.Type {
	out := append([]schema.Type{f.ReturnType}, f.ArgTypes...)
	if f.StateType != nil {
		out = append(out, f.StateType)
	}
	return out
}

// usedFunctions lists the signatures of the functions aggregate f uses.
func usedFunctions(f *schema.Function) []string {
	if f.Kind != schema.AggregateFunction {
		return nil
	}
	out := []string{schema.FunctionSignature(f.StateFunc, append([]schema.Type{f.StateType}, f.ArgTypes...))}
	if f.FinalFunc != "" {
		out = append(out, schema.FunctionSignature(f.FinalFunc, []schema.Type{f.StateType}))
	}
	return out
}

// sameFunction reports whether a and b are the same definition.
func sameFunction(a, b *schema.Function) bool {
	return bytes.Equal(schema.AppendFunction(nil, a), schema.AppendFunction(nil, b))
}

// functionChange says what makes want unable to replace cur in place.
func functionChange(cur, want *schema.Function) string {
	switch {
	case cur.Kind != want.Kind:
		return "from " + cur.Kind.String() + " to " + want.Kind.String()
	case !schema.TypesEqual(cur.ReturnType, want.ReturnType):
		return "its return type from " + cur.ReturnType.String() + " to " + want.ReturnType.String()
	}
	return "from " + nullInput(cur) + " to " + nullInput(want)
}

// replaceRule is the rule functionChange's change breaks.
func replaceRule(cur, want *schema.Function) string {
	switch {
	case cur.Kind != want.Kind:
		return ruleFunctionKind
	case want.Kind == schema.AggregateFunction:
		return ruleAggregateReplace
	}
	return ruleFunctionReplace
}

// nullInput is a function's null-input directive.
func nullInput(f *schema.Function) string {
	if f.CalledOnNullInput {
		return "CALLED ON NULL INPUT"
	}
	return "RETURNS NULL ON NULL INPUT"
}

// functionName is ks.signature, quoted, for messages.
func functionName(ks, sig string) string { return q(ks) + "." + clip.String(sig) }

// emitDrops plans DROP AGGREGATE then DROP FUNCTION for the
// current ones dropped, each in signature order, after the tables and
// before the types they use.
func (fp *functionPlan) emitDrops(kp *ksPlan) {
	all := kp.cur.Functions()
	for _, kind := range [...]schema.FunctionKind{schema.AggregateFunction, schema.ScalarFunction} {
		for _, f := range all {
			if f.Kind == kind && fp.drop[f.Signature()] {
				kp.p.emit(phaseDropFunctions, dropFunction(f), false, "")
			}
		}
	}
}

// emit plans the desired functions, then (in the next phase) the
// aggregates, created or replaced, each in signature order, after the
// types they use.
func (fp *functionPlan) emit(kp *ksPlan) {
	for _, f := range kp.want.Functions() {
		ph := phaseFunctions
		if f.Kind == schema.AggregateFunction {
			ph = phaseAggregates
		}
		sig := f.Signature()
		switch {
		case fp.create[sig]:
			kp.p.emit(ph, statementOf(describe.Function(f)), false, "")
		case fp.replace[sig]:
			kp.p.emit(ph, "CREATE OR REPLACE "+strings.TrimPrefix(statementOf(describe.Function(f)), "CREATE "), false, "")
		}
	}
}

// dropFunction is DROP FUNCTION or DROP AGGREGATE of f, with its argument
// types, so that it names one overload.
func dropFunction(f *schema.Function) string {
	var b strings.Builder
	b.WriteString("DROP ")
	b.WriteString(strings.ToUpper(f.Kind.String()))
	b.WriteString(" ")
	b.WriteString(q(f.Keyspace))
	b.WriteString(".")
	b.WriteString(q(f.Name))
	b.WriteString("(")
	for i, t := range f.ArgTypes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
	b.WriteString(")")
	return b.String()
}
