package schema_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// keyspacesCases has, for every statement kind, statements written
// qualified and unqualified, with the keyspaces they touch under the
// default keyspace "dflt" and without a default ("" marks a keyspace left
// to the missing default).
var keyspacesCases = []struct {
	cql         string
	withDefault []string // default keyspace "dflt"
	noDefault   []string // no default keyspace
}{
	{"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", []string{"ks"}, []string{"ks"}},
	{"ALTER KEYSPACE ks WITH durable_writes = false", []string{"ks"}, []string{"ks"}},
	{"DROP KEYSPACE IF EXISTS ks", []string{"ks"}, []string{"ks"}},
	{"USE ks", []string{"ks"}, []string{"ks"}},
	{"CREATE TABLE ks.t (k int PRIMARY KEY)", []string{"ks"}, []string{"ks"}},
	{"CREATE TABLE t (k int PRIMARY KEY)", []string{"dflt"}, []string{""}},
	{"CREATE TABLE ks.t LIKE other.src", []string{"ks", "other"}, []string{"ks", "other"}},
	{"CREATE TABLE t LIKE src", []string{"dflt"}, []string{""}},
	{"CREATE TABLE ks.t LIKE src", []string{"ks", "dflt"}, []string{"ks", ""}},
	{"CREATE TABLE t LIKE ks.src", []string{"dflt", "ks"}, []string{"", "ks"}},
	{"CREATE TABLE ks.t LIKE ks.src", []string{"ks"}, []string{"ks"}},
	{"ALTER TABLE ks.t ADD v int", []string{"ks"}, []string{"ks"}},
	{"ALTER TABLE t WITH comment = 'x'", []string{"dflt"}, []string{""}},
	{"DROP TABLE ks.t", []string{"ks"}, []string{"ks"}},
	{"DROP TABLE IF EXISTS t", []string{"dflt"}, []string{""}},
	{"CREATE TYPE ks.ty (a int)", []string{"ks"}, []string{"ks"}},
	{"ALTER TYPE ty ADD b int", []string{"dflt"}, []string{""}},
	{"DROP TYPE ks.ty", []string{"ks"}, []string{"ks"}},
	{"CREATE INDEX ON ks.t (v)", []string{"ks"}, []string{"ks"}},
	{"CREATE INDEX i ON t (v)", []string{"dflt"}, []string{""}},
	{"DROP INDEX ks.i", []string{"ks"}, []string{"ks"}},
	{"DROP INDEX i", []string{"dflt"}, []string{""}},
	{"CREATE TRIGGER tr ON ks.t USING 'org.example.Trigger'", []string{"ks"}, []string{"ks"}},
	{"DROP TRIGGER tr ON t", []string{"dflt"}, []string{""}},
	{"CREATE FUNCTION ks.f (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'", []string{"ks"}, []string{"ks"}},
	{"DROP FUNCTION f", []string{"dflt"}, []string{""}},
	{"CREATE AGGREGATE ks.agg (int) SFUNC f STYPE int", []string{"ks"}, []string{"ks"}},
	{"DROP AGGREGATE agg", []string{"dflt"}, []string{""}},
	{"CREATE MATERIALIZED VIEW ks.v AS SELECT * FROM ks.t WHERE k IS NOT NULL PRIMARY KEY (k)", []string{"ks"}, []string{"ks"}},
	{"CREATE MATERIALIZED VIEW ks.v AS SELECT * FROM other.t WHERE k IS NOT NULL PRIMARY KEY (k)", []string{"ks", "other"}, []string{"ks", "other"}},
	{"CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k)", []string{"dflt"}, []string{""}},
	{"CREATE MATERIALIZED VIEW v AS SELECT * FROM ks.t WHERE k IS NOT NULL PRIMARY KEY (k)", []string{"dflt", "ks"}, []string{"", "ks"}},
	{"ALTER MATERIALIZED VIEW ks.v WITH comment = 'x'", []string{"ks"}, []string{"ks"}},
	{"DROP MATERIALIZED VIEW v", []string{"dflt"}, []string{""}},
}

// TestKeyspaces checks the keyspaces of every statement kind, qualified
// and not, and fails when a statement kind of package schema has no case.
func TestKeyspaces(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range keyspacesCases {
		parsed, err := cql.Parse(tc.cql)
		if err != nil || len(parsed) != 1 {
			t.Fatalf("%s: %v", tc.cql, err)
		}
		st := parsed[0].Statement
		covered[reflect.TypeOf(st).Elem().Name()] = true
		if got := schema.Keyspaces(st, "dflt"); !slices.Equal(got, tc.withDefault) {
			t.Errorf("%s with default dflt: %q, want %q", tc.cql, got, tc.withDefault)
		}
		if got := schema.Keyspaces(st, ""); !slices.Equal(got, tc.noDefault) {
			t.Errorf("%s without default: %q, want %q", tc.cql, got, tc.noDefault)
		}
	}
	for _, kind := range statementTypes(t) {
		if !covered[kind] {
			t.Errorf("statement type %s has no case in keyspacesCases", kind)
		}
	}
	if schema.Keyspaces(nil, "x") != nil {
		t.Error("a nil statement touches no keyspace")
	}
}

// TestKeyspacesAfterUse checks that the statements after a USE touch the
// USE's keyspace, not the request's default.
func TestKeyspacesAfterUse(t *testing.T) {
	parsed, err := cql.Parse("CREATE TABLE a.t (k int PRIMARY KEY); USE shop; CREATE TABLE t2 (k int PRIMARY KEY); DROP TABLE other.t3")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a"}, {"shop"}, {"shop"}, {"other"}}
	for i, p := range parsed {
		if got := schema.Keyspaces(p.Statement, "dflt"); !slices.Equal(got, want[i]) {
			t.Errorf("statement %d (%s): %q, want %q", i+1, p.Text, got, want[i])
		}
	}
}

// TestNoKeyspaceIsApplysError checks that Apply refuses every statement
// kind that names no keyspace when there is no default keyspace, even on
// a schema holding the objects named: NoKeyspace's error is what Apply is
// sure to answer. For the statements that look their keyspace up first,
// the messages are the same.
func TestNoKeyspaceIsApplysError(t *testing.T) {
	s, _ := schemakit.Apply(t, schema.Schema{}, `
		CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
		USE ks;
		CREATE TABLE t (k int PRIMARY KEY, v int);
		CREATE TABLE src (k int PRIMARY KEY);
		CREATE TYPE ty (a int);
		CREATE INDEX i ON t (v);
		CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k)`, schemakit.OneEpoch(1))
	for _, tc := range keyspacesCases {
		parsed, err := cql.Parse(tc.cql)
		if err != nil {
			t.Fatal(err)
		}
		st := parsed[0].Statement
		if !slices.Contains(schema.Keyspaces(st, ""), "") {
			continue
		}
		_, _, _, err = schema.Apply(s, st, schema.Env{Epoch: 100})
		if err == nil {
			t.Errorf("%s applied without a keyspace", tc.cql)
			continue
		}
		if _, isLike := st.(*schema.CreateTableLike); isLike {
			continue // looks the source table up first
		}
		if want := schema.NoKeyspace(st).Error(); err.Error() != want {
			t.Errorf("%s: Apply says %q, NoKeyspace %q", tc.cql, err, want)
		}
	}
}

// statementTypes lists the types of package schema with an apply method:
// the statement kinds.
func statementTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "apply" {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok {
					out = append(out, id.Name)
				}
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d statement types: %v", len(out), out)
	}
	return out
}
