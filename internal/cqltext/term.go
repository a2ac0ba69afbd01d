package cqltext

import "strings"

// Term is a CQL term (Parser.g's term): a constant, null, an identifier,
// a collection, a tuple or a user type literal, and in canonical text a
// function call, an operation, a negation or a type hint. The parser
// builds them from tokens (a property value, a mask's argument), Read
// and ReadCanonical from text (an INITCOND, a view's WHERE terms).
type Term struct {
	// Kind says what the term is.
	Kind Kind
	// Text is the value of a string (unquoted) or the name of an
	// identifier; the text of another constant ("null" for null); a
	// function's [keyspace.]name, an operation's operator, a hint's type.
	Text string
	// Elems are the elements of a list, set or tuple; the keys and values
	// of a map or a user type literal, alternating (a user type literal's
	// keys are identifiers); a function's arguments, an operation's two
	// operands, the operand of a negation or a hint.
	Elems []Term
}

// Kind classifies a Term.
type Kind byte

// Term kinds. Their values are the letters the model has always used for
// them; nothing stores them.
const (
	// KindString is a string constant; Text is its value, unescaped.
	KindString Kind = 's'
	// KindInteger is an integer constant; Text is its digits, with a sign.
	KindInteger Kind = 'i'
	// KindFloat is a float constant (with a point or an exponent, or NaN
	// or Infinity).
	KindFloat Kind = 'f'
	// KindBoolean is true or false.
	KindBoolean Kind = 'b'
	// KindUUID is a UUID constant.
	KindUUID Kind = 'u'
	// KindBlob is a 0x... blob constant.
	KindBlob Kind = 'x'
	// KindDuration is a duration constant, such as 1h30m or P1D.
	KindDuration Kind = 'D'
	// KindNull is null.
	KindNull Kind = 'n'
	// KindIdentifier is a name: a user type literal's field, or a word
	// of a lenient term.
	KindIdentifier Kind = 'w'
	// KindList is [e, ...].
	KindList Kind = 'l'
	// KindSet is {e, ...}.
	KindSet Kind = 'e'
	// KindMap is {k: v, ...}. An empty {} is a KindMap, which a set also
	// takes.
	KindMap Kind = 'm'
	// KindTuple is (e, ...).
	KindTuple Kind = 't'
	// KindUserType is {field: v, ...}, only in canonical text, where
	// {field: v} and {'k': v} differ; the lenient reader reads both as a
	// map.
	KindUserType Kind = 'd'
	// KindFunction is [keyspace.]name(arg, ...), only in canonical text.
	KindFunction Kind = 'F'
	// KindOperation is a + b (or -, *, /, %), only in canonical text.
	KindOperation Kind = 'o'
	// KindNegation is -term, only in canonical text.
	KindNegation Kind = 'N'
	// KindHint is (type)term, only in canonical text.
	KindHint Kind = 'h'
)

// IsExpression reports whether k is that of an expression: a function
// call, an operation, a negation or a type hint.
func (k Kind) IsExpression() bool {
	return k == KindFunction || k == KindOperation || k == KindNegation || k == KindHint
}

// MaxNesting bounds the nesting of collections, tuples, user type
// literals and expressions in a term: an element, an argument, an operand
// of each operator and the term of a hint each count one.
const MaxNesting = 16

// errTooDeep is the reason Write gives for a term nested past MaxNesting.
const errTooDeep = "value is nested too deeply"

// String returns t as canonical CQL text, which reads back to an equal
// term (as far as Write writes it).
func (t Term) String() string {
	var b strings.Builder
	Write(&b, t, 0)
	return b.String()
}

// Write writes t in canonical form, without a type to check it against,
// or returns why it cannot: t is nested at depth levels already, and a
// term nested past MaxNesting is refused before any of it is written.
func Write(b *strings.Builder, t Term, depth int) string {
	if depth > MaxNesting {
		return errTooDeep
	}
	switch t.Kind {
	case KindString:
		b.WriteString(QuoteString(t.Text))
	case KindIdentifier:
		b.WriteString(QuoteIdentifier(t.Text))
	case KindNull:
		b.WriteString("null")
	case KindFunction, KindOperation, KindNegation, KindHint:
		return writeExpression(b, t, depth)
	case KindList, KindSet, KindTuple, KindMap, KindUserType:
		return writeElems(b, t, depth)
	default:
		b.WriteString(t.Text)
	}
	return ""
}

// writeElems writes a collection, a tuple or a user type literal.
func writeElems(b *strings.Builder, t Term, depth int) string {
	open, closing := "{", "}"
	switch t.Kind {
	case KindList:
		open, closing = "[", "]"
	case KindTuple:
		open, closing = "(", ")"
	}
	pairs := t.Kind == KindMap || t.Kind == KindUserType
	b.WriteString(open)
	for i, e := range t.Elems {
		switch {
		case i > 0 && pairs && i%2 == 1:
			b.WriteString(": ")
		case i > 0:
			b.WriteString(", ")
		}
		if r := Write(b, e, depth+1); r != "" {
			return r
		}
	}
	b.WriteString(closing)
	return ""
}

// writeExpression writes expression t in canonical text.
func writeExpression(b *strings.Builder, t Term, depth int) string {
	if t.Kind == KindOperation && len(t.Elems) != 2 || (t.Kind == KindNegation || t.Kind == KindHint) && len(t.Elems) != 1 {
		return "malformed expression"
	}
	switch t.Kind {
	case KindFunction:
		b.WriteString(t.Text)
		b.WriteString("(")
		for i, e := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if r := Write(b, e, depth+1); r != "" {
				return r
			}
		}
		b.WriteString(")")
		return ""
	case KindOperation:
		if r := Write(b, t.Elems[0], depth+1); r != "" {
			return r
		}
		b.WriteString(" " + t.Text + " ")
		return Write(b, t.Elems[1], depth+1)
	case KindNegation:
		b.WriteString("-")
	default:
		b.WriteString("(" + t.Text + ")")
	}
	return Write(b, t.Elems[0], depth+1)
}
