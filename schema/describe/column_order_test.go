package describe_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/metalog/metalog/internal/testkit/schemakit"
	"github.com/metalog/metalog/internal/testkit/schematest"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/describe"
)

const orderKeyspace = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\n" +
	"CREATE TYPE ks.addr (street text, zip int);\n"

// columnLines returns the column lines of the CREATE TABLE statement
// text, trimmed, without their trailing comma.
func columnLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n")[1:] {
		if !strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "    PRIMARY KEY") || strings.HasPrefix(line, "    AND") {
			continue
		}
		out = append(out, strings.TrimSuffix(strings.TrimSpace(line), ","))
	}
	return out
}

// TestColumnOrder checks the order DESCRIBE lists a table's columns in,
// whatever order CREATE TABLE and ALTER TABLE ... ADD gave them.
func TestColumnOrder(t *testing.T) {
	tests := []struct {
		name, cql string
		want      []string
	}{{
		name: "key columns in key order, not in definition order",
		cql:  `CREATE TABLE ks.t (z int, y int, b int, a int, v int, PRIMARY KEY ((y, z), b, a))`,
		want: []string{"y int", "z int", "b int", "a int", "v int"},
	}, {
		name: "static before regular, whatever the names",
		cql:  `CREATE TABLE ks.t (k int, c int, a int, z int static, m int static, PRIMARY KEY (k, c))`,
		want: []string{"k int", "c int", "m int static", "z int static", "a int"},
	}, {
		name: "simple before complex (non-frozen collections and user types), frozen ones are simple",
		cql: `CREATE TABLE ks.t (k int PRIMARY KEY, a list<int>, b frozen<list<int>>, c set<int>, d map<int, int>,
			e addr, f frozen<addr>, g tuple<int, int>, h vector<float, 2>, i text)`,
		want: []string{"k int PRIMARY KEY", "b frozen<list<int>>", "f frozen<addr>", "g tuple<int, int>", "h vector<float, 2>", "i text",
			"a list<int>", "c set<int>", "d map<int, int>", "e addr"},
	}, {
		name: "static complex after static simple, before regular simple",
		cql:  `CREATE TABLE ks.t (k int, c int, r list<int>, q int, s set<int> static, t int static, PRIMARY KEY (k, c))`,
		want: []string{"k int", "c int", "t int static", "s set<int> static", "q int", "r list<int>"},
	}, {
		name: "names by their bytes: upper case and digits before underscore before lower case",
		cql:  `CREATE TABLE ks.t (k int PRIMARY KEY, a int, "_x" int, "B" int, "9" int, ab int, "a b" int, "A" int)`,
		want: []string{"k int PRIMARY KEY", `"9" int`, `"A" int`, `"B" int`, `"_x" int`, "a int", `"a b" int`, "ab int"},
	}, {
		name: "a name that starts with a non-ASCII character sorts first (compareTo's prefix)",
		cql:  `CREATE TABLE ks.t (k int PRIMARY KEY, b int, "é" int, "A" int, "aé" int, "a" int)`,
		want: []string{"k int PRIMARY KEY", `"é" int`, `"A" int`, "a int", `"aé" int`, "b int"},
	}, {
		name: "masks go with their columns",
		cql:  `CREATE TABLE ks.t (k int PRIMARY KEY, z text MASKED WITH DEFAULT, a text)`,
		want: []string{"k int PRIMARY KEY", "a text", "z text MASKED WITH system.mask_default()"},
	}, {
		name: "added columns take their place",
		cql: `CREATE TABLE ks.t (k int, c int, m text, PRIMARY KEY (k, c));
			ALTER TABLE ks.t ADD (l list<int>, a text);
			ALTER TABLE ks.t ADD s int static`,
		want: []string{"k int", "c int", "s int static", "a text", "m text", "l list<int>"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := schemakit.Build(t, orderKeyspace+tt.cql)
			tbl, ok := s.Table("ks", "t")
			if !ok {
				t.Fatal("no table ks.t")
			}
			got := columnLines(describe.Table(tbl))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestCreateAndAlterDescribeAlike checks that a table written in one
// CREATE TABLE and the same table grown by ALTER TABLE ... ADD describe
// alike, and that the model still stores the columns as they came: the
// order is DESCRIBE's, not the model's.
func TestCreateAndAlterDescribeAlike(t *testing.T) {
	one := schemakit.Build(t, orderKeyspace+`CREATE TABLE ks.t (k int, c int, a text, b list<int>, s int static, z text, PRIMARY KEY (k, c))
		WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18`)
	grown := schemakit.Build(t, orderKeyspace+`CREATE TABLE ks.t (k int, c int, z text, PRIMARY KEY (k, c))
		WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18;
		ALTER TABLE ks.t ADD b list<int>;
		ALTER TABLE ks.t ADD (s int static, a text)`)
	if a, b := describe.Schema(one), describe.Schema(grown); a != b {
		t.Errorf("one CREATE:\n%s\nCREATE and ALTER:\n%s", a, b)
	}
	tbl, _ := grown.Table("ks", "t")
	var stored []string
	for _, c := range tbl.Columns {
		stored = append(stored, c.Name)
	}
	if got := strings.Join(stored, " "); got != "k c z b s a" {
		t.Errorf("stored order %s, want the order of the statements", got)
	}
	if one.Digest() == grown.Digest() {
		t.Errorf("the digests agree, but the tables store their columns in different orders")
	}
}

// TestAlterAddDescribesAsCreate: a random table, created in one statement,
// describes as the same table created with some of its columns and given
// the others by ALTER TABLE ... ADD, in random groups and order.
func TestAlterAddDescribesAsCreate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ck := schematest.CreateKeyspace(t)
		whole := schematest.CreateTable(t, ck.Name)
		if whole.ID == "" {
			whole.ID = "5a1c395e-b41f-11e5-9f22-ba0be0483c18"
		}
		base, _, _, err := schema.Apply(schema.Schema{}, ck, schema.Env{Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		want, _, _, err := schema.Apply(base, whole, schema.Env{Epoch: 2})
		if err != nil {
			t.Skip(err) // an option the generator drew may be refused
		}
		create, adds := splitColumns(t, whole)
		got, _, _, err := schema.Apply(base, create, schema.Env{Epoch: 2})
		if err != nil {
			t.Fatalf("the CREATE part: %v", err)
		}
		for i, add := range adds {
			if got, _, _, err = schema.Apply(got, add, schema.Env{Epoch: uint64(3 + i)}); err != nil {
				t.Fatalf("ALTER TABLE ADD %v: %v", add.Add, err)
			}
		}
		if a, b := describe.Schema(want), describe.Schema(got); a != b {
			t.Fatalf("one CREATE:\n%s\nCREATE and %d ALTER:\n%s", a, len(adds), b)
		}
	})
}

// splitColumns splits the columns of whole that are not in its primary
// key between a CREATE TABLE, which keeps the key columns (and a counter
// column in a counter table, which ALTER TABLE cannot make one), and
// ALTER TABLE ... ADD statements of one or more columns each.
func splitColumns(t *rapid.T, whole *schema.CreateTable) (*schema.CreateTable, []*schema.AlterTable) {
	inKey := map[string]bool{}
	for _, n := range whole.PartitionKey {
		inKey[n] = true
	}
	for _, n := range whole.Clustering {
		inKey[n] = true
	}
	create := *whole
	create.Columns = nil
	var moved []schema.ColumnDef
	counterKept := false
	for _, cd := range whole.Columns {
		keep := inKey[cd.Name] || cd.PrimaryKey
		if !keep && cd.Type == schema.TypeCounter && !counterKept {
			keep, counterKept = true, true
		}
		if !keep && rapid.Bool().Draw(t, "move "+cd.Name) {
			moved = append(moved, cd)
			continue
		}
		create.Columns = append(create.Columns, cd)
	}
	moved = rapid.Permutation(moved).Draw(t, "add order")
	var adds []*schema.AlterTable
	for len(moved) > 0 {
		n := rapid.IntRange(1, len(moved)).Draw(t, "add group")
		adds = append(adds, &schema.AlterTable{Keyspace: whole.Keyspace, Name: whole.Name, Add: moved[:n]})
		moved = moved[n:]
	}
	return &create, adds
}
