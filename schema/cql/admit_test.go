package cql

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
)

// TestAdmitPointsAtTheRefusedName: a quoted name holding a
// right-to-left override, an isolate or a control character is refused
// as a new request's name, with the line and column of its quoted
// identifier in the request's text, whichever statement of the text
// writes it; names already in the schema may still be named.
func TestAdmitPointsAtTheRefusedName(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // the error of the first refused statement; "" for none
	}{
		{"CREATE TABLE shop.t (id int PRIMARY KEY, \"total\u202e\" int)",
			`line 1:42: CREATE TABLE shop.t: column name "total\u202e" contains a bidirectional formatting character (U+202E), which would make it show as another name; choose a name without it`},
		{"CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nCREATE TABLE shop.t (\n  id int PRIMARY KEY,\n  \"naïve\" text, \"a\u2066b\u2069\" int)",
			"line 4:17: CREATE TABLE shop.t: column name \"a\\u2066b\\u2069\" contains a bidirectional formatting character (U+2066)"},
		{"  ALTER TABLE shop.t RENAME id TO \"id\u200f\"", "line 1:35: ALTER TABLE shop.t: column name"},
		{"ALTER TYPE shop.addr ADD \"zip\x1b[2J\" text", `line 1:26: ALTER TYPE shop.addr: field name "zip\x1b[2J" contains a control character (U+001B)`},
		{"CREATE TYPE shop.\"addr\u202e\" (a int)", "line 1:18: CREATE TYPE shop.\"addr\u202e\": type name"},
		{"CREATE FUNCTION shop.\"f\u202e\" (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", "line 1:22: CREATE FUNCTION shop.\"f\u202e\": function name"},
		// A reference to a name is not a new name: an old column may be dropped.
		{"ALTER TABLE shop.t DROP \"total\u202e\"", ""},
		{"CREATE TABLE shop.t (id int PRIMARY KEY, \"naïve 名前\" int)", ""},
	} {
		stmts, err := Parse(tc.text)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		err = nil
		for _, p := range stmts {
			if err = Admit(p); err != nil {
				break
			}
		}
		var ne *NameError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, want it admitted", tc.text, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, schema.ErrInvalid) || !errors.As(err, &ne)):
			t.Errorf("%q:\n%v\nwant a *NameError matching schema.ErrInvalid starting with\n%s", tc.text, err, tc.want)
		}
	}
}

// TestAdmitKeepsOtherRefusals: a refusal that names no quoted name is
// schema.Admit's, as it is.
func TestAdmitKeepsOtherRefusals(t *testing.T) {
	p := Parsed{Statement: &schema.CreateTable{Keyspace: "shop", Name: "t", Columns: []schema.ColumnDef{{Name: "x\u202e", Type: schema.TypeInt}}}, Text: "not the text", Line: 3, Column: 7}
	var ne *NameError
	if err := Admit(p); errors.As(err, &ne) || !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("a name its text does not hold: %v, want schema.Admit's error", err)
	}
}
