package schema

import (
	"strconv"
	"strings"

	"github.com/metalog/metalog/internal/clip"
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
	r := &literalReader{s: text}
	v := r.term(0)
	r.space()
	if r.err == "" && r.i != len(r.s) {
		r.fail("unexpected " + clip.Quote(r.s[r.i:]) + " after the value")
	}
	if r.err != "" {
		return "", "invalid literal " + clip.Quote(text) + ": " + r.err
	}
	if v.kind == 'n' {
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

func (initCondRules) native(b *strings.Builder, v literal, t NativeType, _ string) string {
	return writeNative(b, v, t, func(what string) string { return "expected " + what + ", found " + litKindName(v.kind) })
}

func (initCondRules) null(_ string, elem bool) string {
	if elem {
		return "null is not supported inside collections"
	}
	return ""
}

func (initCondRules) mismatch(v literal, _ Type, _, want string) string {
	if want == "" {
		return "unknown type"
	}
	return "expected " + want + ", found " + litKindName(v.kind)
}

func (initCondRules) vectorSize(v literal, t VectorType, _ string) string {
	return "a vector of dimension " + strconv.Itoa(t.Dimension) + " needs " + strconv.Itoa(t.Dimension) + " elements, found " + strconv.Itoa(len(v.elems))
}

func (initCondRules) tupleSize(t TupleType, n int, _ string) string {
	return "a " + clip.String(t.String()) + " has " + strconv.Itoa(len(t.Elems)) + " elements, found " + strconv.Itoa(n)
}

// userType takes a non-empty map for a user type literal; with a lookup,
// the fields must be the type's, and without, they are written unchecked.
func (c initCondRules) userType(v literal, t UserTypeRef, _ Type, _ string) (*UserType, string) {
	if v.kind != litKindMap || len(v.elems) == 0 {
		return nil, "expected a user type literal {field: value, ...}, found " + litKindName(v.kind)
	}
	var ut *UserType
	if c.lookup != nil {
		ut, _ = c.lookup(t.Name)
	}
	return ut, ""
}

func (initCondRules) fieldKey(v literal, i int) string {
	k := v.elems[2*i]
	if k.kind != 'w' {
		return "a user type literal takes field names, found " + litKindName(k.kind)
	}
	for j := 0; j < 2*i; j += 2 {
		if v.elems[j].text == k.text {
			return "field " + clip.String(k.text) + " given twice"
		}
	}
	return ""
}

func (initCondRules) unknownField(name string, _ *UserType, t UserTypeRef) string {
	return "unknown field " + clip.String(name) + " in type " + clip.String(t.Name)
}

// writeNative checks a constant against a native type.
func writeNative(b *strings.Builder, v literal, t NativeType, want func(string) string) string {
	switch t {
	case TypeAscii, TypeText:
		if v.kind != 's' {
			return want("a string")
		}
		b.WriteString(QuoteString(v.text))
		return ""
	case TypeBlob:
		if v.kind != 'x' {
			return want("a blob 0x...")
		}
	case TypeBoolean:
		if v.kind != 'b' {
			return want("true or false")
		}
	case TypeTinyint, TypeSmallint, TypeInt, TypeBigint, TypeCounter, TypeVarint:
		if v.kind != 'i' {
			return want("an integer")
		}
		if bits, ok := intBits[t]; ok {
			if _, err := strconv.ParseInt(v.text, 10, bits); err != nil {
				return "integer " + clip.String(v.text) + " is out of the range of " + t.String()
			}
		}
	case TypeFloat, TypeDouble, TypeDecimal:
		if v.kind != 'i' && v.kind != 'f' {
			return want("a number")
		}
		if t == TypeDecimal && v.kind == 'f' && strings.ContainsAny(v.text, "NI") {
			return "a decimal cannot be " + v.text
		}
	case TypeUUID, TypeTimeuuid:
		if v.kind != 'u' {
			return want("a UUID")
		}
		if t == TypeTimeuuid && v.text[14] != '1' {
			return "UUID " + v.text + " is not a time-based (version 1) UUID"
		}
	case TypeTimestamp, TypeDate, TypeTime:
		if v.kind != 's' && v.kind != 'i' {
			return want("a string or an integer")
		}
		if v.kind == 's' {
			b.WriteString(QuoteString(v.text))
			return ""
		}
	case TypeInet, TypeDuration:
		if v.kind != 's' {
			return want("a string")
		}
		b.WriteString(QuoteString(v.text))
		return ""
	default:
		return "unknown type " + clip.String(t.String())
	}
	b.WriteString(v.text)
	return ""
}

// litKindName names a literal kind in messages.
func litKindName(k byte) string {
	switch k {
	case 's':
		return "a string"
	case 'i':
		return "an integer"
	case 'f':
		return "a float"
	case 'b':
		return "a boolean"
	case 'u':
		return "a UUID"
	case 'x':
		return "a blob"
	case 'n':
		return "null"
	case 'w':
		return "an identifier"
	case litKindList:
		return "a list"
	case litKindSet:
		return "a set"
	case litKindMap:
		return "a map"
	case litKindTuple:
		return "a tuple"
	}
	return "a value"
}
