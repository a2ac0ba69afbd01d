package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// A materialized view's WHERE terms are Cassandra's Parser.g term, kept
// in the canonical text cqltext.ReadCanonical reads and cqltext.Write
// writes, with a type hint's type as Type.String writes it (typeLen).
//
// CREATE MATERIALIZED VIEW checks them as Cassandra prepares a term for
// its column (the receiver): a hint's term against the hint's type (a
// type a column could have), which the column must read (TypeCast); a function's arguments against its
// parameters and its return type against the column (FunctionCall.Raw);
// an operation's operands against the column's type, the right operand of
// a timestamp or date plus or minus a duration. The functions are
// Cassandra's native ones of fixed signatures (whereFunctions); other
// native functions and user-defined ones are refused, the latter because
// DROP FUNCTION would then have to keep a view's WHERE clause from
// breaking.

// typeLen returns the length of the type at the start of s when it is
// written as Type.String writes it, else 0: cqltext.ReadCanonical's test
// for a type hint.
func typeLen(s string) int {
	_, n := scanType(s, 0)
	return n
}

// scanType reads a type at the start of s in Type.String's form and
// returns it and its length, or n 0 when s does not start with one.
func scanType(s string, depth int) (Type, int) {
	t, n := scanTypeLoose(s, depth)
	if n == 0 || t.String() != s[:n] {
		return nil, 0
	}
	return t, n
}

// scanTypeLoose reads a type at the start of s: a native type, a
// collection, frozen, tuple or vector type, or a user type, maybe
// qualified; scanType checks that it is written as Type.String writes it.
func scanTypeLoose(s string, depth int) (Type, int) {
	if depth >= MaxTypeDepth {
		return nil, 0
	}
	name, n := cqltext.ScanIdentifier(s)
	if n == 0 {
		return nil, 0
	}
	if s[0] != '"' {
		if n < len(s) && s[n] == '<' {
			return scanTypeParams(s, name, n+1, depth)
		}
		if nt, ok := NativeTypeByName(name); ok {
			return nt, n
		}
	}
	ref := UserTypeRef{Name: name}
	if n < len(s) && s[n] == '.' {
		if tn, m := cqltext.ScanIdentifier(s[n+1:]); m > 0 {
			ref = UserTypeRef{Keyspace: name, Name: tn}
			n += 1 + m
		}
	}
	return ref, n
}

// scanTypeParams reads the parameters of type constructor ctor from s[i:]
// (after its '<') up to its '>'.
func scanTypeParams(s, ctor string, i, depth int) (Type, int) {
	var params []Type
	dimension := -1
	for {
		if ctor == "vector" && len(params) == 1 {
			d := 0
			for i+d < len(s) && s[i+d] >= '0' && s[i+d] <= '9' {
				d++
			}
			n, err := strconv.Atoi(s[i : i+d])
			if d == 0 || err != nil {
				return nil, 0
			}
			dimension, i = n, i+d
		} else {
			t, n := scanTypeLoose(s[i:], depth+1)
			if n == 0 {
				return nil, 0
			}
			params, i = append(params, t), i+n
		}
		if strings.HasPrefix(s[i:], ", ") {
			i += 2
			continue
		}
		if i >= len(s) || s[i] != '>' {
			return nil, 0
		}
		i++
		break
	}
	switch {
	case (ctor == "list" || ctor == "set" || ctor == "frozen") && len(params) == 1:
		switch ctor {
		case "list":
			return ListType{Elem: params[0]}, i
		case "set":
			return SetType{Elem: params[0]}, i
		}
		return FrozenType{Inner: params[0]}, i
	case ctor == "map" && len(params) == 2:
		return MapType{Key: params[0], Value: params[1]}, i
	case ctor == "tuple" && len(params) > 0:
		return TupleType{Elems: params}, i
	case ctor == "vector" && len(params) == 1 && dimension >= 0:
		return VectorType{Elem: params[0], Dimension: dimension}, i
	}
	return nil, 0
}

// expression checks a view WHERE expression against the column's type t
// (see the top of this file).
func (c whereRules) expression(b *strings.Builder, v cqltext.Term, t Type, what string, depth int) string {
	switch v.Kind {
	case cqltext.KindHint:
		return c.hintExpression(b, v, t, what, depth)
	case cqltext.KindFunction:
		return c.functionCall(b, v, t, what, depth)
	}
	return c.operation(b, v, t, what, depth)
}

// hintExpression checks "(type)term" as Cassandra's TypeCast: the term
// must be of the type, and the column must read values of the type.
func (c whereRules) hintExpression(b *strings.Builder, v cqltext.Term, t Type, what string, depth int) string {
	ht, _ := scanType(v.Text, 0)
	if ht == nil {
		return "malformed type hint " + clip.String(v.Text)
	}
	ht, r := normalizeType(ht, c.k.Name)
	if r == "" {
		r = validateType(ht, 0)
	}
	if r != "" {
		return "type hint " + clip.String(v.Text) + ": " + r
	}
	for _, name := range typeRefs(nil, ht) {
		if _, ok := c.k.UserType(name); !ok {
			return "Unknown type " + clip.String(c.k.Name+"."+name)
		}
	}
	var inner strings.Builder
	if r := checkLiteral(&inner, v.Elems[0], ht, c, what, depth+1); r != "" {
		return "Cannot cast value " + clip.String(v.Elems[0].String()) + " to type " + typeString(ht)
	}
	if !valueCompatible(expandUserTypes(t, c.k, 0), expandUserTypes(ht, c.k, 0)) {
		return "Cannot assign value " + clip.String(v.String()) + " to " + clip.String(what) + " of type " + typeString(t)
	}
	b.WriteString("(" + v.Text + ")")
	b.WriteString(inner.String())
	return ""
}

// operation checks an operation or a negation against the column's type
// t: both operands of a numeric type's operation are of that type, a
// timestamp or a date takes + or - a duration, text and ascii take +
// (concatenation), and a number or a duration can be negated.
func (c whereRules) operation(b *strings.Builder, v cqltext.Term, t Type, what string, depth int) string {
	base, _ := baseType(t).(NativeType)
	numeric := numericTypes[base]
	refuse := "Type error: cannot assign result of operation " + v.Text + " to " + clip.String(what) + " (type " + typeString(t) + ")"
	if v.Kind == cqltext.KindNegation {
		if !numeric && base != TypeDuration {
			return refuse
		}
		b.WriteString("-")
		return checkLiteral(b, v.Elems[0], t, c, what, depth+1)
	}
	right := t
	switch {
	case numeric:
	case (base == TypeTimestamp || base == TypeDate) && (v.Text == "+" || v.Text == "-"):
		right = TypeDuration
	case (base == TypeText || base == TypeAscii) && v.Text == "+":
	default:
		return refuse
	}
	if r := checkLiteral(b, v.Elems[0], t, c, what, depth+1); r != "" {
		return r
	}
	b.WriteString(" " + v.Text + " ")
	return checkLiteral(b, v.Elems[1], right, c, what, depth+1)
}

// numericTypes are the types arithmetic takes.
var numericTypes = map[NativeType]bool{TypeTinyint: true, TypeSmallint: true, TypeInt: true, TypeBigint: true, TypeVarint: true, TypeFloat: true, TypeDouble: true, TypeDecimal: true}

// signature is one signature of a native function.
type signature struct {
	args []Type
	ret  Type
}

// describe returns the signature of function name as
// "system.name(args) -> ret".
func (s signature) describe(name string) string {
	parts := make([]string, len(s.args))
	for i, a := range s.args {
		parts[i] = typeString(a)
	}
	return "system." + name + "(" + strings.Join(parts, ", ") + ") -> " + typeString(s.ret)
}

// whereFunctions are Cassandra's native scalar functions of fixed
// signatures that a view's WHERE clause may call, by name: the time and
// UUID functions, the math functions and the blob conversions.
var whereFunctions = func() map[string][]signature {
	fs := map[string][]signature{
		"now":              {{ret: TypeTimeuuid}},
		"currenttimeuuid":  {{ret: TypeTimeuuid}},
		"currenttimestamp": {{ret: TypeTimestamp}},
		"currentdate":      {{ret: TypeDate}},
		"currenttime":      {{ret: TypeTime}},
		"uuid":             {{ret: TypeUUID}},
		"mintimeuuid":      {{args: []Type{TypeTimestamp}, ret: TypeTimeuuid}},
		"maxtimeuuid":      {{args: []Type{TypeTimestamp}, ret: TypeTimeuuid}},
		"totimestamp":      {{args: []Type{TypeTimeuuid}, ret: TypeTimestamp}, {args: []Type{TypeDate}, ret: TypeTimestamp}},
		"todate":           {{args: []Type{TypeTimeuuid}, ret: TypeDate}, {args: []Type{TypeTimestamp}, ret: TypeDate}},
		"tounixtimestamp":  {{args: []Type{TypeTimeuuid}, ret: TypeBigint}, {args: []Type{TypeTimestamp}, ret: TypeBigint}, {args: []Type{TypeDate}, ret: TypeBigint}},
	}
	for _, name := range []string{"abs", "exp", "log", "log10", "round"} {
		for _, t := range []NativeType{TypeTinyint, TypeSmallint, TypeInt, TypeBigint, TypeFloat, TypeDouble, TypeVarint, TypeDecimal} {
			fs[name] = append(fs[name], signature{args: []Type{t}, ret: t})
		}
	}
	for t := TypeAscii; t <= maxNativeType; t++ {
		if t == TypeBlob || t.String() == "" {
			continue
		}
		fs[t.String()+"asblob"] = []signature{{args: []Type{t}, ret: TypeBlob}}
		fs["blobas"+t.String()] = []signature{{args: []Type{TypeBlob}, ret: t}}
	}
	return fs
}()

// aggregateFunctions are Cassandra's native aggregates.
var aggregateFunctions = map[string]bool{"count": true, "min": true, "max": true, "sum": true, "avg": true}

// functionCall checks a function call as Cassandra's FunctionCall.Raw and
// FunctionResolver do: a known native function, a signature its
// arguments fit (among several, the one returning the column's type), and
// a return type the column reads.
func (c whereRules) functionCall(b *strings.Builder, v cqltext.Term, t Type, what string, depth int) string {
	ks, name := splitFunctionName(v.Text)
	written := name
	if ks != "" {
		written = ks + "." + name
	}
	native := ks == "" || ks == "system"
	sigs, known := whereFunctions[name]
	udfs := len(c.k.FunctionsNamed(name)) > 0
	switch {
	case native && aggregateFunctions[name]:
		return "Aggregation function are not supported in the where clause"
	case ks == c.k.Name && !udfs:
		return "Unknown function " + clip.String(written) + " called"
	case !native || !known && udfs:
		return "user-defined functions in the WHERE clause of a materialized view are not supported (" + clip.String(written) + "): metalog would have to keep DROP FUNCTION from breaking the view"
	case !known && nativeFunctions[name]:
		return "native function " + clip.String(name) + " is not supported in the WHERE clause of a materialized view"
	case !known:
		return "Unknown function " + clip.String(written) + " called"
	}
	full := "system." + name
	var fits []signature
	var args []string
	reason := ""
	for _, sig := range sigs {
		if len(sig.args) != len(v.Elems) {
			continue
		}
		texts, r := c.arguments(v, sig, full, depth)
		if r != "" {
			if reason == "" {
				reason = r
			}
			continue
		}
		if fits = append(fits, sig); len(fits) == 1 || TypesEqual(sig.ret, baseType(t)) {
			args = texts
		}
	}
	if len(fits) > 1 {
		var best []signature
		for _, sig := range fits {
			if TypesEqual(sig.ret, baseType(t)) {
				best = append(best, sig)
			}
		}
		if len(best) != 1 {
			return "Ambiguous call to function " + full + " (can be matched by following signatures: " + describeSignatures(name, fits) + "): use type casts to disambiguate"
		}
		fits = best
	}
	switch {
	case len(fits) == 1:
	case len(sigs) == 1 && len(sigs[0].args) != len(v.Elems):
		return "Invalid number of arguments in call to function " + full + ": " + strconv.Itoa(len(sigs[0].args)) + " required but " + strconv.Itoa(len(v.Elems)) + " provided"
	case len(sigs) == 1:
		return reason
	default:
		return "Invalid call to function " + full + ", none of its type signatures match (known type signatures: " + describeSignatures(name, sigs) + ")"
	}
	if ret := fits[0].ret; !valueCompatible(expandUserTypes(t, c.k, 0), ret) {
		return "Type error: cannot assign result of function " + full + " (type " + typeString(ret) + ") to " + clip.String(what) + " (type " + typeString(t) + ")"
	}
	b.WriteString(v.Text + "(" + strings.Join(args, ", ") + ")")
	return ""
}

// arguments checks v's arguments against sig's parameters and returns
// their canonical texts, or Cassandra's refusal of the first that does not
// fit.
func (c whereRules) arguments(v cqltext.Term, sig signature, full string, depth int) ([]string, string) {
	texts := make([]string, len(v.Elems))
	for i, a := range v.Elems {
		var ab strings.Builder
		arg := "arg" + strconv.Itoa(i) + "(" + full + ")"
		if r := checkLiteral(&ab, a, sig.args[i], c, arg, depth+1); r != "" {
			return nil, "Type error: " + clip.String(a.String()) + " cannot be passed as argument " + strconv.Itoa(i) + " of function " + full + " of type " + typeString(sig.args[i])
		}
		texts[i] = ab.String()
	}
	return texts, ""
}

// describeSignatures lists sigs for messages.
func describeSignatures(name string, sigs []signature) string {
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = s.describe(name)
	}
	return strings.Join(parts, ", ")
}

// splitFunctionName splits a function's canonical name, [keyspace.]name,
// into its unquoted parts.
func splitFunctionName(text string) (ks, name string) {
	first, n := cqltext.ScanIdentifier(text)
	if n < len(text) && text[n] == '.' {
		second, _ := cqltext.ScanIdentifier(text[n+1:])
		return first, second
	}
	return "", first
}

// expression of an INITCOND: its reader never makes one.
func (initCondRules) expression(_ *strings.Builder, v cqltext.Term, _ Type, _ string, _ int) string {
	return "unexpected " + clip.String(v.String())
}

// expression of a mask argument: Literal has none.
func (maskRules) expression(_ *strings.Builder, v cqltext.Term, _ Type, _ string, _ int) string {
	return "unexpected " + clip.String(v.String())
}
