package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

// maskBase is a keyspace with a table of many column types.
const maskBase = `CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE k.addr (street text, zip int);
CREATE TABLE k.t (id int, ck int, v text, a ascii, b blob, n bigint, f float, u uuid, tu timeuuid, ts timestamp,
  l list<int>, st set<text>, m map<text, int>, vec vector<float, 2>, fl frozen<list<int>>, ad frozen<addr>, du duration, s int static,
  PRIMARY KEY (id, ck)) WITH CLUSTERING ORDER BY (ck DESC);`

// maskEnv is the environment of the statements the mask tests check.
var maskEnv = schema.Env{Epoch: 100}

// TestMaskRules checks each rule of Cassandra's mask resolution
// (ColumnMask.Raw and the masking function factories) with Cassandra's
// message, and the masks that pass with the text DESCRIBE gives them.
func TestMaskRules(t *testing.T) {
	base, _ := schemakit.Exec(t, schema.Schema{}, maskBase)
	tests := []struct {
		stmt string
		want string // the mask of the column as DESCRIBE prints it, or the error's end
		col  string // the column to look at (v by default)
	}{
		// MASKED WITH DEFAULT is mask_default(), on any type.
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH DEFAULT", want: "system.mask_default()"},
		{stmt: "ALTER TABLE k.t ALTER ad MASKED WITH DEFAULT", col: "ad", want: "system.mask_default()"},
		{stmt: "ALTER TABLE k.t ALTER m MASKED WITH system.mask_null()", col: "m", want: "system.mask_null()"},
		{stmt: "ALTER TABLE k.t ALTER ck MASKED WITH mask_replace(-01)", col: "ck", want: "system.mask_replace(-1)"},
		{stmt: "ALTER TABLE k.t ALTER id MASKED WITH mask_replace(null)", col: "id", want: "system.mask_replace(null)"},
		{stmt: "ALTER TABLE k.t ALTER s MASKED WITH mask_replace(0)", col: "s", want: "system.mask_replace(0)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner(1, 2)", want: "system.mask_inner(1, 2)"},
		{stmt: "ALTER TABLE k.t ALTER a MASKED WITH mask_outer(1, null, '#')", col: "a", want: "system.mask_outer(1, null, '#')"},
		{stmt: "ALTER TABLE k.t ALTER b MASKED WITH mask_hash()", col: "b", want: "system.mask_hash()"},
		{stmt: "ALTER TABLE k.t ALTER b MASKED WITH mask_hash('SHA-512')", col: "b", want: "system.mask_hash('SHA-512')"},
		{stmt: "ALTER TABLE k.t ALTER l MASKED WITH mask_replace([1, 2])", col: "l", want: "system.mask_replace([1, 2])"},
		{stmt: "ALTER TABLE k.t ALTER st MASKED WITH mask_replace({'x'})", col: "st", want: "system.mask_replace({'x'})"},
		{stmt: "ALTER TABLE k.t ALTER st MASKED WITH mask_replace({})", col: "st", want: "system.mask_replace({})"},
		{stmt: "ALTER TABLE k.t ALTER m MASKED WITH mask_replace({'a': 1})", col: "m", want: "system.mask_replace({'a': 1})"},
		{stmt: "ALTER TABLE k.t ALTER vec MASKED WITH mask_replace([0.5, 1])", col: "vec", want: "system.mask_replace([0.5, 1])"},
		{stmt: "ALTER TABLE k.t ALTER f MASKED WITH mask_replace(1)", col: "f", want: "system.mask_replace(1)"},
		{stmt: "ALTER TABLE k.t ALTER ts MASKED WITH mask_replace('2020-01-01')", col: "ts", want: "system.mask_replace('2020-01-01')"},
		{stmt: "ALTER TABLE k.t ALTER n MASKED WITH mask_replace(3000000000)", col: "n", want: "system.mask_replace(3000000000)"},
		{stmt: "ALTER TABLE k.t ALTER tu MASKED WITH mask_replace(5a1c395e-b41f-11e5-9f22-ba0be0483c18)", col: "tu", want: "system.mask_replace(5a1c395e-b41f-11e5-9f22-ba0be0483c18)"},
		{stmt: "ALTER TABLE k.t ALTER du MASKED WITH mask_replace(1h30m)", col: "du", want: "system.mask_replace(1h30m)"},
		{stmt: "ALTER TABLE k.t ALTER du MASKED WITH mask_replace(-P1DT2H)", col: "du", want: "system.mask_replace(-P1DT2H)"},
		{stmt: "ALTER TABLE k.t ALTER f MASKED WITH mask_replace(- Infinity)", col: "f", want: "system.mask_replace(-Infinity)"},
		{stmt: "ALTER TABLE k.t ALTER f MASKED WITH mask_replace(NaN)", col: "f", want: "system.mask_replace(NaN)"},
		{stmt: "ALTER TABLE k.t ALTER f MASKED WITH mask_replace(1.)", col: "f", want: "system.mask_replace(1.)"},

		// The function: a native masking function, by name.
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_missing()", want: "Unable to find masking function for v, no declared function matches the signature mask_missing() (the native masking functions are mask_default, mask_hash, mask_inner, mask_null, mask_outer and mask_replace; masking with a user-defined function is not supported)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH system.mask_missing()", want: "Unable to find masking function for v, no declared function matches the signature system.mask_missing()"},
		{stmt: `ALTER TABLE k.t ALTER v MASKED WITH "Mask_Null"()`, want: "no declared function matches the signature Mask_Null() (the native masking functions are mask_default, mask_hash, mask_inner, mask_null, mask_outer and mask_replace; masking with a user-defined function is not supported)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH tojson()", want: "Not-masking function tojson() cannot be used for masking table columns"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH system.now()", want: "Not-masking function system.now() cannot be used for masking table columns"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH k.redact(1)", want: "masking with a user-defined function is not supported: k.redact(1) (the native masking functions are mask_default, mask_hash, mask_inner, mask_null, mask_outer and mask_replace)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH other.mask_null()", want: "masking with a user-defined function is not supported: other.mask_null()"},

		// The number of arguments, counting the masked value.
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_default(1)", want: "Invalid number of arguments for function system.mask_default(any)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_null(null)", want: "Invalid number of arguments for function system.mask_null(any)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_replace()", want: "Invalid number of arguments for function system.mask_replace(any, same)"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner(1)", want: "Invalid number of arguments for function system.mask_inner([text|varchar|ascii], int, int, [text])"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_outer(1, 2, '*', 3)", want: "Invalid number of arguments for function system.mask_outer([text|varchar|ascii], int, int, [text])"},
		{stmt: "ALTER TABLE k.t ALTER b MASKED WITH mask_hash('a', 'b')", col: "b", want: "Invalid number of arguments for function system.mask_hash(any, [text])"},

		// The types of the arguments.
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner('a', 'b')", want: "Function system.mask_inner requires an argument of type int, but found argument 'a' of type ascii"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner(1, 'é')", want: "Function system.mask_inner requires an argument of type int, but found argument 'é' of type text"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner(1, 3000000000)", want: "Function system.mask_inner requires an argument of type int, but found argument 3000000000 of type bigint"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner(1.5, 1)", want: "Function system.mask_inner requires an argument of type int, but found argument 1.5 of type double"},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_inner(1, 1, 1)", want: "Function system.mask_inner requires an argument of type text, but found argument 1 of type int"},
		{stmt: "ALTER TABLE k.t ALTER b MASKED WITH mask_hash(true)", col: "b", want: "Function system.mask_hash requires an argument of type text, but found argument true of type boolean"},
		{stmt: "ALTER TABLE k.t ALTER id MASKED WITH mask_inner(1, 1)", want: "Function system.mask_inner requires an argument of type [text|varchar|ascii], but found column id of type int"},
		{stmt: "ALTER TABLE k.t ALTER id MASKED WITH mask_replace('redacted')", want: "Invalid STRING constant ('redacted') for the mask of column id of type int"},
		{stmt: "ALTER TABLE k.t ALTER id MASKED WITH mask_replace(1h)", want: "Invalid DURATION constant (1h) for the mask of column id of type int"},
		{stmt: "ALTER TABLE k.t ALTER id MASKED WITH mask_replace(-NaN)", want: "Invalid FLOAT constant (-NaN) for the mask of column id of type int"},
		{stmt: "ALTER TABLE k.t ALTER ck MASKED WITH mask_replace(3000000000)", want: "Invalid INTEGER constant (3000000000) for the mask of column ck of type int"},
		{stmt: "ALTER TABLE k.t ALTER a MASKED WITH mask_replace('é')", want: "Invalid STRING constant ('é') for the mask of column a of type ascii"},
		{stmt: "ALTER TABLE k.t ALTER u MASKED WITH mask_replace(0x01)", want: "Invalid HEX constant (0x01) for the mask of column u of type uuid"},
		{stmt: "ALTER TABLE k.t ALTER tu MASKED WITH mask_replace(5a1c395e-b41f-41e5-9f22-ba0be0483c18)", want: "Invalid UUID constant (5a1c395e-b41f-41e5-9f22-ba0be0483c18) for the mask of column tu of type timeuuid"},
		{stmt: "ALTER TABLE k.t ALTER l MASKED WITH mask_replace({1})", want: "Invalid set literal {1} for the mask of column l of type list<int>"},
		{stmt: "ALTER TABLE k.t ALTER m MASKED WITH mask_replace({'a': 'b'})", want: "Invalid STRING constant ('b') for the mask of column m of type map<text, int>"},
		{stmt: "ALTER TABLE k.t ALTER vec MASKED WITH mask_replace([1.5])", want: "Invalid vector literal [1.5]: expected 2 elements, got 1 for the mask of column vec of type vector<float, 2>"},
		{stmt: "ALTER TABLE k.t ALTER ad MASKED WITH mask_replace({'street': 'x'})", want: "a literal of type frozen<addr> is not supported as a mask argument for the mask of column ad of type frozen<addr>"},

		// The return type must be the column's: mask_hash returns blob.
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH mask_hash()", want: "Masking function mask_hash() return type is blob. This is different to the type of the masked column v of type text. Masking functions can only be attached to table columns if they return the same data type as the masked column."},
		{stmt: "ALTER TABLE k.t ALTER v MASKED WITH system.mask_hash('MD5')", want: "Masking function system.mask_hash('MD5') return type is blob."},

		// The column.
		{stmt: "ALTER TABLE k.t ALTER nope MASKED WITH DEFAULT", want: "ALTER TABLE k.t: Column with name 'nope' doesn't exist on table 't'"},
		{stmt: "ALTER TABLE k.t ALTER nope DROP MASKED", want: "ALTER TABLE k.t: Column with name 'nope' doesn't exist on table 't'"},
	}
	for _, tt := range tests {
		col := tt.col
		if col == "" {
			col = "v"
		}
		s, diff, res, err := schemakit.ApplyOne(t, base, tt.stmt, maskEnv)
		if strings.HasPrefix(tt.want, "system.") {
			if err != nil {
				t.Errorf("%s: %v", tt.stmt, err)
				continue
			}
			tbl, _ := s.Table("k", "t")
			c, _ := tbl.Column(col)
			if c.Mask == nil || c.Mask.String() != tt.want || !res.Applied || len(diff.Changes) != 1 {
				t.Errorf("%s: mask %v (applied %v, %d changes), want %s", tt.stmt, c.Mask, res.Applied, len(diff.Changes), tt.want)
			}
			if !strings.Contains(describe.Table(tbl), " "+col+" ") || !strings.Contains(describe.Table(tbl), " MASKED WITH "+tt.want) {
				t.Errorf("%s: DESCRIBE lacks the mask:\n%s", tt.stmt, describe.Table(tbl))
			}
			continue
		}
		if err == nil || !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant an ErrInvalid containing %q", tt.stmt, err, tt.want)
		}
		if s.Digest() != base.Digest() {
			t.Errorf("%s: a refused mask changed the schema", tt.stmt)
		}
	}
}

// TestMaskStatements checks masks in CREATE TABLE and ALTER TABLE ADD,
// and the no-ops of ALTER: the same mask again, DROP MASKED of an
// unmasked column, ALTER IF EXISTS of a missing column.
func TestMaskStatements(t *testing.T) {
	base, _ := schemakit.Exec(t, schema.Schema{}, maskBase+`CREATE TABLE k.m (id int MASKED WITH DEFAULT PRIMARY KEY, v text MASKED WITH mask_inner(1, 1));`)
	tbl, _ := base.Table("k", "m")
	if c, _ := tbl.Column("id"); c.Mask == nil || c.Mask.Function != "mask_default" {
		t.Errorf("inline primary key mask: %+v", c)
	}
	want := "    id int MASKED WITH system.mask_default() PRIMARY KEY,\n    v text MASKED WITH system.mask_inner(1, 1)\n"
	if !strings.Contains(describe.Table(tbl), want) {
		t.Errorf("DESCRIBE:\n%s\nwant it to hold:\n%s", describe.Table(tbl), want)
	}
	for _, noop := range []string{
		"ALTER TABLE k.m ALTER v MASKED WITH mask_inner(1, 01)",
		"ALTER TABLE k.t ALTER v DROP MASKED",
		"ALTER TABLE k.m ALTER IF EXISTS nope MASKED WITH DEFAULT",
		"ALTER TABLE IF EXISTS k.nope ALTER v DROP MASKED",
	} {
		s, diff, res, err := schemakit.ApplyOne(t, base, noop, maskEnv)
		if err != nil || res.Applied || !diff.Empty() || s.Digest() != base.Digest() {
			t.Errorf("%s: err %v, applied %v, %d changes; want a no-op", noop, err, res.Applied, len(diff.Changes))
		}
	}
	s, _, _, err := schemakit.ApplyOne(t, base, "ALTER TABLE k.m ADD (w text MASKED WITH mask_outer(0, 0), x int static MASKED WITH mask_null())", maskEnv)
	if err == nil || !strings.Contains(err.Error(), "static") {
		t.Errorf("static column on a table without clustering: %v", err)
	}
	s, _, _, err = schemakit.ApplyOne(t, base, "ALTER TABLE k.t ADD (w text MASKED WITH mask_outer(0, 0), x int static MASKED WITH mask_null())", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	tt, _ := s.Table("k", "t")
	if w, _ := tt.Column("w"); w.Mask.String() != "system.mask_outer(0, 0)" {
		t.Errorf("added w: %+v", w)
	}
	if x, _ := tt.Column("x"); x.Kind != schema.Static || x.Mask.String() != "system.mask_null()" {
		t.Errorf("added x: %+v", x)
	}
	if _, _, _, err := schemakit.ApplyOne(t, base, "ALTER TABLE k.t ADD w int MASKED WITH mask_inner(1, 1)", maskEnv); err == nil || !strings.Contains(err.Error(), "requires an argument of type [text|varchar|ascii], but found column w of type int") {
		t.Errorf("ADD with a bad mask: %v", err)
	}
	s, _, _, err = schemakit.ApplyOne(t, base, "ALTER TABLE k.m ALTER v DROP MASKED", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Table("k", "m"); m.Columns[1].Mask != nil {
		t.Errorf("DROP MASKED left %v", m.Columns[1].Mask)
	}
	// Dropping a masked column drops its mask: added back, it has none.
	s, _ = schemakit.Exec(t, base, "ALTER TABLE k.t ADD z text MASKED WITH DEFAULT; ALTER TABLE k.t DROP z; ALTER TABLE k.t ADD z text")
	if z, _ := mustTable(t, s, "t").Column("z"); z.Mask != nil {
		t.Errorf("re-added column kept the mask %v", z.Mask)
	}
}

// mustTable returns table k.name of s.
func mustTable(t *testing.T, s schema.Schema, name string) *schema.Table {
	t.Helper()
	tbl, ok := s.Table("k", name)
	if !ok {
		t.Fatalf("no table k.%s", name)
	}
	return tbl
}

// TestMaskDigest checks that a mask, and each of its parts, changes the
// digest and the encoded size, that both equal their recomputation, and
// that dropping the mask restores the schema's digest.
func TestMaskDigest(t *testing.T) {
	before, _ := schemakit.Exec(t, schema.Schema{}, maskBase)
	digests := map[[32]byte]string{before.Digest(): "none"}
	for _, m := range []string{"DEFAULT", "mask_null()", "mask_inner(1, 2)", "mask_inner(2, 1)", "mask_inner(1, 2, '#')", "mask_outer(1, 2)"} {
		with, _ := schemakit.Exec(t, before, "ALTER TABLE k.t ALTER v MASKED WITH "+m)
		if prev, dup := digests[with.Digest()]; dup {
			t.Errorf("mask %s has the digest of %s", m, prev)
		}
		digests[with.Digest()] = m
		if with.Digest() != schema.ComputeDigest(with) || with.EncodedSize() != schema.ComputeEncodedSize(with) || with.EncodedSize() <= before.EncodedSize() {
			t.Errorf("mask %s: maintained digest or size is off", m)
		}
		back, _ := schemakit.Exec(t, with, "ALTER TABLE k.t ALTER v DROP MASKED")
		if back.Digest() != before.Digest() || back.EncodedSize() != before.EncodedSize() {
			t.Errorf("mask %s: DROP MASKED does not restore the digest", m)
		}
	}
}

// maskedSchema is a schema with masks on every kind of column, for the
// round trips.
const maskedSchema = maskBase + `
CREATE TABLE k.m (id int MASKED WITH mask_replace(-1), ck text MASKED WITH mask_inner(1, null, '#'), s text static MASKED WITH DEFAULT,
  b blob MASKED WITH mask_hash('SHA-512'), l list<int> MASKED WITH mask_replace([1, 2]), "Q" text MASKED WITH "system".mask_null(),
  PRIMARY KEY (id, ck));
CREATE TABLE k.one (id text MASKED WITH mask_outer(2, 2) PRIMARY KEY, v int);
CREATE INDEX ON k.m (l);`

// TestMaskDescribeRoundTrip checks that DESCRIBE of a masked schema,
// parsed and applied on a fresh schema, describes the same.
func TestMaskDescribeRoundTrip(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, maskedSchema)
	text := describe.Schema(s)
	if !strings.Contains(text, `"Q" text MASKED WITH system.mask_null()`) || !strings.Contains(text, "id text MASKED WITH system.mask_outer(2, 2) PRIMARY KEY") {
		t.Fatalf("DESCRIBE:\n%s", text)
	}
	again, _ := schemakit.Exec(t, schema.Schema{}, text)
	if got := describe.Schema(again); got != text {
		t.Errorf("DESCRIBE after the round trip:\n%s\nwant:\n%s", got, text)
	}
	// DESCRIBE lists a table's columns in Cassandra's order, not the
	// model's, so the digest is that of the schema after one round trip,
	// which a second one keeps.
	if twice := schemakit.DescribeRoundTrip(t, again); twice.Digest() != again.Digest() {
		t.Errorf("a second round trip changed the digest")
	}
}

// TestLikeCopiesMasks checks that CREATE TABLE ... LIKE copies the masks
// (Cassandra copies the source's CQL, masks included), into the same
// keyspace and another.
func TestLikeCopiesMasks(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, maskedSchema+`CREATE KEYSPACE o WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE k.c LIKE k.m; CREATE TABLE o.c LIKE k.m`)
	src := mustTable(t, s, "m")
	for _, ks := range []string{"k", "o"} {
		c, _ := s.Table(ks, "c")
		for i := range src.Columns {
			if !schema.MasksEqual(src.Columns[i].Mask, c.Columns[i].Mask) {
				t.Errorf("%s.c column %s: mask %v, want %v", ks, c.Columns[i].Name, c.Columns[i].Mask, src.Columns[i].Mask)
			}
		}
	}
}

// likeBase has a source table with indexes of every naming case: named
// by Cassandra (t_v_idx, t_v_idx_1 for a second index of v, then one
// ending in _1 of another column), named by the user, SAI, and a custom
// index that WITH INDEXES does not copy.
const likeBase = `CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE KEYSPACE o WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE k.t (id int PRIMARY KEY, v text, w int, m map<text, int>, x int);
CREATE INDEX ON k.t (v);
CREATE INDEX ON k.t (keys(m));
CREATE INDEX by_w ON k.t (w);
CREATE INDEX t_x_idx_custom ON k.t (x) USING 'sai';
CREATE CUSTOM INDEX lucene ON k.t (v) USING 'com.example.Lucene';`

// TestLikeWithIndexes checks CREATE TABLE ... LIKE ... WITH INDEXES
// against Cassandra's CopyTableStatement: regular and SAI indexes are
// copied, a name Cassandra made for the source is made for the copy, a
// user's name is kept, a name taken gets the next free _N, a custom index
// is skipped with Cassandra's warning, and the diff puts the table first.
func TestLikeWithIndexes(t *testing.T) {
	base, _ := schemakit.Exec(t, schema.Schema{}, likeBase)
	s, diff, res, err := schemakit.ApplyOne(t, base, "CREATE TABLE k.c LIKE k.t WITH INDEXES AND comment = 'copy'", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := s.Keyspace("k")
	var got []string
	for _, ix := range k.TableIndexes("c") {
		got = append(got, ix.Name+" "+ix.Target.String()+" "+ix.Class)
	}
	want := []string{"by_w_1 w ", "c_m_idx keys(m) ", "c_v_idx v ", "c_x_idx x " + schema.SAIIndexClass}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("copied indexes\n got %q\nwant %q", got, want)
	}
	if len(diff.Changes) != 5 || diff.Changes[0].Op != schema.OpPutTable || diff.Changes[4].Op != schema.OpPutIndex {
		t.Errorf("changes %+v", diff.Changes)
	}
	wantWarn := "Source table k.t to copy indexes from to k.c has custom indexes. These indexes were not copied: [lucene]"
	if res.Warning != wantWarn || !res.Applied {
		t.Errorf("warning %q, want %q", res.Warning, wantWarn)
	}
	if c := mustTable(t, s, "c"); c.Options()["comment"] != "'copy'" {
		t.Errorf("options %v", c.Options())
	}
	// Again from the copy: c_v_idx is the copy's, so it is renamed;
	// by_w_1 is a user's name, kept with the next suffix.
	s2, _, _, err := schemakit.ApplyOne(t, s, "CREATE TABLE k.d LIKE k.c WITH INDEXES", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := s2.Keyspace("k")
	got = nil
	for _, ix := range k2.TableIndexes("d") {
		got = append(got, ix.Name)
	}
	if strings.Join(got, " ") != "by_w_1_1 d_m_idx d_v_idx d_x_idx" {
		t.Errorf("indexes of the copy of the copy: %v", got)
	}
	// Into another keyspace, user names are free there.
	s3, _, _, err := schemakit.ApplyOne(t, base, "CREATE TABLE o.c LIKE k.t WITH INDEXES", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	ko, _ := s3.Keyspace("o")
	got = nil
	for _, ix := range ko.TableIndexes("c") {
		got = append(got, ix.Name+"@"+ix.Keyspace+"."+ix.Table)
	}
	if strings.Join(got, " ") != "by_w@o.c c_m_idx@o.c c_v_idx@o.c c_x_idx@o.c" {
		t.Errorf("indexes copied into o: %v", got)
	}
	// Without WITH INDEXES, none; IF NOT EXISTS on an existing table, no
	// index either.
	s4, diff4, _, err := schemakit.ApplyOne(t, base, "CREATE TABLE k.c LIKE k.t", maskEnv)
	if k4, _ := s4.Keyspace("k"); err != nil || len(k4.TableIndexes("c")) != 0 || len(diff4.Changes) != 1 {
		t.Errorf("LIKE without INDEXES: %v, %d changes", err, len(diff4.Changes))
	}
	s5, diff5, res5, err := schemakit.ApplyOne(t, s, "CREATE TABLE IF NOT EXISTS k.c LIKE k.t WITH INDEXES", maskEnv)
	if err != nil || res5.Applied || !diff5.Empty() || s5.Digest() != s.Digest() {
		t.Errorf("IF NOT EXISTS: %v, applied %v", err, res5.Applied)
	}
	// DESCRIBE of the result runs again to the same schema.
	text := describe.Schema(s)
	again, _ := schemakit.Exec(t, schema.Schema{}, text)
	if describe.Schema(again) != text {
		t.Errorf("DESCRIBE round trip of the copy differs")
	}
}

// TestLikeWithIndexesUndo checks that the diff of LIKE ... WITH INDEXES
// undoes, newest change first, to the schema before it.
func TestLikeWithIndexesUndo(t *testing.T) {
	before, _ := schemakit.Exec(t, schema.Schema{}, likeBase)
	after, diff, _, err := schemakit.ApplyOne(t, before, "CREATE TABLE k.c LIKE k.t WITH INDEXES", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	cur := before
	priors := make([]any, len(diff.Changes))
	for i, c := range diff.Changes {
		priors[i] = schema.Prior(cur, c)
	}
	s := after
	for i := len(diff.Changes) - 1; i >= 0; i-- {
		if s, err = schema.Undo(s, diff.Changes[i], priors[i]); err != nil {
			t.Fatal(err)
		}
	}
	if s.Digest() != before.Digest() || describe.Schema(s) != describe.Schema(before) {
		t.Errorf("undo does not restore the schema")
	}
}

// TestViewsShareTheirBaseMasks: a view's columns have the masks of its
// base's, from its creation, from ALTER TABLE ... MASKED WITH or DROP
// MASKED on the base (which puts the views that have the column before
// the base in the diff, and undoes), and from ADD reaching a SELECT *
// view, as Cassandra keeps a column masked the same in a base and its
// views; a view without the column is left as it is.
func TestViewsShareTheirBaseMasks(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, `CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE k.t (id int PRIMARY KEY, email text MASKED WITH mask_inner(1, null), name text);
CREATE MATERIALIZED VIEW k.all_cols AS SELECT * FROM k.t WHERE email IS NOT NULL AND id IS NOT NULL PRIMARY KEY (email, id);
CREATE MATERIALIZED VIEW k.names AS SELECT id, name FROM k.t WHERE id IS NOT NULL AND name IS NOT NULL PRIMARY KEY (name, id)`)
	maskOf := func(s schema.Schema, table, column string) string {
		t.Helper()
		c, ok := mustTable(t, s, table).Column(column)
		if !ok {
			t.Fatalf("k.%s has no column %s", table, column)
		}
		if c.Mask == nil {
			return ""
		}
		return c.Mask.String()
	}
	if got := maskOf(s, "all_cols", "email"); got != "system.mask_inner(1, null)" {
		t.Fatalf("the view's email at creation: %q", got)
	}
	before := s
	after, diff, _, err := schemakit.ApplyOne(t, s, "ALTER TABLE k.t ALTER email MASKED WITH mask_null()", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := maskOf(after, "all_cols", "email"); got != "system.mask_null()" {
		t.Errorf("the view's email after MASKED WITH: %q", got)
	}
	if len(diff.Changes) != 2 || diff.Changes[0].Table != "all_cols" || diff.Changes[1].Table != "t" {
		t.Errorf("diff %v, want the view then the base", diff.Changes)
	}
	if mustTable(t, after, "names") != mustTable(t, before, "names") {
		t.Errorf("a view without the column was rewritten")
	}
	priors := make([]any, len(diff.Changes))
	cur := before
	for i, c := range diff.Changes {
		priors[i] = schema.Prior(cur, c)
	}
	undone := after
	for i := len(diff.Changes) - 1; i >= 0; i-- {
		if undone, err = schema.Undo(undone, diff.Changes[i], priors[i]); err != nil {
			t.Fatal(err)
		}
	}
	if undone.Digest() != before.Digest() {
		t.Errorf("undo does not restore the schema")
	}
	dropped, _, _, err := schemakit.ApplyOne(t, after, "ALTER TABLE k.t ALTER email DROP MASKED", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := maskOf(dropped, "all_cols", "email"); got != "" {
		t.Errorf("the view's email after DROP MASKED: %q", got)
	}
	added, _, _, err := schemakit.ApplyOne(t, dropped, "ALTER TABLE k.t ADD phone text MASKED WITH mask_outer(0, 2)", maskEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := maskOf(added, "all_cols", "phone"); got != "system.mask_outer(0, 2)" {
		t.Errorf("the SELECT * view's added phone: %q", got)
	}
}
