package guardrails_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// parse returns the single statement of text.
func parse(t testing.TB, text string) schema.Statement {
	t.Helper()
	stmts, err := cql.Parse(text)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("parse %q: %v (%d statements)", text, err, len(stmts))
	}
	return stmts[0].Statement
}

// build applies the statements of text, without guardrails.
func build(t testing.TB, text string) schema.Schema {
	t.Helper()
	var s schema.Schema
	stmts, err := cql.Parse(text)
	if err != nil {
		t.Fatalf("parse setup: %v", err)
	}
	for i, p := range stmts {
		if s, _, _, err = schema.Apply(s, p.Statement, schema.Env{Epoch: uint64(i + 1)}); err != nil {
			t.Fatalf("setup %s %s: %v", p.Statement.Kind(), p.Statement.Object(), err)
		}
	}
	return s
}

// settings returns the defaults with the given name=value pairs set,
// validated.
func settings(t testing.TB, pairs ...string) guardrails.Settings {
	t.Helper()
	g := unvalidated(t, pairs...)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// unvalidated returns the defaults with the given name=value pairs set,
// not validated.
func unvalidated(t testing.TB, pairs ...string) guardrails.Settings {
	t.Helper()
	g := guardrails.Defaults()
	for _, p := range pairs {
		name, value, _ := strings.Cut(p, "=")
		var err error
		if g, err = g.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// check prepares, applies and checks stmt on before.
func check(t testing.TB, g guardrails.Settings, before schema.Schema, st schema.Statement, maxMutation int64) ([]guardrails.Warning, error) {
	t.Helper()
	st, warnings := guardrails.Prepare(g, st)
	if st == nil {
		return warnings, nil
	}
	after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1000})
	if err != nil {
		t.Fatalf("apply %s %s: %v", st.Kind(), st.Object(), err)
	}
	more, err := guardrails.Check(g, guardrails.Input{Statement: st, Result: res, Before: before, After: after, MaxMutationSize: maxMutation})
	return append(warnings, more...), err
}

const ks = `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};`

const ksTable = ks + `CREATE TABLE ks.t (id int PRIMARY KEY, a int, b int);`

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		settings []string
		setup    string
		stmt     string
		max      int64  // MaxMutationSize
		warn     string // guardrail of the expected warning
		fail     string // guardrail of the expected failure
		message  string // exact message of the warning or failure, if given
	}{
		// keyspaces
		{name: "keyspaces warn", settings: []string{"keyspaces_warn_threshold=1"}, setup: ks,
			stmt: `CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, warn: "keyspaces_warn_threshold",
			message: "Guardrail keyspaces_warn_threshold violated: Creating keyspace k2, current number of keyspaces 2 exceeds warning threshold of 1."},
		{name: "keyspaces fail", settings: []string{"keyspaces_fail_threshold=1"}, setup: ks,
			stmt: `CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, fail: "keyspaces_fail_threshold",
			message: "Guardrail keyspaces_fail_threshold violated: Cannot have more than 1 keyspaces, aborting the creation of keyspace k2"},
		{name: "keyspaces at threshold", settings: []string{"keyspaces_warn_threshold=2", "keyspaces_fail_threshold=2"}, setup: ks,
			stmt: `CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`},
		// tables
		{name: "tables warn", settings: []string{"tables_warn_threshold=1"}, setup: ksTable,
			stmt: `CREATE TABLE ks.t2 (id int PRIMARY KEY)`, warn: "tables_warn_threshold",
			message: "Guardrail tables_warn_threshold violated: Creating table ks.t2, current number of tables 2 exceeds warning threshold of 1."},
		{name: "tables fail", settings: []string{"tables_warn_threshold=-1", "tables_fail_threshold=1"}, setup: ksTable,
			stmt: `CREATE TABLE ks.t2 (id int PRIMARY KEY)`, fail: "tables_fail_threshold",
			message: "Guardrail tables_fail_threshold violated: Cannot have more than 1 tables, aborting the creation of table ks.t2"},
		{name: "tables fail before warn", settings: []string{"tables_warn_threshold=0", "tables_fail_threshold=1"}, setup: ksTable,
			stmt: `CREATE TABLE ks.t2 (id int PRIMARY KEY)`, fail: "tables_fail_threshold"},
		{name: "tables fail on CREATE TABLE LIKE", settings: []string{"tables_warn_threshold=-1", "tables_fail_threshold=1"}, setup: ksTable,
			stmt: `CREATE TABLE ks.t2 LIKE ks.t`, fail: "tables_fail_threshold",
			message: "Guardrail tables_fail_threshold violated: Cannot have more than 1 tables, aborting the creation of table ks.t2"},
		{name: "columns of CREATE TABLE LIKE", settings: []string{"columns_per_table_warn_threshold=2"}, setup: ksTable,
			stmt: `CREATE TABLE ks.t2 LIKE ks.t`, warn: "columns_per_table_warn_threshold"},
		{name: "tables no-op", settings: []string{"tables_warn_threshold=-1", "tables_fail_threshold=0"}, setup: ksTable,
			stmt: `CREATE TABLE IF NOT EXISTS ks.t (id int PRIMARY KEY)`},
		{name: "tables not checked on drop", settings: []string{"tables_warn_threshold=-1", "tables_fail_threshold=0"}, setup: ksTable + `CREATE TABLE ks.t2 (id int PRIMARY KEY);`,
			stmt: `DROP TABLE ks.t2`},
		// columns_per_table
		{name: "columns create warn", settings: []string{"columns_per_table_warn_threshold=2"}, setup: ks,
			stmt: `CREATE TABLE ks.c (id int PRIMARY KEY, a int, b int)`, warn: "columns_per_table_warn_threshold",
			message: "Guardrail columns_per_table_warn_threshold violated: The table ks.c has 3 columns, this exceeds the warning threshold of 2."},
		{name: "columns create fail", settings: []string{"columns_per_table_fail_threshold=2"}, setup: ks,
			stmt: `CREATE TABLE ks.c (id int PRIMARY KEY, a int, b int)`, fail: "columns_per_table_fail_threshold",
			message: "Guardrail columns_per_table_fail_threshold violated: Tables cannot have more than 2 columns, but 3 provided for table ks.c"},
		{name: "columns add warn", settings: []string{"columns_per_table_warn_threshold=3"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t ADD c int`, warn: "columns_per_table_warn_threshold"},
		{name: "columns add fail", settings: []string{"columns_per_table_fail_threshold=3"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t ADD (c int, d int)`, fail: "columns_per_table_fail_threshold",
			message: "Guardrail columns_per_table_fail_threshold violated: Tables cannot have more than 3 columns, but 5 provided for table ks.t"},
		{name: "columns not checked on drop", settings: []string{"columns_per_table_fail_threshold=1"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t DROP a`},
		// secondary indexes
		{name: "indexes warn", settings: []string{"secondary_indexes_per_table_warn_threshold=1"}, setup: ksTable + `CREATE INDEX ia ON ks.t (a);`,
			stmt: `CREATE INDEX ib ON ks.t (b)`, warn: "secondary_indexes_per_table_warn_threshold",
			message: "Guardrail secondary_indexes_per_table_warn_threshold violated: Creating secondary index ks.ib, current number of indexes 2 exceeds warning threshold of 1."},
		{name: "indexes fail", settings: []string{"secondary_indexes_per_table_fail_threshold=1"}, setup: ksTable + `CREATE INDEX ia ON ks.t (a);`,
			stmt: `CREATE INDEX ON ks.t (b)`, fail: "secondary_indexes_per_table_fail_threshold",
			message: "Guardrail secondary_indexes_per_table_fail_threshold violated: Tables cannot have more than 1 secondary indexes, aborting the creation of secondary index ks.t_b_idx"},
		{name: "indexes per table", settings: []string{"secondary_indexes_per_table_fail_threshold=1"}, setup: ksTable + `CREATE TABLE ks.u (id int PRIMARY KEY, a int); CREATE INDEX ia ON ks.u (a);`,
			stmt: `CREATE INDEX ib ON ks.t (b)`},
		{name: "indexes disabled", settings: []string{"secondary_indexes_enabled=false"}, setup: ksTable,
			stmt: `CREATE INDEX ib ON ks.t (b)`, fail: "secondary_indexes_enabled",
			message: "Guardrail secondary_indexes_enabled violated: User creation of secondary indexes is not allowed: CREATE INDEX ks.ib"},
		{name: "index drop allowed", settings: []string{"secondary_indexes_enabled=false", "secondary_indexes_per_table_fail_threshold=0"}, setup: ksTable + `CREATE INDEX ia ON ks.t (a);`,
			stmt: `DROP INDEX ks.ia`},
		// fields_per_udt
		{name: "fields create warn", settings: []string{"fields_per_udt_warn_threshold=1"}, setup: ks,
			stmt: `CREATE TYPE ks.ut (a int, b text)`, warn: "fields_per_udt_warn_threshold",
			message: "Guardrail fields_per_udt_warn_threshold violated: The user type ks.ut has 2 columns, this exceeds the warning threshold of 1."},
		{name: "fields create fail", settings: []string{"fields_per_udt_fail_threshold=1"}, setup: ks,
			stmt: `CREATE TYPE ks.ut (a int, b text)`, fail: "fields_per_udt_fail_threshold",
			message: "Guardrail fields_per_udt_fail_threshold violated: User types cannot have more than 1 columns, but 2 provided for user type ks.ut."},
		{name: "fields add warn", settings: []string{"fields_per_udt_warn_threshold=2"}, setup: ks + `CREATE TYPE ks.ut (a int, b text);`,
			stmt: `ALTER TYPE ks.ut ADD c int`, warn: "fields_per_udt_warn_threshold"},
		{name: "fields add fail", settings: []string{"fields_per_udt_fail_threshold=2"}, setup: ks + `CREATE TYPE ks.ut (a int, b text);`,
			stmt: `ALTER TYPE ks.ut ADD c int`, fail: "fields_per_udt_fail_threshold"},
		{name: "fields rename", settings: []string{"fields_per_udt_fail_threshold=1"}, setup: ks + `CREATE TYPE ks.ut (a int, b text);`,
			stmt: `ALTER TYPE ks.ut RENAME a TO z`},
		// vector_dimensions
		{name: "vector create warn", settings: []string{"vector_dimensions_warn_threshold=4"}, setup: ks,
			stmt: `CREATE TABLE ks.v (id int PRIMARY KEY, e vector<float, 5>)`, warn: "vector_dimensions_warn_threshold",
			message: "Guardrail vector_dimensions_warn_threshold violated: Column e of table ks.v has a vector of 5 dimensions, this exceeds the warning threshold of 4."},
		{name: "vector create fail", settings: []string{"vector_dimensions_fail_threshold=4"}, setup: ks,
			stmt: `CREATE TABLE ks.v (id int PRIMARY KEY, e vector<float, 5>)`, fail: "vector_dimensions_fail_threshold",
			message: "Guardrail vector_dimensions_fail_threshold violated: Column e of table ks.v has a vector of 5 dimensions, this exceeds the failure threshold of 4."},
		{name: "vector nested", settings: []string{"vector_dimensions_fail_threshold=4"}, setup: ks,
			stmt: `CREATE TABLE ks.v (id int PRIMARY KEY, e list<frozen<tuple<int, vector<float, 8>>>>)`, fail: "vector_dimensions_fail_threshold"},
		{name: "vector small", settings: []string{"vector_dimensions_fail_threshold=4"}, setup: ks,
			stmt: `CREATE TABLE ks.v (id int PRIMARY KEY, e vector<float, 4>)`},
		{name: "vector add warn", settings: []string{"vector_dimensions_warn_threshold=4"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t ADD e vector<float, 16>`, warn: "vector_dimensions_warn_threshold"},
		{name: "vector add fail", settings: []string{"vector_dimensions_fail_threshold=4"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t ADD e vector<float, 16>`, fail: "vector_dimensions_fail_threshold"},
		{name: "vector type fail", settings: []string{"vector_dimensions_fail_threshold=4"}, setup: ks,
			stmt: `CREATE TYPE ks.ut (a int, e vector<float, 16>)`, fail: "vector_dimensions_fail_threshold",
			message: "Guardrail vector_dimensions_fail_threshold violated: Field e of user type ks.ut has a vector of 16 dimensions, this exceeds the failure threshold of 4."},
		{name: "vector type add warn", settings: []string{"vector_dimensions_warn_threshold=4"}, setup: ks + `CREATE TYPE ks.ut (a int);`,
			stmt: `ALTER TYPE ks.ut ADD e vector<float, 16>`, warn: "vector_dimensions_warn_threshold"},
		// replication factor
		{name: "min rf warn", settings: []string{"minimum_replication_factor_warn_threshold=2"},
			stmt: ks, warn: "minimum_replication_factor_warn_threshold",
			message: "Guardrail minimum_replication_factor_warn_threshold violated: The keyspace ks has a replication factor of 1, below the warning threshold of 2."},
		{name: "min rf fail", settings: []string{"minimum_replication_factor_fail_threshold=2"},
			stmt: ks, fail: "minimum_replication_factor_fail_threshold",
			message: "Guardrail minimum_replication_factor_fail_threshold violated: The keyspace ks has a replication factor of 1, below the failure threshold of 2."},
		{name: "min rf nts per dc", settings: []string{"minimum_replication_factor_fail_threshold=2"},
			stmt: `CREATE KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 1}`, fail: "minimum_replication_factor_fail_threshold",
			message: "Guardrail minimum_replication_factor_fail_threshold violated: The keyspace n in data centre dc2 has a replication factor of 1, below the failure threshold of 2."},
		{name: "min rf nts ok", settings: []string{"minimum_replication_factor_fail_threshold=2"},
			stmt: `CREATE KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}`},
		{name: "min rf alter", settings: []string{"minimum_replication_factor_fail_threshold=2"}, setup: `CREATE KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3};`,
			stmt: `ALTER KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 1}`, fail: "minimum_replication_factor_fail_threshold"},
		{name: "min rf durable writes only", settings: []string{"minimum_replication_factor_fail_threshold=2"}, setup: ks,
			stmt: `ALTER KEYSPACE ks WITH durable_writes = false`},
		{name: "max rf warn", settings: []string{"maximum_replication_factor_warn_threshold=3"},
			stmt: `CREATE KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 5}`, warn: "maximum_replication_factor_warn_threshold",
			message: "Guardrail maximum_replication_factor_warn_threshold violated: The keyspace n in data centre dc1 has a replication factor of 5, above the warning threshold of 3."},
		{name: "max rf fail", settings: []string{"maximum_replication_factor_fail_threshold=3"}, setup: ks,
			stmt: `ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 4}`, fail: "maximum_replication_factor_fail_threshold",
			message: "Guardrail maximum_replication_factor_fail_threshold violated: The keyspace ks has a replication factor of 4, above the failure threshold of 3."},
		// flags
		{name: "simplestrategy create", settings: []string{"simplestrategy_enabled=false"},
			stmt: ks, fail: "simplestrategy_enabled",
			message: "Guardrail simplestrategy_enabled violated: SimpleStrategy is not allowed: CREATE KEYSPACE ks"},
		{name: "simplestrategy alter", settings: []string{"simplestrategy_enabled=false"}, setup: `CREATE KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3};`,
			stmt: `ALTER KEYSPACE n WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`, fail: "simplestrategy_enabled"},
		{name: "simplestrategy nts", settings: []string{"simplestrategy_enabled=false"},
			stmt: `CREATE KEYSPACE n WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3}`},
		{name: "drop keyspace", settings: []string{"drop_keyspace_enabled=false"}, setup: ks,
			stmt: `DROP KEYSPACE ks`, fail: "drop_keyspace_enabled",
			message: "Guardrail drop_keyspace_enabled violated: DROP KEYSPACE functionality is not allowed: DROP KEYSPACE ks"},
		{name: "drop keyspace no-op", settings: []string{"drop_keyspace_enabled=false"},
			stmt: `DROP KEYSPACE IF EXISTS ks`},
		{name: "drop table", settings: []string{"drop_truncate_table_enabled=false"}, setup: ksTable,
			stmt: `DROP TABLE ks.t`, fail: "drop_truncate_table_enabled",
			message: "Guardrail drop_truncate_table_enabled violated: DROP and TRUNCATE TABLE functionality is not allowed: DROP TABLE ks.t"},
		{name: "alter table add", settings: []string{"alter_table_enabled=false"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t ADD c int`, fail: "alter_table_enabled",
			message: "Guardrail alter_table_enabled violated: User access to ALTER TABLE statement for column mutation is not allowed: ALTER TABLE ks.t"},
		{name: "alter table drop", settings: []string{"alter_table_enabled=false"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t DROP a`, fail: "alter_table_enabled"},
		{name: "alter table with", settings: []string{"alter_table_enabled=false"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t WITH comment = 'x'`},
		{name: "uncompressed create", settings: []string{"uncompressed_tables_enabled=false"}, setup: ks,
			stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH compression = {'enabled': 'false'}`, fail: "uncompressed_tables_enabled",
			message: "Guardrail uncompressed_tables_enabled violated: Uncompressed table is not allowed: CREATE TABLE ks.u"},
		{name: "uncompressed alter", settings: []string{"uncompressed_tables_enabled=false"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t WITH compression = {'enabled': false}`, fail: "uncompressed_tables_enabled"},
		{name: "compressed", settings: []string{"uncompressed_tables_enabled=false"}, setup: ks,
			stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 16}`},
		// table properties
		{name: "properties disallowed", settings: []string{"table_properties_disallowed=gc_grace_seconds,comment"}, setup: ks,
			stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH comment = 'x' AND default_time_to_live = 10`, fail: "table_properties_disallowed",
			message: "Guardrail table_properties_disallowed violated: Provided values [comment] are not allowed for Table Properties (disallowed values are: [comment, gc_grace_seconds])"},
		{name: "properties disallowed after LIKE", settings: []string{"table_properties_disallowed=comment"}, setup: ksTable,
			stmt: `CREATE TABLE ks.u LIKE ks.t WITH comment = 'x'`, fail: "table_properties_disallowed"},
		{name: "properties disallowed alter", settings: []string{"table_properties_disallowed=comment"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t WITH comment = 'x'`, fail: "table_properties_disallowed"},
		{name: "properties warned", settings: []string{"table_properties_warned=comment"}, setup: ksTable,
			stmt: `ALTER TABLE ks.t WITH comment = 'x'`, warn: "table_properties_warned",
			message: "Guardrail table_properties_warned violated: Provided values [comment] are not recommended for Table Properties (warned values are: [comment])"},
		{name: "properties ignored", settings: []string{"table_properties_ignored=comment"}, setup: ks,
			stmt: `CREATE TABLE ks.u (id int PRIMARY KEY) WITH comment = 'x' AND gc_grace_seconds = 5`, warn: "table_properties_ignored",
			message: "Guardrail table_properties_ignored violated: Ignoring provided values [comment] as they are not supported for Table Properties (ignored values are: [comment])"},
		// metadata_size
		{name: "metadata size warn", setup: ks, stmt: `CREATE TABLE ks.m (id int PRIMARY KEY)`, max: -1, warn: "metadata_size"},
		{name: "metadata size fail", setup: ks, stmt: `CREATE TABLE ks.m (id int PRIMARY KEY)`, max: -2, fail: "metadata_size"},
		{name: "metadata size shrink", setup: ksTable, stmt: `DROP TABLE ks.t`, max: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := build(t, tt.setup)
			st := parse(t, tt.stmt)
			max := tt.max
			if max < 0 {
				// -1: the change lands exactly at the limit; -2: one byte over.
				after, _, _, err := schema.Apply(before, st, schema.Env{Epoch: 1000})
				if err != nil {
					t.Fatal(err)
				}
				max = after.EncodedSize() + tt.max + 1
			}
			warnings, err := check(t, settings(t, tt.settings...), before, st, max)
			var f *guardrails.Failure
			switch {
			case tt.fail == "" && err != nil:
				t.Fatalf("unexpected failure: %v", err)
			case tt.fail != "":
				if !errors.Is(err, guardrails.ErrFailed) || !errors.As(err, &f) || f.Guardrail != tt.fail {
					t.Fatalf("got %v, want a failure of %s", err, tt.fail)
				}
				if tt.message != "" && err.Error() != tt.message {
					t.Errorf("message\n got %q\nwant %q", err.Error(), tt.message)
				}
			}
			if tt.warn == "" && len(warnings) > 0 {
				t.Fatalf("unexpected warnings %v", warnings)
			}
			if tt.warn != "" {
				if len(warnings) != 1 || warnings[0].Guardrail != tt.warn {
					t.Fatalf("warnings %v, want one of %s", warnings, tt.warn)
				}
				if tt.message != "" && warnings[0].Message != tt.message {
					t.Errorf("message\n got %q\nwant %q", warnings[0].Message, tt.message)
				}
			}
			// With the defaults (-1 and true everywhere but tables_warn_threshold
			// 1000) and no max_mutation_size, the same statement passes silently.
			warnings, err = check(t, guardrails.Defaults(), before, st, 0)
			if err != nil || len(warnings) > 0 {
				t.Errorf("with the defaults: warnings %v, err %v", warnings, err)
			}
		})
	}
}

func TestCheckNilAndNoop(t *testing.T) {
	g := settings(t, "tables_warn_threshold=-1", "tables_fail_threshold=0")
	if w, err := guardrails.Check(g, guardrails.Input{}); w != nil || err != nil {
		t.Fatalf("empty input: %v %v", w, err)
	}
	s := build(t, ksTable)
	st := parse(t, `CREATE TABLE IF NOT EXISTS ks.t (id int PRIMARY KEY)`)
	_, _, res, _ := schema.Apply(s, st, schema.Env{Epoch: 9})
	if w, err := guardrails.Check(g, guardrails.Input{Statement: st, Result: res, Before: s, After: s, MaxMutationSize: 1}); w != nil || err != nil {
		t.Fatalf("no-op: %v %v", w, err)
	}
}

// schemaWithTables returns a schema with one keyspace of n tables.
func schemaWithTables(t testing.TB, n int) schema.Schema {
	s := build(t, ksTable)
	proto, _ := s.Table("ks", "t")
	b := schema.NewBuilder(s)
	for i := range n - 1 {
		tbl := *proto
		tbl.Name = "t" + strconv.Itoa(i)
		tbl.ID = schema.TableID(uint64(i+100), 0)
		if err := b.PutTable(&tbl); err != nil {
			t.Fatal(err)
		}
	}
	return b.Schema()
}

// TestCheckDoesNotWalkTables checks that Check allocates as much with
// 8,000 tables as with 1,000, on the silent path and on warning and
// failure paths, so nothing in it is proportional to the number of tables.
func TestCheckDoesNotWalkTables(t *testing.T) {
	g := settings(t, "tables_warn_threshold=10", "columns_per_table_fail_threshold=3",
		"secondary_indexes_per_table_warn_threshold=0", "table_properties_warned=comment")
	statements := []string{
		`CREATE TABLE ks.new (id int PRIMARY KEY, v text) WITH comment = 'c'`,
		`ALTER TABLE ks.t5 ADD (c int, d int)`,
		`CREATE INDEX ON ks.t5 (a)`,
		`DROP TABLE ks.t5`,
		`CREATE TYPE ks.ut (a int, b text)`,
		`ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
	}
	small, large := schemaWithTables(t, 1000), schemaWithTables(t, 8000)
	for _, text := range statements {
		st := parse(t, text)
		allocs := func(before schema.Schema) float64 {
			after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1})
			if err != nil {
				t.Fatal(err)
			}
			in := guardrails.Input{Statement: st, Result: res, Before: before, After: after, MaxMutationSize: 16 << 20}
			return testing.AllocsPerRun(100, func() { _, _ = guardrails.Check(g, in) })
		}
		a, b := allocs(small), allocs(large)
		t.Logf("%s: %v allocations with 1000 tables, %v with 8000", text, a, b)
		if a != b {
			t.Errorf("%s: %v allocations with 1000 tables, %v with 8000", text, a, b)
		}
	}
}

func BenchmarkCheckCreateTable(b *testing.B) {
	g := guardrails.Defaults()
	before := schemaWithTables(b, 8000)
	st := parse(b, `CREATE TABLE ks.new (id int PRIMARY KEY, v text)`)
	after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1})
	if err != nil {
		b.Fatal(err)
	}
	in := guardrails.Input{Statement: st, Result: res, Before: before, After: after, MaxMutationSize: 16 << 20}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = guardrails.Check(g, in)
	}
}

// TestCheckSilentDoesNotAllocate checks that Check costs no allocation
// when no guardrail triggers.
func TestCheckSilentDoesNotAllocate(t *testing.T) {
	before := build(t, ksTable+`CREATE TYPE ks.ut0 (a int);`)
	for _, text := range []string{
		`CREATE TABLE ks.new (id int PRIMARY KEY, v vector<float, 3>)`,
		`ALTER TABLE ks.t ADD c int`,
		`CREATE TYPE ks.ut (a int, b text)`,
		`DROP TABLE ks.t`,
		`CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
	} {
		st := parse(t, text)
		after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		in := guardrails.Input{Statement: st, Result: res, Before: before, After: after, MaxMutationSize: 16 << 20}
		g := guardrails.Defaults()
		if n := testing.AllocsPerRun(100, func() { _, _ = guardrails.Check(g, in) }); n != 0 {
			t.Errorf("%s: %v allocations", text, n)
		}
	}
}

func TestMetadataSizeCanBeDisabled(t *testing.T) {
	before := schema.Schema{}
	st := &schema.CreateKeyspace{Name: "ks", Replication: schema.Replication{Class: "SimpleStrategy", Options: map[string]string{"replication_factor": "1"}}, DurableWrites: true}
	after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := guardrails.Input{Statement: st, Result: res, Before: before, After: after, MaxMutationSize: 10}
	if _, err := guardrails.Check(guardrails.Defaults(), in); !errors.Is(err, guardrails.ErrFailed) {
		t.Fatalf("metadata_size on: %v, want a refusal", err)
	}
	off, err := guardrails.Defaults().Set("metadata_size_enabled", "false")
	if err != nil {
		t.Fatal(err)
	}
	if w, err := guardrails.Check(off, in); err != nil || len(w) != 0 {
		t.Fatalf("metadata_size off: %v %v", w, err)
	}
}

// TestMessagesQuoteLongNamesBounded checks that guardrail messages cut the
// names they quote (a column name may be 1024 bytes, a data centre name
// any length) and that setting errors cut the name or value they quote.
func TestMessagesQuoteLongNamesBounded(t *testing.T) {
	col, dc := strings.Repeat("c", 1000), strings.Repeat("d", 1<<20)
	g := settings(t, "vector_dimensions_warn_threshold=4", "maximum_replication_factor_warn_threshold=2")
	tests := []struct{ setup, stmt, want string }{
		{ks, `CREATE TABLE ks.v (id int PRIMARY KEY, "` + col + `" vector<float, 5>)`, " (1000 bytes) of table ks.v has a vector of 5 dimensions"},
		{ks + `CREATE TABLE ks.v (id int PRIMARY KEY);`, `ALTER TABLE ks.v ADD "` + col + `" vector<float, 5>`, " (1000 bytes) of table ks.v has a vector of 5 dimensions"},
		{"", `CREATE KEYSPACE k WITH replication = {'class': 'NetworkTopologyStrategy', '` + dc + `': 3}`, " (1048576 bytes) has a replication factor of 3, above the warning threshold of 2"},
	}
	for _, tt := range tests {
		warnings, err := check(t, g, build(t, tt.setup), parse(t, tt.stmt), 0)
		if err != nil || len(warnings) != 1 {
			t.Fatalf("%.60s: %v, %v", tt.stmt, warnings, err)
		}
		if msg := warnings[0].Message; len(msg) > 1024 || !strings.Contains(msg, tt.want) {
			t.Errorf("%.60s: warning of %d bytes: %s", tt.stmt, len(msg), strings.ReplaceAll(msg, strings.Repeat("d", 200), "d..."))
		}
	}
	long := strings.Repeat("x", 1<<20)
	for _, pair := range [][2]string{{long, "1"}, {"tables_warn_threshold", long}, {"secondary_indexes_enabled", long}, {"table_properties_ignored", long}} {
		_, err := guardrails.Defaults().Set(pair[0], pair[1])
		if err == nil || len(err.Error()) > 1024 || !strings.Contains(err.Error(), "(1048576 bytes)") {
			t.Errorf("Set(%.20s, %.20s): %.400v", pair[0], pair[1], err)
		}
	}
}

// TestCheckErrorsOnly checks that with Input.ErrorsOnly Check returns the
// same failure and no warning, and builds no warning's message: a warned
// statement costs fewer allocations, none for a CREATE TABLE (a pre-check
// asks for that; CREATE INDEX still lists the table's indexes to count
// them).
func TestCheckErrorsOnly(t *testing.T) {
	g := settings(t, "tables_warn_threshold=10", "columns_per_table_fail_threshold=3",
		"secondary_indexes_per_table_warn_threshold=0", "table_properties_warned=comment")
	before := schemaWithTables(t, 1000)
	for _, tc := range []struct {
		text string
		fail bool
	}{
		{`CREATE TABLE ks.new (id int PRIMARY KEY, v text) WITH comment = 'c'`, false},
		{`CREATE INDEX ON ks.t5 (a)`, false},
		{`ALTER TABLE ks.t5 ADD (c int, d int)`, true},
	} {
		st := parse(t, tc.text)
		after, _, res, err := schema.Apply(before, st, schema.Env{Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		in := guardrails.Input{Statement: st, Result: res, Before: before, After: after, MaxMutationSize: 16 << 20}
		warns, wantErr := guardrails.Check(g, in)
		if (wantErr != nil) != tc.fail || !tc.fail && len(warns) == 0 {
			t.Fatalf("%s: warnings %v, error %v", tc.text, warns, wantErr)
		}
		in.ErrorsOnly = true
		warns, err = guardrails.Check(g, in)
		if len(warns) != 0 || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s errors only: warnings %v, error %v; want none and %v", tc.text, warns, err, wantErr)
		}
		only := testing.AllocsPerRun(100, func() { _, _ = guardrails.Check(g, in) })
		in.ErrorsOnly = false
		full := testing.AllocsPerRun(100, func() { _, _ = guardrails.Check(g, in) })
		t.Logf("%s: %v allocations, %v errors only", tc.text, full, only)
		if !tc.fail && !raceEnabled && (only >= full || strings.HasPrefix(tc.text, "CREATE TABLE") && only != 0) {
			t.Errorf("%s: %v allocations errors only, %v with warnings; want fewer, and none for CREATE TABLE", tc.text, only, full)
		}
	}
}
