package cqlserver

import (
	"reflect"
	"testing"
)

func TestParseSelect(t *testing.T) {
	for _, tc := range []struct {
		text string
		want *selectStmt // nil: refused
	}{
		{"SELECT * FROM system.local WHERE key='local'",
			&selectStmt{keyspace: "system", table: "local", where: []condition{{column: "key", value: "local"}}}},
		{"select A, \"B\" from T;", &selectStmt{columns: []string{"a", "B"}, table: "t"}},
		{"SELECT x FROM ks.t WHERE a = ? AND b = 'it''s' AND c = ?", &selectStmt{columns: []string{"x"}, keyspace: "ks", table: "t",
			where: []condition{{column: "a", marker: true}, {column: "b", value: "it's"}, {column: "c", marker: true, index: 1}}, markers: 2}},
		{"SELECT * FROM t WHERE a > 'x'", nil},
		{"SELECT * FROM t WHERE a = 1", nil},
		{"SELECT * FROM t LIMIT 1", nil},
		{"SELECT * FROM t WHERE a = 'x' OR b = 'y'", nil},
		{"SELECT count(*) FROM t", nil},
		{"SELECT * FROM 't'", nil},
		{"SELECT * FROM t WHERE a = 'unterminated", nil},
		{"SELECT FROM t", nil},
		{"SELECT * t", nil},
	} {
		got, err := parseSelect(tc.text)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%q: parsed as %+v, want refused", tc.text, got)
		case tc.want != nil && err != nil:
			t.Errorf("%q: %v", tc.text, err)
		case tc.want != nil && !reflect.DeepEqual(got, tc.want):
			t.Errorf("%q: parsed as %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

func TestSplitSignature(t *testing.T) {
	name, args := splitSignature("f(int,map<int,text>,frozen<list<text>>)")
	if name != "f" || !reflect.DeepEqual(args, []string{"int", "map<int,text>", "frozen<list<text>>"}) {
		t.Errorf("got %s %v", name, args)
	}
	if name, args := splitSignature("g()"); name != "g" || len(args) != 0 || args == nil {
		t.Errorf("got %s %#v, want g and an empty list", name, args)
	}
}

func TestFirstWord(t *testing.T) {
	for text, want := range map[string]string{
		"  select *":           "select",
		"-- c\n/* d */ USE ks": "use",
		"// x\nCREATE TABLE":   "create",
		"SELECT\n*":            "select",
		"":                     "",
		"/* unterminated":      "",
		"Select_x FROM t":      "select_x",
	} {
		if got := firstWord(text); got != want {
			t.Errorf("firstWord(%q) = %q, want %q", text, got, want)
		}
	}
}

// FuzzParseSelect checks that no text makes the parser panic and that
// what it accepts has one bind value per marker, numbered in order.
func FuzzParseSelect(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM system.local WHERE key='local'",
		"SELECT a, \"b\" FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?",
		"select x from t where a = 'it''s';",
		"SELECT * FROM \"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		st, err := parseSelect(text)
		if err != nil {
			return
		}
		n := 0
		for _, w := range st.where {
			if w.marker {
				if w.index != n {
					t.Fatalf("marker %d numbered %d", n, w.index)
				}
				n++
			}
		}
		if n != st.markers {
			t.Fatalf("%d markers counted, %d in conditions", st.markers, n)
		}
	})
}
