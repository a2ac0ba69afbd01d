package describe

import (
	"strings"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/schema"
)

// Function returns the CREATE FUNCTION or CREATE AGGREGATE
// statement of f, in the layout of Cassandra's DESCRIBE:
//
//	CREATE FUNCTION ks.f(a int, b text)
//	    CALLED ON NULL INPUT
//	    RETURNS int
//	    LANGUAGE java
//	    AS $$return a;$$;
//
//	CREATE AGGREGATE ks.agg(int)
//	    SFUNC f
//	    STYPE int
//	    FINALFUNC g
//	    INITCOND 0;
//
// A body that $$...$$ cannot hold (one containing "$$" or ending in "$")
// is printed as a '...' string instead, so that the output parses back.
func Function(f *schema.Function) string {
	var b strings.Builder
	writeFunction(&b, f)
	return b.String()
}

// FunctionsNamed returns the CREATE FUNCTION and CREATE AGGREGATE
// statements of every function and aggregate of k named name (each
// overload, functions first), as cqlsh's DESCRIBE FUNCTION prints all the
// overloads of a name; "" when there is none.
func FunctionsNamed(k *schema.Keyspace, name string) string {
	var b strings.Builder
	fs := k.FunctionsNamed(name)
	for _, kind := range [...]schema.FunctionKind{schema.ScalarFunction, schema.AggregateFunction} {
		for _, f := range fs {
			if f.Kind == kind {
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				writeFunction(&b, f)
			}
		}
	}
	return b.String()
}

// writeFunctions writes the functions of k, then its aggregates, each
// in signature order, each preceded by an empty line.
func writeFunctions(b *strings.Builder, k *schema.Keyspace) {
	if k.FunctionCount() == 0 {
		return
	}
	all := k.Functions()
	for _, kind := range [...]schema.FunctionKind{schema.ScalarFunction, schema.AggregateFunction} {
		for _, f := range all {
			if f.Kind == kind {
				b.WriteString("\n")
				writeFunction(b, f)
			}
		}
	}
}

// writeFunction writes what Function returns.
func writeFunction(b *strings.Builder, f *schema.Function) {
	b.WriteString("CREATE ")
	b.WriteString(strings.ToUpper(f.Kind.String()))
	b.WriteString(" ")
	b.WriteString(cqltext.QuoteIdentifier(f.Keyspace))
	b.WriteString(".")
	b.WriteString(cqltext.QuoteIdentifier(f.Name))
	b.WriteString("(")
	for i, t := range f.ArgTypes {
		if i > 0 {
			b.WriteString(", ")
		}
		if f.Kind == schema.ScalarFunction {
			b.WriteString(cqltext.QuoteIdentifier(f.ArgNames[i]))
			b.WriteString(" ")
		}
		b.WriteString(typeString(t))
	}
	b.WriteString(")\n")
	if f.Kind == schema.AggregateFunction {
		b.WriteString("    SFUNC ")
		b.WriteString(cqltext.QuoteIdentifier(f.StateFunc))
		b.WriteString("\n    STYPE ")
		b.WriteString(typeString(f.StateType))
		if f.FinalFunc != "" {
			b.WriteString("\n    FINALFUNC ")
			b.WriteString(cqltext.QuoteIdentifier(f.FinalFunc))
		}
		if f.InitCond != "" {
			b.WriteString("\n    INITCOND ")
			b.WriteString(f.InitCond)
		}
		b.WriteString(";\n")
		return
	}
	if f.CalledOnNullInput {
		b.WriteString("    CALLED ON NULL INPUT\n")
	} else {
		b.WriteString("    RETURNS NULL ON NULL INPUT\n")
	}
	b.WriteString("    RETURNS ")
	b.WriteString(typeString(f.ReturnType))
	b.WriteString("\n    LANGUAGE ")
	b.WriteString(f.Language)
	b.WriteString("\n    AS ")
	if strings.Contains(f.Body, "$$") || strings.HasSuffix(f.Body, "$") {
		b.WriteString(cqltext.QuoteString(f.Body))
	} else {
		b.WriteString("$$")
		b.WriteString(f.Body)
		b.WriteString("$$")
	}
	b.WriteString(";\n")
}
