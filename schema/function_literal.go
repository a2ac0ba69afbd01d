package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/internal/cqltext"
)

// An aggregate's INITCOND is a CQL term of its state type. metalog checks
// its form against the type as far as the literal tells (a string for
// text, an integer in range for int, a list for a list, the fields of a
// user type, ...) and keeps it as canonical text: strings in single
// quotes, integers in decimal, the rest lowercase as written, collection
// elements separated by ", " and map entries by ": ". Values whose form
// says nothing more (a timestamp or an inet in a string) are not parsed.

// canonicalLiteral parses text, an INITCOND term, checks it against type
// t, and returns its canonical text, or the reason it is not a term of t.
// User types are checked through lookup when it is not nil (the keyspace's
// types), otherwise only their literal form is. A null term returns "".
func canonicalLiteral(text string, t Type) (string, string) {
	return canonicalLiteralIn(text, t, nil)
}

// canonicalLiteralIn is canonicalLiteral with the user type lookup.
func canonicalLiteralIn(text string, t Type, lookup func(string) (*UserType, bool)) (string, string) {
	v, r := cqltext.Read(text, ValidName)
	if r != "" {
		return "", "invalid literal " + clip.Quote(text) + ": " + r
	}
	if v.Kind == cqltext.KindNull {
		return "", ""
	}
	var b strings.Builder
	if reason := checkLiteral(&b, v, t, initCondRules{lookup}, "", 0); reason != "" {
		return "", "invalid value " + clip.Quote(text) + " for type " + clip.String(typeString(t)) + ": " + reason
	}
	return b.String(), ""
}

// initCondRules are the rules of an INITCOND: the constants each native
// type takes, integers in range, null but not inside a collection, user
// types checked when lookup finds them, in metalog's words.
type initCondRules struct {
	lookup func(string) (*UserType, bool)
}

func (initCondRules) native(b *strings.Builder, v cqltext.Term, t NativeType, _ string) string {
	return writeNative(b, v, t, func(what string) string { return "expected " + what + ", found " + litKindName(v.Kind) })
}

func (initCondRules) null(_ string, elem bool) string {
	if elem {
		return "null is not supported inside collections"
	}
	return ""
}

func (initCondRules) mismatch(v cqltext.Term, _ Type, _, want string) string {
	if want == "" {
		return "unknown type"
	}
	return "expected " + want + ", found " + litKindName(v.Kind)
}

func (initCondRules) vectorSize(v cqltext.Term, t VectorType, _ string) string {
	return "a vector of dimension " + strconv.Itoa(t.Dimension) + " needs " + strconv.Itoa(t.Dimension) + " elements, found " + strconv.Itoa(len(v.Elems))
}

func (initCondRules) tupleSize(t TupleType, n int, _ string) string {
	return "a " + clip.String(t.String()) + " has " + strconv.Itoa(len(t.Elems)) + " elements, found " + strconv.Itoa(n)
}

// userType takes a non-empty map for a user type literal; with a lookup,
// the fields must be the type's, and without, they are written unchecked.
func (c initCondRules) userType(v cqltext.Term, t UserTypeRef, _ Type, _ string) (*UserType, string) {
	if v.Kind != cqltext.KindMap || len(v.Elems) == 0 {
		return nil, "expected a user type literal {field: value, ...}, found " + litKindName(v.Kind)
	}
	var ut *UserType
	if c.lookup != nil {
		ut, _ = c.lookup(t.Name)
	}
	return ut, ""
}

func (initCondRules) fieldKey(v cqltext.Term, i int) string {
	k := v.Elems[2*i]
	if k.Kind != cqltext.KindIdentifier {
		return "a user type literal takes field names, found " + litKindName(k.Kind)
	}
	for j := 0; j < 2*i; j += 2 {
		if v.Elems[j].Text == k.Text {
			return "field " + clip.String(k.Text) + " given twice"
		}
	}
	return ""
}

func (initCondRules) unknownField(name string, _ *UserType, t UserTypeRef) string {
	return "unknown field " + clip.String(name) + " in type " + clip.String(t.Name)
}

// writeNative checks a constant against a native type.
func writeNative(b *strings.Builder, v cqltext.Term, t NativeType, want func(string) string) string {
	switch t {
	case TypeAscii, TypeText:
		if v.Kind != cqltext.KindString {
			return want("a string")
		}
		b.WriteString(cqltext.QuoteString(v.Text))
		return ""
	case TypeBlob:
		if v.Kind != cqltext.KindBlob {
			return want("a blob 0x...")
		}
	case TypeBoolean:
		if v.Kind != cqltext.KindBoolean {
			return want("true or false")
		}
	case TypeTinyint, TypeSmallint, TypeInt, TypeBigint, TypeCounter, TypeVarint:
		if v.Kind != cqltext.KindInteger {
			return want("an integer")
		}
		if bits, ok := intBits[t]; ok {
			if _, err := strconv.ParseInt(v.Text, 10, bits); err != nil {
				return "integer " + clip.String(v.Text) + " is out of the range of " + t.String()
			}
		}
	case TypeFloat, TypeDouble, TypeDecimal:
		if v.Kind != cqltext.KindInteger && v.Kind != cqltext.KindFloat {
			return want("a number")
		}
		if t == TypeDecimal && v.Kind == cqltext.KindFloat && strings.ContainsAny(v.Text, "NI") {
			return "a decimal cannot be " + v.Text
		}
	case TypeUUID, TypeTimeuuid:
		if v.Kind != cqltext.KindUUID {
			return want("a UUID")
		}
		if t == TypeTimeuuid && v.Text[14] != '1' {
			return "UUID " + v.Text + " is not a time-based (version 1) UUID"
		}
	case TypeTimestamp, TypeDate, TypeTime:
		if v.Kind != cqltext.KindString && v.Kind != cqltext.KindInteger {
			return want("a string or an integer")
		}
		if v.Kind == cqltext.KindString {
			b.WriteString(cqltext.QuoteString(v.Text))
			return ""
		}
	case TypeInet, TypeDuration:
		if v.Kind != cqltext.KindString {
			return want("a string")
		}
		b.WriteString(cqltext.QuoteString(v.Text))
		return ""
	default:
		return "unknown type " + clip.String(t.String())
	}
	b.WriteString(v.Text)
	return ""
}

// litKindName names a literal kind in messages.
func litKindName(k cqltext.Kind) string {
	switch k {
	case cqltext.KindString:
		return "a string"
	case cqltext.KindInteger:
		return "an integer"
	case cqltext.KindFloat:
		return "a float"
	case cqltext.KindBoolean:
		return "a boolean"
	case cqltext.KindUUID:
		return "a UUID"
	case cqltext.KindBlob:
		return "a blob"
	case cqltext.KindNull:
		return "null"
	case cqltext.KindIdentifier:
		return "an identifier"
	case cqltext.KindList:
		return "a list"
	case cqltext.KindSet:
		return "a set"
	case cqltext.KindMap:
		return "a map"
	case cqltext.KindTuple:
		return "a tuple"
	}
	return "a value"
}
