package schema_test

import (
	"testing"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// TestErrorsQuoteNames: errors name objects as CQL spells them, so that
// the name pasted back into a statement finds the object: mixed case and
// reserved words quoted, plain lowercase names as they are.
func TestErrorsQuoteNames(t *testing.T) {
	s := schemakit.Build(t, `CREATE KEYSPACE "KsMixed" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE "KsMixed".tb31 (k int PRIMARY KEY, v int);
CREATE TABLE "KsMixed"."Select" (k int PRIMARY KEY);
CREATE TYPE "KsMixed"."Addr" (a int);
CREATE FUNCTION "KsMixed"."Twice" (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return 2*a;'`)
	for _, tc := range []struct{ cql, want string }{
		{`CREATE TABLE "KsMixed".tb31 (k int PRIMARY KEY)`, `CREATE TABLE "KsMixed".tb31: table already exists`},
		{`CREATE TABLE "KsMixed"."Select" (k int PRIMARY KEY)`, `CREATE TABLE "KsMixed"."Select": table already exists`},
		{`DROP TABLE "KsMixed".nope`, `DROP TABLE "KsMixed".nope: table does not exist`},
		{`CREATE TABLE "Nope".t (k int PRIMARY KEY)`, `CREATE TABLE "Nope".t: keyspace "Nope" does not exist`},
		{`CREATE TYPE "KsMixed"."Addr" (a int)`, `CREATE TYPE "KsMixed"."Addr": type already exists`},
		{`CREATE INDEX ON "KsMixed"."Nope" (v)`, `CREATE INDEX on "KsMixed"."Nope": table "KsMixed"."Nope" does not exist`},
		{`CREATE KEYSPACE "KsMixed" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, `CREATE KEYSPACE "KsMixed": keyspace already exists`},
		{`ALTER TABLE "KsMixed".tb31 DROP "Nope"`, `ALTER TABLE "KsMixed".tb31: column "Nope" does not exist`},
		{`ALTER TABLE "KsMixed".tb31 ADD v text`, `ALTER TABLE "KsMixed".tb31: column v already exists`},
		{`CREATE INDEX ON "KsMixed".tb31 ("V")`, `CREATE INDEX on "KsMixed".tb31: column "V" does not exist`},
		{`DROP FUNCTION "KsMixed"."Twice"(text)`, `DROP FUNCTION "KsMixed"."Twice": Function 'KsMixed.Twice(text)' doesn't exist`},
	} {
		parsed, err := cql.Parse(tc.cql)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = schema.Apply(s, parsed[0].Statement, schema.Env{Epoch: 9})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.cql, err, tc.want)
		}
	}
	for in, want := range map[string]string{"tb31": "tb31", "Tb31": `"Tb31"`, "select": `"select"`, `a"b`: `"a""b"`} {
		if got := cqltext.QuoteQualified("ks", in); got != "ks."+want {
			t.Errorf("QuoteQualified(ks, %q) = %s, want ks.%s", in, got, want)
		}
	}
	if got := cqltext.QuoteSignature("Twice(int,frozen<\"Addr\">)"); got != `"Twice"(int,frozen<"Addr">)` {
		t.Errorf("QuoteSignature = %s", got)
	}
	if got := schema.QuoteTypeName("text"); got != `"text"` {
		t.Errorf("QuoteTypeName(text) = %s", got)
	}
}
