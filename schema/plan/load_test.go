package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/describe"
)

// TestLoad checks that Load applies a file's statements in order (USE,
// ALTER and DROP included) and that its errors name the statement, its
// line and why, matching the underlying error.
func TestLoad(t *testing.T) {
	s := mustLoad(t, `-- the desired schema
CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE ks;
CREATE TABLE t (id int PRIMARY KEY, v text, w int);
ALTER TABLE t DROP w;
CREATE TABLE gone (id int PRIMARY KEY);
DROP TABLE gone;`)
	tbl, ok := s.Table("ks", "t")
	if !ok || len(tbl.Columns) != 2 || len(tbl.DroppedColumns()) != 1 || s.TableCount() != 1 {
		t.Fatalf("loaded:\n%s", describe.Schema(s))
	}

	_, err := Load(ksHead + "CREATE TABLE ks.t (id int PRIMARY KEY, v text);\nCREATE TABLE ks.t (id int PRIMARY KEY)")
	var le *LoadError
	if !errors.As(err, &le) || le.Statement != 3 || le.Line != 3 || !errors.Is(err, schema.ErrAlreadyExists) || !errors.Is(err, ErrDefinedTwice) ||
		err.Error() != "plan: desired schema: statement 3 (line 3:1): CREATE TABLE ks.t: table already exists: it is defined twice, first at statement 2 (line 2:1); keep one definition" {
		t.Errorf("apply error: %#v %v", le, err)
	}
	_, err = Load(ksHead + "CREATE TABLE ks.t (id int PRIMRY KEY)")
	var se *cql.SyntaxError
	if !errors.As(err, &le) || le.Statement != 0 || le.Line != 2 || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "plan: desired schema: line 2:") {
		t.Errorf("syntax error: %#v %v", le, err)
	}
	_, err = Load(ksHead + "CREATE TABLE ks.t (id int PRIMARY KEY, \"a\nb\" text)")
	if !errors.As(err, &le) || le.Statement != 2 || !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("admission error: %v", err)
	}
	if s, err := Load(""); err != nil || s.KeyspaceCount() != 0 {
		t.Errorf("empty text: %v", err)
	}
}

// TestLoadSources checks that several texts make one desired schema, in
// the order given (a later text uses what an earlier one creates), that a
// USE holds within its text only, that tables of different texts get
// distinct unassigned ids, and that errors name the text: an object
// defined in two texts names both places and matches ErrDefinedTwice.
func TestLoadSources(t *testing.T) {
	s, err := LoadSources([]Source{
		{Name: "a.cql", Text: ksHead + "USE ks;\nCREATE TABLE t (id int PRIMARY KEY);"},
		{Name: "b.cql", Text: "CREATE TABLE ks.u (id int PRIMARY KEY, v int);\nCREATE INDEX u_v ON ks.u (v)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tt, okT := s.Table("ks", "t")
	tu, okU := s.Table("ks", "u")
	if !okT || !okU || tt.ID == tu.ID || !UnassignedID(tt.ID) || !UnassignedID(tu.ID) {
		t.Fatalf("loaded:\n%s", describe.Schema(s))
	}

	_, err = LoadSources([]Source{{Name: "a.cql", Text: ksHead + "USE ks;"}, {Name: "b.cql", Text: "CREATE TABLE t (id int PRIMARY KEY)"}})
	var le *LoadError
	if !errors.As(err, &le) || le.Source != "b.cql" || le.Statement != 1 || errors.Is(err, ErrDefinedTwice) {
		t.Errorf("a USE of another text applied: %v", err)
	}

	_, err = LoadSources([]Source{
		{Name: "a.cql", Text: ksHead + "CREATE TABLE ks.t (id int PRIMARY KEY);\nCREATE TABLE ks.other (id int PRIMARY KEY)"},
		{Name: "dir/b.cql", Text: "CREATE TYPE ks.x (a int);\n\n  CREATE TABLE ks.t (id int PRIMARY KEY, v text)"},
	})
	want := "plan: desired schema: dir/b.cql: statement 2 (line 3:3): CREATE TABLE ks.t: table already exists: it is defined twice, first at a.cql: statement 2 (line 2:1); keep one definition"
	if !errors.As(err, &le) || !errors.Is(err, ErrDefinedTwice) || !errors.Is(err, schema.ErrAlreadyExists) || err.Error() != want ||
		*le.First != (Place{Source: "a.cql", Statement: 2, Line: 2, Column: 1}) {
		t.Errorf("defined twice:\n%v\nwant:\n%s", err, want)
	}

	// A keyspace, a function overload and an index name defined twice.
	for _, tc := range []struct{ first, second, at string }{
		{ksHead, ksHead, "a.cql: statement 1 (line 1:1)"},
		{ksHead + fn("f", "a int", "int", "return a;"), fn("f", "b int", "int", "return b;"), "a.cql: statement 2 (line 2:1)"},
		{ksHead + "CREATE TABLE ks.t (id int PRIMARY KEY, v int);\nCREATE INDEX ix ON ks.t (v)", "CREATE TABLE ks.u (id int PRIMARY KEY, w int); CREATE INDEX ix ON ks.u (w)", "a.cql: statement 3 (line 3:1)"},
	} {
		_, err := LoadSources([]Source{{Name: "a.cql", Text: tc.first}, {Name: "b.cql", Text: tc.second}})
		if !errors.Is(err, ErrDefinedTwice) || !strings.Contains(err.Error(), "first at "+tc.at+";") {
			t.Errorf("%q then %q: %v, want defined first at %s", tc.first, tc.second, err, tc.at)
		}
	}

	// A function of another signature is another object.
	if _, err := LoadSources([]Source{{Name: "a.cql", Text: ksHead + fn("f", "a int", "int", "return a;")}, {Name: "b.cql", Text: fn("f", "a text", "int", "return 0;")}}); err != nil {
		t.Errorf("an overload: %v", err)
	}

	_, err = LoadSources([]Source{{Name: "a.cql", Text: ksHead}, {Name: "b.cql", Text: "CREATE TABLE ks.t (id int PRIMRY KEY)"}})
	if !errors.As(err, &le) || le.Source != "b.cql" || le.Statement != 0 || !strings.HasPrefix(err.Error(), "plan: desired schema: b.cql: line 1:") {
		t.Errorf("syntax error: %v", err)
	}
}
