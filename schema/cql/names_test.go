package cql

import (
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// applyText parses text and applies its statements to s in order, each
// admitted first, as a new request is.
func applyText(t *testing.T, s schema.Schema, text string) (schema.Schema, error) {
	t.Helper()
	stmts, err := Parse(text)
	if err != nil {
		return s, err
	}
	for i, p := range stmts {
		if err := schema.Admit(p.Statement); err != nil {
			return s, err
		}
		if s, _, _, err = schema.Apply(s, p.Statement, schema.Env{Epoch: uint64(i + 1)}); err != nil {
			return s, err
		}
	}
	return s, nil
}

// TestNamesRoundTrip creates objects with every kind of name the rules
// allow, quoted where they must be, and checks that DESCRIBE gives CQL that
// re-creates the same schema; names with control characters are refused.
func TestNamesRoundTrip(t *testing.T) {
	long := strings.Repeat("é", 512) // 1024 bytes, the longest column name
	text := `CREATE KEYSPACE "Shop_2" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE "Shop_2"."Address Book" ("Street ""Name""" text, "名前" text, "zero` + "\u200b" + `width" int);
CREATE TABLE "Shop_2"."MixedCase" ("Id" int, "select" int, "a b" text, "` + long + `" frozen<"Address Book">,
    "naïve 🙂" text, PRIMARY KEY ("Id", "select"));
CREATE INDEX "By_Name" ON "Shop_2"."MixedCase" ("a b");
ALTER TYPE "Shop_2"."Address Book" ADD "Zip Code" text`
	s, err := applyText(t, schema.Schema{}, text)
	if err != nil {
		t.Fatal(err)
	}
	described := describe.Schema(s)
	again, err := applyText(t, schema.Schema{}, described)
	if err != nil {
		t.Fatalf("DESCRIBE output does not apply: %v\n%s", err, described)
	}
	if describe.Schema(again) != described {
		t.Fatalf("round trip changed the schema:\n%s\nthen\n%s", described, describe.Schema(again))
	}
	for _, bad := range []string{
		`CREATE TABLE "Shop_2".t (id int PRIMARY KEY, "new` + "\n" + `line" text)`,
		`CREATE TABLE "Shop_2".t (id int PRIMARY KEY, "tab` + "\t" + `" text)`,
		`ALTER TABLE "Shop_2"."MixedCase" ADD "c1` + "\u0085" + `" int`,
		`ALTER TABLE "Shop_2"."MixedCase" RENAME "Id" TO "nul` + "\x00" + `"`,
		`CREATE TYPE "Shop_2"."bell` + "\a" + `" (a int)`,
		`CREATE TYPE "Shop_2".x ("esc` + "\x1b" + `" int)`,
		`ALTER TYPE "Shop_2"."Address Book" ADD "del` + "\x7f" + `" int`,
		`ALTER TYPE "Shop_2"."Address Book" RENAME "名前" TO "cr` + "\r" + `"`,
	} {
		if _, err := applyText(t, s, bad); err == nil || !strings.Contains(err.Error(), "contains a control character") {
			t.Errorf("%q: %v, want a control character refused", bad, err)
		}
	}
}
