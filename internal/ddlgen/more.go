package ddlgen

import "pgregory.net/rapid"

// More name pools, for the kinds only AnyStatement draws.
var (
	// Triggers are the trigger names drawn.
	Triggers = []string{"tr1", "tr2"}
	// Functions are the function names drawn: plus(s int, a int) is the
	// state function the aggregates use, f1 comes in two overloads.
	Functions = []string{"plus", "f1"}
	// Aggregates are the aggregate names drawn.
	Aggregates = []string{"total", "agg2"}
)

// moreKinds are the kinds AnyStatement draws beside those of Statement:
// the copy of a table (with its indexes or not), masks (an ALTER TABLE
// that reaches the table's views), triggers, functions and aggregates.
var moreKinds = []kind{
	{"CREATE TABLE LIKE", 4, createTableLike},
	{"ALTER TABLE MASK", 2, alterMask},
	{"CREATE TRIGGER", 2, createTrigger},
	{"DROP TRIGGER", 1, dropTrigger},
	{"CREATE FUNCTION", 2, createFunction},
	{"DROP FUNCTION", 1, dropFunction},
	{"CREATE AGGREGATE", 2, createAggregate},
	{"DROP AGGREGATE", 1, dropAggregate},
}

// allKinds are kinds and moreKinds.
var allKinds = append(append([]kind(nil), kinds...), moreKinds...)

// allWeighted is weighted over allKinds.
var allWeighted = func() []int {
	var out []int
	for i, k := range allKinds {
		for range k.weight {
			out = append(out, i)
		}
	}
	return out
}()

// AllKinds are the statement kinds AnyStatement draws from: Kinds, then
// "CREATE TABLE LIKE" (CREATE TABLE ... LIKE), "ALTER TABLE MASK" (ALTER
// TABLE ... ALTER column MASKED WITH or DROP MASKED) and the trigger,
// function and aggregate statements.
func AllKinds() []string {
	out := make([]string, len(allKinds))
	for i, k := range allKinds {
		out[i] = k.name
	}
	return out
}

// AnyStatement draws one statement of any kind metalog supports, as text
// without the final ';': those of Statement, and CREATE TABLE ... LIKE
// [WITH INDEXES], masks, CREATE and DROP TRIGGER, FUNCTION and AGGREGATE
// (with OR REPLACE or IF [NOT] EXISTS). label prefixes the labels of its
// draws.
func AnyStatement(t *rapid.T, label string) string {
	k := allKinds[allWeighted[uniform(t, label+"_kind", len(allWeighted))]]
	return k.gen(t, label)
}

// createTableLike draws CREATE TABLE ... LIKE a pool table, of the same
// keyspace or the other, WITH INDEXES or not, sometimes with a property.
func createTableLike(t *rapid.T, label string) string {
	s := "CREATE TABLE" + cond(t, label, " IF NOT EXISTS") + " " + qualified(t, label, tablesDrawn) +
		" LIKE " + qualified(t, label+"_src", tablesDrawn)
	return s + pick(t, label+"_with", "", " WITH INDEXES", " WITH INDEXES", " WITH comment = 'copy'",
		" WITH INDEXES AND comment = 'copy'")
}

// alterMask draws ALTER TABLE ... ALTER column MASKED WITH a mask, or DROP
// MASKED, of a column the pool's tables often have.
func alterMask(t *rapid.T, label string) string {
	s := "ALTER TABLE" + cond(t, label, " IF EXISTS") + " " + qualified(t, label, tablesDrawn) +
		" ALTER " + pick(t, label+"_col", "v", "v", "k", "c")
	return s + pick(t, label+"_mask", " MASKED WITH DEFAULT", " MASKED WITH mask_null()", " DROP MASKED")
}

// createTrigger draws CREATE TRIGGER on a pool table.
func createTrigger(t *rapid.T, label string) string {
	return "CREATE TRIGGER" + cond(t, label, " IF NOT EXISTS") + " " + pick(t, label+"_name", Triggers...) +
		" ON " + qualified(t, label, tablesDrawn) + " USING '" + pick(t, label+"_class", "org.example.Audit", "org.example.Other") + "'"
}

// dropTrigger draws DROP TRIGGER.
func dropTrigger(t *rapid.T, label string) string {
	return "DROP TRIGGER" + cond(t, label, " IF EXISTS") + " " + pick(t, label+"_name", Triggers...) +
		" ON " + qualified(t, label, tablesDrawn)
}

// functionBodies are the functions drawn: plus as an aggregate's state
// function (or, with text, a replacement that is refused while an
// aggregate uses it), f1 in two overloads.
var functionBodies = []string{
	"plus(s int, a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + a;'",
	"plus(s int, a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'",
	"f1(a int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'",
	"f1(a text) CALLED ON NULL INPUT RETURNS text LANGUAGE java AS 'return a;'",
	"plus(s int, a int) CALLED ON NULL INPUT RETURNS text LANGUAGE java AS 'return null;'",
}

// createFunction draws CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS].
func createFunction(t *rapid.T, label string) string {
	head := pick(t, label+"_head", "CREATE FUNCTION", "CREATE FUNCTION IF NOT EXISTS", "CREATE OR REPLACE FUNCTION")
	return head + " " + keyspace(t, label) + "." + pick(t, label+"_body", functionBodies...)
}

// dropFunction draws DROP FUNCTION, by name or by signature.
func dropFunction(t *rapid.T, label string) string {
	return "DROP FUNCTION" + cond(t, label, " IF EXISTS") + " " + keyspace(t, label) + "." +
		pick(t, label+"_sig", "plus", "plus(int, int)", "f1(int)", "f1(text)")
}

// createAggregate draws CREATE [OR REPLACE] AGGREGATE [IF NOT EXISTS]
// over plus, which may be missing or of the wrong type (refused).
func createAggregate(t *rapid.T, label string) string {
	head := pick(t, label+"_head", "CREATE AGGREGATE", "CREATE AGGREGATE IF NOT EXISTS", "CREATE OR REPLACE AGGREGATE")
	return head + " " + keyspace(t, label) + "." + pick(t, label+"_name", Aggregates...) +
		"(int) SFUNC plus STYPE int" + pick(t, label+"_init", "", " INITCOND 0", " INITCOND 5")
}

// dropAggregate draws DROP AGGREGATE.
func dropAggregate(t *rapid.T, label string) string {
	return "DROP AGGREGATE" + cond(t, label, " IF EXISTS") + " " + keyspace(t, label) + "." + pick(t, label+"_name", Aggregates...)
}
