package schema_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/metalog/metalog/internal/cqltext"
	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// undoBase is the schema the error cases of Undo start from: keyspace ks
// with type u, table t using it, index i on t, and an empty keyspace e.
const undoBase = `
CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE ks.u (f int);
CREATE TABLE ks.t (k int PRIMARY KEY, v text, w frozen<u>);
CREATE INDEX i ON ks.t (v);
CREATE KEYSPACE e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
`

// TestPriorIsUntypedNilWhenAbsent checks Prior on present and absent
// objects of every kind.
func TestPriorIsUntypedNilWhenAbsent(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, undoBase)
	for _, c := range []schema.Change{
		{Op: schema.OpPutKeyspace, Keyspace: "nope"},
		{Op: schema.OpDropTable, Keyspace: "ks", Table: "nope"},
		{Op: schema.OpPutTable, Keyspace: "nope", Table: "t"},
		{Op: schema.OpPutType, Keyspace: "ks", Name: "nope"},
		{Op: schema.OpDropIndex, Keyspace: "ks", Name: "nope"},
		{Op: 0, Keyspace: "ks"},
	} {
		if p := schema.Prior(s, c); p != nil {
			t.Errorf("Prior of %s %s.%s%s = %#v, want untyped nil", c.Op, c.Keyspace, c.Table, c.Name, p)
		}
	}
	k, _ := s.Keyspace("ks")
	tbl, _ := k.Table("t")
	ut, _ := k.UserType("u")
	ix, _ := k.Index("i")
	for _, tt := range []struct {
		c    schema.Change
		want any
	}{
		{schema.Change{Op: schema.OpDropKeyspace, Keyspace: "ks"}, k},
		{schema.Change{Op: schema.OpPutTable, Keyspace: "ks", Table: "t"}, tbl},
		{schema.Change{Op: schema.OpDropType, Keyspace: "ks", Name: "u"}, ut},
		{schema.Change{Op: schema.OpPutIndex, Keyspace: "ks", Table: "t", Name: "i"}, ix},
	} {
		if got := schema.Prior(s, tt.c); got != tt.want {
			t.Errorf("Prior of %s = %v, want %v", tt.c.Op, got, tt.want)
		}
	}
}

// TestUndoRefusesBadInput checks that every kind of bad input returns the
// schema unchanged and an ErrInvalid *Error naming the op, the object and
// the reason, without panicking.
func TestUndoRefusesBadInput(t *testing.T) {
	s, _ := schemakit.Exec(t, schema.Schema{}, undoBase)
	for _, tt := range badUndos(s) {
		t.Run(tt.name, func(t *testing.T) {
			got, err := schema.Undo(s, tt.c, tt.prior)
			var se *schema.Error
			if !errors.As(err, &se) || !errors.Is(err, schema.ErrInvalid) {
				t.Fatalf("err = %v, want an ErrInvalid *schema.Error", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "UNDO") || se.Object != tt.object || !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("err = %q (object %q), want UNDO ..., object %q, reason containing %q", msg, se.Object, tt.object, tt.reason)
			}
			if tt.c.Op >= schema.OpPutKeyspace && tt.c.Op <= schema.OpDropIndex && !strings.HasPrefix(msg, "UNDO "+tt.c.Op.String()+" ") {
				t.Errorf("err = %q does not name op %s", msg, tt.c.Op)
			}
			if got.Digest() != s.Digest() || schema.InternalState(got) != schema.InternalState(s) {
				t.Errorf("the refused undo changed the schema")
			}
		})
	}
}

// badUndo is an Undo call that must fail, and what its error must say.
type badUndo struct {
	name   string
	c      schema.Change
	prior  any
	object string
	reason string
}

// badUndos are the bad inputs of Undo on s, a schema built from undoBase.
func badUndos(s schema.Schema) []badUndo {
	k, _ := s.Keyspace("ks")
	e, _ := s.Keyspace("e")
	tbl, _ := k.Table("t")
	ut, _ := k.UserType("u")
	ix, _ := k.Index("i")
	other := *tbl
	other.Keyspace = "e" // uses type u, which e lacks
	noTable := *ix
	noTable.Table = "nope"
	noColumn := *ix
	noColumn.Target.Column = "nope"
	ks := func(op schema.ChangeOp, name string) schema.Change { return schema.Change{Op: op, Keyspace: name} }
	table := func(op schema.ChangeOp, ks, name string) schema.Change {
		return schema.Change{Op: op, Keyspace: ks, Table: name}
	}
	named := func(op schema.ChangeOp, ks, name string) schema.Change {
		return schema.Change{Op: op, Keyspace: ks, Name: name}
	}
	return []badUndo{
		{"unknown op 0", schema.Change{Keyspace: "ks", Name: "x"}, nil, "ks.x", "unknown change op 0"},
		{"unknown op 99", schema.Change{Op: 99, Keyspace: "ks"}, nil, "ks", "unknown change op 99"},
		{"keyspace prior of another type", ks(schema.OpPutKeyspace, "ks"), tbl, "ks", "prior is a *schema.Table, want *schema.Keyspace or nil"},
		{"keyspace prior of another keyspace", ks(schema.OpPutKeyspace, "ks"), e, "ks", "prior is keyspace e"},
		{"created keyspace missing", ks(schema.OpPutKeyspace, "gone"), nil, "gone", "keyspace does not exist"},
		{"altered keyspace missing", ks(schema.OpPutKeyspace, "gone"), &schema.Keyspace{Name: "gone"}, "gone", "keyspace does not exist"},
		{"created keyspace not empty", ks(schema.OpPutKeyspace, "ks"), nil, "ks", "keyspace still holds 3 objects"},
		{"dropped keyspace without prior", ks(schema.OpDropKeyspace, "gone"), nil, "gone", "no prior keyspace"},
		{"dropped keyspace typed nil prior", ks(schema.OpDropKeyspace, "gone"), (*schema.Keyspace)(nil), "gone", "no prior keyspace"},
		{"dropped keyspace exists", ks(schema.OpDropKeyspace, "ks"), k, "ks", "keyspace exists"},
		{"dropped keyspace prior of another type", ks(schema.OpDropKeyspace, "gone"), ix, "gone", "prior is a *schema.Index"},
		{"table in missing keyspace", table(schema.OpPutTable, "gone", "t"), nil, "gone.t", "keyspace gone does not exist"},
		{"table prior of another type", table(schema.OpPutTable, "ks", "t"), k, "ks.t", "prior is a *schema.Keyspace, want *schema.Table or nil"},
		{"table prior of another table", table(schema.OpPutTable, "ks", "x"), tbl, "ks.x", "prior is table ks.t"},
		{"created table missing", table(schema.OpPutTable, "ks", "nope"), nil, "ks.nope", "table does not exist"},
		{"created table has indexes", table(schema.OpPutTable, "ks", "t"), nil, "ks.t", "table still has indexes"},
		{"table prior uses a missing type", table(schema.OpDropTable, "e", "t"), &other, "e.t", "type e.u it uses does not exist"},
		{"dropped table without prior", table(schema.OpDropTable, "ks", "gone"), nil, "ks.gone", "no prior table"},
		{"dropped table typed nil prior", table(schema.OpDropTable, "ks", "gone"), (*schema.Table)(nil), "ks.gone", "no prior table"},
		{"dropped table exists", table(schema.OpDropTable, "ks", "t"), tbl, "ks.t", "table exists"},
		{"type in missing keyspace", named(schema.OpPutType, "gone", "u"), nil, "gone.u", "keyspace gone does not exist"},
		{"type prior of another type", named(schema.OpDropType, "ks", "u"), "u", "ks.u", "prior is a string, want *schema.UserType or nil"},
		{"created type missing", named(schema.OpPutType, "ks", "nope"), nil, "ks.nope", "type does not exist"},
		{"created type still used", named(schema.OpPutType, "ks", "u"), nil, "ks.u", "type is still used by table t"},
		{"dropped type without prior", named(schema.OpDropType, "ks", "gone"), nil, "ks.gone", "no prior type"},
		{"dropped type exists", named(schema.OpDropType, "ks", "u"), ut, "ks.u", "type exists"},
		{"index in missing keyspace", named(schema.OpDropIndex, "gone", "i"), ix, "gone.i", "keyspace gone does not exist"},
		{"index prior of another type", named(schema.OpPutIndex, "ks", "i"), ut, "ks.i", "prior is a *schema.UserType, want *schema.Index or nil"},
		{"created index missing", named(schema.OpPutIndex, "ks", "nope"), nil, "ks.nope", "index does not exist"},
		{"dropped index without prior", named(schema.OpDropIndex, "ks", "gone"), nil, "ks.gone", "no prior index"},
		{"dropped index exists", named(schema.OpDropIndex, "ks", "i"), ix, "ks.i", "index exists"},
		{"index prior on a missing table", named(schema.OpDropIndex, "ks", "i"), &noTable, "ks.i", "table ks.nope of the prior index does not exist"},
		{"index prior on a missing column", named(schema.OpDropIndex, "ks", "i"), &noColumn, "ks.i", "column nope of the prior index does not exist"},
	}
}

// TestUndoRestoresLiteralKeyspace checks that a dropped keyspace whose
// prior was built as a literal (as DecodeKeyspace returns one) comes back
// with its digest computed.
func TestUndoRestoresLiteralKeyspace(t *testing.T) {
	before, _ := schemakit.Exec(t, schema.Schema{}, undoBase)
	after, diff := schemakit.Exec(t, before, "DROP KEYSPACE e")
	k, _ := before.Keyspace("e")
	lit, err := schema.DecodeKeyspace(schema.AppendKeyspace(nil, k))
	if err != nil {
		t.Fatal(err)
	}
	got, err := schema.Undo(after, diff.Changes[0], lit)
	if err != nil {
		t.Fatal(err)
	}
	if schema.InternalState(got) != schema.InternalState(before) || schema.ComputeDigest(got) != got.Digest() {
		t.Errorf("restored keyspace differs:\n%s\nwant:\n%s", schema.InternalState(got), schema.InternalState(before))
	}
}

// keyspaceWithTables returns a schema with keyspace big holding n tables
// t0, t1 ... (columns k, v, x and w, of type u; index i<n> on v), and
// keyspaces a and z with one table each. Each table's encoding is longer
// than the stack buffer that hashing uses, so that a walk hashing the
// tables allocates once per table and shows in allocation counts.
func keyspaceWithTables(t testing.TB, n int) schema.Schema {
	s, _ := schemakit.Exec(t, schema.Schema{}, `
CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE a.t (k int PRIMARY KEY, v text);
CREATE KEYSPACE z WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TABLE z.t (k int PRIMARY KEY, v text);
CREATE KEYSPACE big WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
CREATE TYPE big.u (f int);`)
	l := schema.NewBuilder(s)
	for i := range n {
		tbl := &schema.Table{Keyspace: "big", Name: "t" + strconv.Itoa(i), ID: schema.TableID(uint64(i+100), 0),
			Columns: []schema.Column{{Name: "k", Type: schema.TypeInt, Kind: schema.PartitionKey}, {Name: "v", Type: schema.TypeInt},
				{Name: "x", Type: schema.TypeInt}, {Name: "w", Type: schema.UserTypeRef{Name: "u"}}},
			PartitionKey: []string{"k"}, Extra: &schema.TableExtra{Options: map[string]string{"comment": cqltext.QuoteString(strings.Repeat("x", 300))}}}
		if err := l.PutTable(tbl); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if err := l.PutIndex(&schema.Index{Keyspace: "big", Table: "t" + strconv.Itoa(i), Name: "i" + strconv.Itoa(i), Target: schema.IndexTarget{Column: "v"}}); err != nil {
			t.Fatal(err)
		}
	}
	return l.Schema()
}

// TestUndoDropKeyspaceDoesNotWalk checks that putting back a dropped
// keyspace costs the same allocations with 10 tables as with 1,000, with
// the prior as captured and as decoded, and rebuilds the schema exactly.
func TestUndoDropKeyspaceDoesNotWalk(t *testing.T) {
	allocs := func(n int, decoded bool) float64 {
		before := keyspaceWithTables(t, n)
		after, diff := schemakit.Exec(t, before, "DROP KEYSPACE big")
		c := diff.Changes[0]
		prior := schema.Prior(before, c)
		if decoded {
			k, err := schema.DecodeKeyspaceObjects(schema.AppendKeyspaceObjects(nil, prior.(*schema.Keyspace)))
			if err != nil {
				t.Fatal(err)
			}
			prior = k
		}
		got, err := schema.Undo(after, c, prior)
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest() != before.Digest() || got.TableCount() != n+2 || schema.InternalState(got) != schema.InternalState(before) {
			t.Fatalf("%d tables: the undone drop does not rebuild the schema", n)
		}
		return testing.AllocsPerRun(100, func() {
			if _, err := schema.Undo(after, c, prior); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, decoded := range []bool{false, true} {
		small, large := allocs(10, decoded), allocs(1000, decoded)
		t.Logf("decoded prior %v: %.0f allocations with 10 tables, %.0f with 1000", decoded, small, large)
		if small != large || large > 8 {
			t.Errorf("decoded prior %v: undoing DROP KEYSPACE allocates %.0f times with 10 tables, %.0f with 1000: it walks the keyspace", decoded, small, large)
		}
	}
}

// TestUndoDoesNotWalkTables checks that undoing a statement of each kind
// costs the same allocations with 1,000 tables as with 8,000 (within 1.2x,
// room for the B+tree's extra level, as TestApplyDoesNotWalkTables).
func TestUndoDoesNotWalkTables(t *testing.T) {
	statements := []string{
		"CREATE TABLE big.new (k int PRIMARY KEY, v text)",
		"ALTER TABLE big.t5 ADD y int",
		"DROP TABLE big.t5",
		"CREATE INDEX ON big.t5 (x)",
		"DROP INDEX big.i5",
		"CREATE TYPE big.u2 (f int)",
		"ALTER TYPE big.u ADD g int",
		"ALTER KEYSPACE big WITH durable_writes = false",
		"DROP KEYSPACE big",
	}
	small, large := keyspaceWithTables(t, 1000), keyspaceWithTables(t, 8000)
	for _, text := range statements {
		allocs := func(before schema.Schema) float64 {
			parsed, err := cql.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			after, diff, _, err := schema.Apply(before, parsed[0].Statement, schema.Env{Epoch: 1})
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			priors := make([]any, len(diff.Changes))
			for i, c := range diff.Changes {
				priors[i] = schema.Prior(before, c)
			}
			return testing.AllocsPerRun(20, func() {
				s := after
				for i := len(diff.Changes) - 1; i >= 0; i-- {
					if s, err = schema.Undo(s, diff.Changes[i], priors[i]); err != nil {
						t.Fatalf("%s: %v", text, err)
					}
				}
				if s.Digest() != before.Digest() {
					t.Fatalf("%s: undo does not restore the digest", text)
				}
			})
		}
		a, b := allocs(small), allocs(large)
		t.Logf("undoing %q: %.0f allocations with 1,000 tables, %.0f with 8,000", text, a, b)
		if b > a*1.2+1 {
			t.Errorf("undoing %q: %.0f allocations with 1,000 tables, %.0f with 8,000: it walks the tables", text, a, b)
		}
	}
}

func TestDecodePriorRefusesAnUnknownOp(t *testing.T) {
	if _, err := schema.DecodePrior(99, []byte{1}); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "unknown change op 99") {
		t.Fatalf("DecodePrior(99): %v", err)
	}
	if p, err := schema.DecodePrior(schema.OpPutTable, nil); p != nil || err != nil {
		t.Fatalf("DecodePrior of nothing: %v, %v", p, err)
	}
}
