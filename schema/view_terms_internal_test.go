package schema

import (
	"strings"
	"testing"
)

// TestWhereExpressionText: the canonical text of a view's WHERE
// expressions reads back as the tree the parser made, and writes back to
// the same text; any other spelling of it is refused, so that equal
// relations are equal strings.
func TestWhereExpressionText(t *testing.T) {
	for _, text := range []string{
		"1 + 2 * 3 - 4 % 5 / 6", "-abs(-1)", "(int)1", "(frozen<list<int>>)[1, 2]", "(map<text, int>){'a': 1}",
		"(tuple<int, text>)(1, 'a')", "(vector<float, 2>)[1.5, 2]", `("Addr"){zip: 1}`, "(ks.addr){zip: 1}",
		"system.now()", `"Fn"(1, 'a')`, "ks.f()", "1h30m", "-P1D", "(1, abs(2))", "[(int)1, 2 + 3]", "{'k': now()}",
		"5a1c395e-b41f-11e5-9f22-ba0be0483c18", "0x01", "(int)-1", "now() - 1d",
	} {
		v, r := parseTerm(text)
		if r != "" {
			t.Errorf("%s: %s", text, r)
			continue
		}
		if got := v.String(); got != text {
			t.Errorf("%s: written back as %s", text, got)
		}
	}
	for _, text := range []string{
		"1+2", "1 +2", "1  + 2", "ABS(1)", "abs (1)", "abs(1,2)", "( int)1", "(int) 1", "(INT)1", "(varchar)'a'",
		"(list<int >)[1]", "(map<text,int>){}", "Now()", `"now"(1)`, "1h30", "-", "--1h", "--1", "abs(", "(int)", "1 +",
		strings.Repeat("1 + ", 20) + "1", strings.Repeat("-abs(", 20) + "1" + strings.Repeat(")", 20),
	} {
		if _, r := parseTerm(text); r == "" {
			t.Errorf("%s: read as a term, want it refused as not canonical", text)
		}
	}
}

// TestScanType: every type reads back from its String text; other
// spellings do not.
func TestScanType(t *testing.T) {
	for _, typ := range []Type{TypeInt, ListType{Elem: TypeText}, FrozenType{Inner: SetType{Elem: TypeUUID}}, MapType{Key: TypeText, Value: ListType{Elem: TypeInt}},
		TupleType{Elems: []Type{TypeInt, UserTypeRef{Name: "a b"}}}, VectorType{Elem: TypeFloat, Dimension: 3}, UserTypeRef{Keyspace: "ks", Name: "int"}} {
		text := typ.String()
		got, n := scanType(text+")", 0)
		if n != len(text) || !TypesEqual(got, typ) {
			t.Errorf("%s: read %v (%d bytes)", text, got, n)
		}
	}
	for _, text := range []string{"varchar", "list <int>", "map<int,int>", "vector<float, x>", "tuple<>", "frozen<int, int>", "Int", ""} {
		if _, n := scanType(text, 0); n == len(text) && n > 0 {
			t.Errorf("%q: read as a type", text)
		}
	}
}
