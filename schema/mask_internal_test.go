package schema

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maskedTable is minimalTable (ks.t_1: id int PRIMARY KEY, v text) with
// v masked by mask_inner(1, null, '#').
func maskedTable(t testing.TB) *Table {
	s := mustApply(t, Schema{}, simpleKS("ks"), simpleTable("ks", "t_1"),
		&AlterTable{Keyspace: "ks", Name: "t_1", Mask: &AlterMask{Column: "v", Mask: &MaskDef{Function: "mask_inner",
			Args: []Literal{{Kind: LitInt, Text: "1"}, {Kind: LitNull}, {Kind: LitString, Text: "#"}}}}})
	tbl, _ := s.Table("ks", "t_1")
	return tbl
}

// TestMaskEncoding checks the table encoding with masks: the flag only
// when a column is masked, the section's bytes (pinned, since stored
// records must decode forever), a round trip, and corrupt or invalid
// sections refused.
func TestMaskEncoding(t *testing.T) {
	tbl := maskedTable(t)
	b := AppendTable(nil, tbl)
	if b[2]&flagMasks == 0 {
		t.Fatalf("flags %#x lack the masks flag", b[2])
	}
	plain := AppendTable(nil, minimalTable(t))
	if plain[2]&flagMasks != 0 {
		t.Fatalf("a table without masks has the flag")
	}
	// The masked encoding is the plain one with the flag and the section:
	// one mask, at column 1, mask_inner, three arguments.
	section := hex.EncodeToString(b[len(plain):])
	if want := "01010a6d61736b5f696e6e6572030131046e756c6c03272327"; section != want {
		t.Errorf("masks section %s, want %s", section, want)
	}
	got, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(tbl, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	corrupt := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"no masks", func(p []byte) []byte { p[2] |= flagMasks; return append(p, 0) }, "masks flag with no masks"},
		{"position out of range", func(p []byte) []byte { p[2] |= flagMasks; return append(p, 1, 2, 0) }, "exceeds"},
		{"position repeated", func(p []byte) []byte {
			p[2] |= flagMasks
			return append(p, 2, 1, 9, 'm', 'a', 's', 'k', '_', 'n', 'u', 'l', 'l', 0, 1, 9, 'm', 'a', 's', 'k', '_', 'n', 'u', 'l', 'l', 0)
		}, "out of order"},
		{"unknown function", func(p []byte) []byte { p[2] |= flagMasks; return append(p, 1, 1, 3, 'f', 'o', 'o', 0) }, "masked with unknown function foo"},
		{"wrong arity", func(p []byte) []byte {
			p[2] |= flagMasks
			return append(p, 1, 1, 9, 'm', 'a', 's', 'k', '_', 'n', 'u', 'l', 'l', 1, 1, '1')
		}, "Invalid number of arguments for function system.mask_null(any)"},
		{"wrong column type", func(p []byte) []byte {
			p[2] |= flagMasks
			return append(p, 1, 0, 9, 'm', 'a', 's', 'k', '_', 'h', 'a', 's', 'h', 0)
		}, "column id of type int cannot be masked with mask_hash, which returns blob"},
		{"empty argument", func(p []byte) []byte {
			p[2] |= flagMasks
			return append(p, 1, 1, 12, 'm', 'a', 's', 'k', '_', 'r', 'e', 'p', 'l', 'a', 'c', 'e', 1, 0)
		}, "mask argument that is empty"},
		{"too many arguments", func(p []byte) []byte {
			p[2] |= flagMasks
			return append(p, 1, 1, 10, 'm', 'a', 's', 'k', '_', 'i', 'n', 'n', 'e', 'r', 4, 1, '1', 1, '1', 1, '1', 1, '1')
		}, "mask with 4 arguments"},
		{"unknown flag", func(p []byte) []byte { p[2] |= 1 << 7; return p }, "unknown table flags"},
	}
	for _, c := range corrupt {
		_, err := DecodeTable(c.edit(append([]byte(nil), plain...)))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestMaskWithTriggers checks that masks follow the triggers in the
// encoding and both survive a round trip.
func TestMaskWithTriggers(t *testing.T) {
	tbl := *maskedTable(t)
	tbl.SetTriggers([]Trigger{{Name: "audit", Class: "x.Y"}})
	b := AppendTable(nil, &tbl)
	if b[2]&(flagMasks|flagTriggers) != flagMasks|flagTriggers {
		t.Fatalf("flags %#x", b[2])
	}
	got, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&tbl, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// TestMaskUndo checks that ALTER ... MASKED WITH and DROP MASKED are
// undone through their table's prior, encoded as the history stores it.
func TestMaskUndo(t *testing.T) {
	before := mustApply(t, Schema{}, simpleKS("ks"), simpleTable("ks", "t_1"))
	masked := &AlterTable{Keyspace: "ks", Name: "t_1", Mask: &AlterMask{Column: "v", Mask: &MaskDef{Function: "mask_null"}}}
	for _, step := range []Statement{masked, &AlterTable{Keyspace: "ks", Name: "t_1", Mask: &AlterMask{Column: "v"}}} {
		after, diff, _, err := Apply(before, step, Env{Epoch: 10})
		if err != nil {
			t.Fatal(err)
		}
		c := diff.Changes[0]
		prior, err := DecodePrior(c.Op, AppendPrior(nil, c.Op, Prior(before, c)))
		if err != nil {
			t.Fatal(err)
		}
		back, err := Undo(after, c, prior)
		if err != nil {
			t.Fatal(err)
		}
		if InternalState(back) != InternalState(before) {
			t.Errorf("undo: got\n%s\nwant\n%s", InternalState(back), InternalState(before))
		}
		before = after
	}
}

// TestMaskDoesNotWalkTables checks that ALTER ... MASKED WITH, DROP
// MASKED and CREATE TABLE ... LIKE ... WITH INDEXES (of a table with two
// indexes) allocate the same with 1,000 tables as with 8,000: nothing on
// their path is proportional to the number of tables.
func TestMaskDoesNotWalkTables(t *testing.T) {
	const n = 1000
	index := func(s Schema) Schema {
		return mustApply(t, s,
			&CreateIndex{Keyspace: "ks", Table: "t5", Target: IndexTarget{Column: "v"}},
			&AlterTable{Keyspace: "ks", Name: "t6", Mask: &AlterMask{Column: "v", Mask: &MaskDef{Function: "mask_default"}}})
	}
	small, large := index(schemaWithTables(t, n)), index(schemaWithTables(t, 8*n))
	for _, tt := range []struct {
		name string
		st   Statement
	}{
		{"MaskedWith", &AlterTable{Keyspace: "ks", Name: "t5", Mask: &AlterMask{Column: "v", Mask: &MaskDef{Keyspace: "system", Function: "mask_outer", Args: []Literal{{Kind: LitInt, Text: "1"}, {Kind: LitInt, Text: "2"}, {Kind: LitString, Text: "#"}}}}}},
		{"DropMasked", &AlterTable{Keyspace: "ks", Name: "t6", Mask: &AlterMask{Column: "v"}}},
		{"LikeWithIndexes", &CreateTableLike{Keyspace: "ks", Name: "copy", SourceKeyspace: "ks", Source: "t5", Indexes: true}},
	} {
		allocs := func(s Schema) float64 {
			return testing.AllocsPerRun(100, func() {
				if _, _, res, err := Apply(s, tt.st, Env{Epoch: 1}); err != nil || !res.Applied {
					t.Fatal(err)
				}
			})
		}
		a, b := allocs(small), allocs(large)
		t.Logf("%s: %v allocations with %d tables, %v with %d", tt.name, a, n, b, 8*n)
		if b != a {
			t.Errorf("%s allocates %v with %d tables vs %v with %d", tt.name, b, 8*n, a, n)
		}
	}
}
