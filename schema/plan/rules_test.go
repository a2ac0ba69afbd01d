package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// ksHead creates keyspace ks, which the unit tests' schemas use.
const ksHead = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n"

// TestImpossibleInPlace checks each change Cassandra cannot make in place:
// without AllowRecreate, Diff returns an *ImpossibleError whose change
// names the object and Cassandra's rule; with it, the plan drops and
// creates the object (destructively for a table) and gives the desired
// schema.
func TestImpossibleInPlace(t *testing.T) {
	cases := []struct {
		name, from, to string
		object, rule   string
	}{
		{"partition key type", "CREATE TABLE ks.t (id int PRIMARY KEY, v text)", "CREATE TABLE ks.t (id bigint PRIMARY KEY, v text)",
			"ks.t", "the primary key of a table cannot be altered"},
		{"partition key column added", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY (a, b))", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY ((a, b)))",
			"ks.t", "the partition key changes from (a int) to (a int, b int)"},
		{"clustering column added", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY (a, b))", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY (a, b, v))",
			"ks.t", "the clustering columns change from (b int) to (b int, v text): the primary key of a table cannot be altered"},
		{"clustering order", "CREATE TABLE ks.t (a int, b int, PRIMARY KEY (a, b))", "CREATE TABLE ks.t (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC)",
			"ks.t", "the clustering order of a table cannot be altered (Cassandra: CLUSTERING ORDER BY is fixed"},
		{"column type", "CREATE TABLE ks.t (id int PRIMARY KEY, v int)", "CREATE TABLE ks.t (id int PRIMARY KEY, v bigint)",
			"ks.t", "column v changes type from int to bigint: the type of a column cannot be altered (Cassandra disabled ALTER TABLE ... ALTER ... TYPE, CASSANDRA-12443)"},
		{"collection freezing", "CREATE TABLE ks.t (id int PRIMARY KEY, v list<int>)", "CREATE TABLE ks.t (id int PRIMARY KEY, v frozen<list<int>>)",
			"ks.t", "the type of a column cannot be altered"},
		{"regular to static", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY (a, b))", "CREATE TABLE ks.t (a int, b int, v text static, PRIMARY KEY (a, b))",
			"ks.t", "column v changes from regular to static: a column cannot become static or regular once created"},
		{"static to regular", "CREATE TABLE ks.t (a int, b int, v text static, PRIMARY KEY (a, b))", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY (a, b))",
			"ks.t", "changes from static to regular"},
		{"counter added to a non-counter table", "CREATE TABLE ks.t (id int PRIMARY KEY)", "CREATE TABLE ks.t (id int PRIMARY KEY, n counter)",
			"ks.t", "a table cannot change between counter and non-counter"},
		{"regular column added to a counter table", "CREATE TABLE ks.t (id int PRIMARY KEY, n counter)", "CREATE TABLE ks.t (id int PRIMARY KEY, v text)",
			"ks.t", "column v is a non-counter column added to a counter table: a table cannot change between counter and non-counter"},
		{"dropped column re-added with another type", "CREATE TABLE ks.t (id int PRIMARY KEY, v int, w text); ALTER TABLE ks.t DROP v", "CREATE TABLE ks.t (id int PRIMARY KEY, w text, v boolean)",
			"ks.t", "column v was dropped before as int and cannot come back as boolean: Cassandra re-adds a dropped column only with a type that reads its old values"},
		{"dropped static column re-added as regular", "CREATE TABLE ks.t (a int, b int, s text static, PRIMARY KEY (a, b)); ALTER TABLE ks.t DROP s", "CREATE TABLE ks.t (a int, b int, s text, PRIMARY KEY (a, b))",
			"ks.t", "column s was dropped before as a static column and cannot come back as a regular one: Cassandra re-adds a dropped column only as the kind (static or regular) it was dropped as"},
		{"dropped regular column re-added as static", "CREATE TABLE ks.t (a int, b int, v text, PRIMARY KEY (a, b)); ALTER TABLE ks.t DROP v", "CREATE TABLE ks.t (a int, b int, v text static, PRIMARY KEY (a, b))",
			"ks.t", "column v was dropped before as a regular column and cannot come back as a static one"},
		{"dropped counter re-added", "CREATE TABLE ks.t (id int PRIMARY KEY, n counter, m counter); ALTER TABLE ks.t DROP n", "CREATE TABLE ks.t (id int PRIMARY KEY, m counter, n counter)",
			"ks.t", "Cassandra refuses to re-add a dropped counter column"},
		{"type field removed", "CREATE TYPE ks.u (a int, b text)", "CREATE TYPE ks.u (a int)",
			"ks.u", "field b is removed: Cassandra cannot drop a field of a user type"},
		{"type field retyped", "CREATE TYPE ks.u (a int, b text)", "CREATE TYPE ks.u (a int, b blob)",
			"ks.u", "field b changes type from text to blob: the type of a field of a user type cannot be altered (Cassandra disabled ALTER TYPE ... ALTER ... TYPE, CASSANDRA-12443)"},
		{"type fields reordered", "CREATE TYPE ks.u (a int, b text)", "CREATE TYPE ks.u (b text, a int)",
			"ks.u", "the fields are reordered, from (a, b) to (b, a): the fields of a user type are positional"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from := mustLoad(t, ksHead+c.from)
			to := mustLoad(t, ksHead+c.to)
			_, err := Diff(from, to, Options{})
			var ie *ImpossibleError
			if !errors.As(err, &ie) {
				t.Fatalf("want an *ImpossibleError, got %v", err)
			}
			found := false
			for _, ch := range ie.Changes {
				found = found || ch.Object == c.object && strings.Contains(ch.Reason, c.rule) && ch.Recreatable
			}
			if !found {
				t.Fatalf("no change of %s names %q:\n%v", c.object, c.rule, err)
			}
			if !strings.Contains(err.Error(), "allowing recreation plans such changes") {
				t.Errorf("the error does not say AllowRecreate would plan it: %v", err)
			}
			p, err := Diff(from, to, Options{AllowRecreate: true})
			if err != nil {
				t.Fatal(err)
			}
			checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
			drop, create := "DROP TABLE "+c.object, "CREATE TABLE "+c.object
			if strings.HasPrefix(c.from, "CREATE TYPE") {
				drop, create = "DROP TYPE "+c.object, "CREATE TYPE "+c.object
			}
			if len(p.Statements) != 2 || p.Statements[0].CQL != drop || !strings.HasPrefix(p.Statements[1].CQL, create+" (") {
				t.Fatalf("want %s and %s, got:\n%s", drop, create, planText(p))
			}
			if p.Statements[0].Destructive != strings.HasPrefix(drop, "DROP TABLE") || p.Destructive != p.Statements[0].Destructive {
				t.Errorf("destructive marks: %+v", p)
			}
		})
	}
}

// TestTypeInAClusteringKeyGainsFields: a type used only in a clustering
// key gains its new field with ALTER TYPE ADD, as Cassandra and ScyllaDB
// allow.
func TestTypeInAClusteringKeyGainsFields(t *testing.T) {
	from := mustLoad(t, ksHead+"CREATE TYPE ks.u (a int); CREATE TABLE ks.t (p int, c frozen<u>, PRIMARY KEY (p, c))")
	to := mustLoad(t, ksHead+"CREATE TYPE ks.u (a int, b text); CREATE TABLE ks.t (p int, c frozen<u>, PRIMARY KEY (p, c))")
	p, err := Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if text := planText(p); !strings.Contains(text, "ALTER TYPE ks.u ADD b text;") || strings.Contains(text, "DROP") {
		t.Fatalf("plan:\n%s\nwant ALTER TYPE ks.u ADD b text and no DROP", text)
	}
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
}

// TestTypeInAKeyIsRecreated: a user type used in a partition key,
// directly or inside another type, gains no fields in place (the rule of
// Cassandra and ScyllaDB that metalog's admission follows), so a field
// added to it is impossible in place, and with AllowRecreate the type and
// the tables whose keys use it are dropped and created again. A type used
// only in a clustering key gains the field in place.
func TestTypeInAKeyIsRecreated(t *testing.T) {
	for _, c := range []struct{ name, from, to, column string }{
		{"partition key", "CREATE TYPE ks.u (a int); CREATE TABLE ks.t (id frozen<u> PRIMARY KEY, v text)",
			"CREATE TYPE ks.u (a int, b text); CREATE TABLE ks.t (id frozen<u> PRIMARY KEY, v text)", "id"},
		{"inside a partition key", "CREATE TYPE ks.u (a int); CREATE TYPE ks.w (x frozen<u>); CREATE TABLE ks.t (p frozen<w>, c int, PRIMARY KEY ((p), c))",
			"CREATE TYPE ks.u (a int, b text); CREATE TYPE ks.w (x frozen<u>); CREATE TABLE ks.t (p frozen<w>, c int, PRIMARY KEY ((p), c))", "p"},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, to := mustLoad(t, ksHead+c.from), mustLoad(t, ksHead+c.to)
			_, err := Diff(from, to, Options{})
			var ie *ImpossibleError
			want := "it gains fields and is used in the partition key of table ks.t (column " + c.column + "): a user type in a partition key gains no fields (Cassandra's and ScyllaDB's rule"
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
				t.Fatalf("without AllowRecreate: %v, want an ImpossibleError saying %q", err, want)
			}
			p, err := Diff(from, to, Options{AllowRecreate: true})
			if err != nil {
				t.Fatal(err)
			}
			text := planText(p)
			for _, st := range []string{"DROP TABLE ks.t;", "DROP TYPE ks.u;", "CREATE TYPE ks.u (", "CREATE TABLE ks.t ("} {
				if !strings.Contains(text, st) {
					t.Errorf("the plan lacks %s:\n%s", st, text)
				}
			}
			if !p.Destructive {
				t.Errorf("recreating the table is not marked destructive:\n%s", text)
			}
			checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
		})
	}
}

// TestRecreatedTypeCascades checks that recreating a type recreates the
// tables and types that use it (a type cannot be dropped while used), in
// an order that applies, and that a table dropping its column of that type
// is altered instead (with DropColumns); and that a kept table (without
// Prune) or a kept column (without DropColumns) using it makes the change
// impossible even with AllowRecreate.
func TestRecreatedTypeCascades(t *testing.T) {
	from := mustLoad(t, ksHead+`CREATE TYPE ks.inner (a int, b text);
CREATE TYPE ks.outer (i frozen<inner>);
CREATE TABLE ks.users (id int PRIMARY KEY, home frozen<outer>, name text);
CREATE INDEX users_name ON ks.users (name);
CREATE TABLE ks.legacy (id int PRIMARY KEY, old frozen<inner>, v text);
CREATE TABLE ks.plain (id int PRIMARY KEY, v text)`)
	to := mustLoad(t, ksHead+`CREATE TYPE ks.inner (a int);
CREATE TYPE ks.outer (i frozen<inner>);
CREATE TABLE ks.users (id int PRIMARY KEY, home frozen<outer>, name text);
CREATE INDEX users_name ON ks.users (name);
CREATE TABLE ks.legacy (id int PRIMARY KEY, v text);
CREATE TABLE ks.plain (id int PRIMARY KEY, v text)`)
	_, err := Diff(from, to, Options{AllowRecreate: true})
	var ie *ImpossibleError
	if !errors.As(err, &ie) || len(ie.Changes) != 1 || ie.Changes[0].Recreatable || ie.Changes[0].Object != "ks.inner" ||
		!strings.Contains(ie.Changes[0].Reason, "column old of table ks.legacy, which the desired table lacks, uses it: DropColumns is off") {
		t.Fatalf("want the kept column's use reported: %v", err)
	}
	p, err := Diff(from, to, Options{AllowRecreate: true, DropColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ALTER TABLE ks.legacy DROP old",
		"DROP TABLE ks.users",
		"DROP TYPE ks.outer",
		"DROP TYPE ks.inner",
		"CREATE TYPE ks.inner (\n    a int\n)",
		"CREATE TYPE ks.outer (\n    i frozen<inner>\n)",
		"CREATE TABLE ks.users (\n    id int PRIMARY KEY,\n    home frozen<outer>,\n    name text\n)",
		"CREATE INDEX users_name ON ks.users (name)",
	}
	checkStatements(t, p, want)
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
	if !strings.Contains(p.Warnings[1], "DROP TABLE ks.users drops the table and its data, to create it again: column home uses type ks.outer, which is recreated") {
		t.Errorf("warnings: %q", p.Warnings)
	}

	kept := mustLoad(t, ksHead+`CREATE TYPE ks.inner (a int)`)
	_, err = Diff(from, kept, Options{AllowRecreate: true})
	if !errors.As(err, &ie) || len(ie.Changes) != 2 || ie.Changes[0].Recreatable || ie.Changes[1].Recreatable ||
		ie.Changes[0].Object != "ks.inner" || ie.Changes[1].Object != "ks.inner" ||
		!strings.Contains(ie.Changes[0].Reason, "type ks.outer, which the desired schema lacks, uses it: Prune is off") ||
		!strings.Contains(ie.Changes[1].Reason, "table ks.legacy, which the desired schema lacks, uses it: Prune is off") {
		t.Fatalf("want the kept type's and table's uses reported: %v", err)
	}
	if strings.Contains(err.Error(), "allowing recreation plans") {
		t.Errorf("the error offers AllowRecreate for a change it cannot plan: %v", err)
	}
	p, err = Diff(from, kept, Options{AllowRecreate: true, Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	checkEquivalent(t, applyPlan(t, from, p), kept, from, &equivalence{}, p)
}

// TestCounterColumnsReplaced checks that a counter table whose counters
// all change gets the new ones before the old ones go (DropColumns), so
// that it stays a counter table (ALTER TABLE refuses counters in a
// non-counter table); without DropColumns the old ones stay.
func TestCounterColumnsReplaced(t *testing.T) {
	from := mustLoad(t, ksHead+"CREATE TABLE ks.c (id int PRIMARY KEY, old counter)")
	to := mustLoad(t, ksHead+"CREATE TABLE ks.c (id int PRIMARY KEY, new counter)")
	p, err := Diff(from, to, Options{DropColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"ALTER TABLE ks.c ADD new counter", "ALTER TABLE ks.c DROP old"})
	checkEquivalent(t, applyPlan(t, from, p), to, from, &equivalence{}, p)
	p, err = Diff(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatements(t, p, []string{"ALTER TABLE ks.c ADD new counter"})
	checkConverged(t, applyPlan(t, from, p), to, Options{})
}

// checkStatements fails unless p's statements are want.
func checkStatements(t *testing.T, p Plan, want []string) {
	t.Helper()
	got := make([]string, len(p.Statements))
	for i, st := range p.Statements {
		got[i] = st.CQL
	}
	if strings.Join(got, ";\n") != strings.Join(want, ";\n") {
		t.Fatalf("statements:\n%s\nwant:\n%s", strings.Join(got, ";\n"), strings.Join(want, ";\n"))
	}
}

// describeKS is DESCRIBE of keyspace ks of s, "" when s lacks it.
func describeKS(s schema.Schema, ks string) string {
	k, ok := s.Keyspace(ks)
	if !ok {
		return ""
	}
	return describe.Keyspace(k)
}
