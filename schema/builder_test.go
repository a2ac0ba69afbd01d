package schema

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestBuilderTablesMatchOneAtATime checks that Builder.PutTable, which
// builds the table map of a keyspace without tables in place, gives the
// schema, digest, count and errors that putting the tables one at a time
// gives, whatever the order: keyspaces interleaved, replaced tables,
// invalid tables, unknown keyspaces and a keyspace that already has
// tables; and that the base schema stays as it was.
func TestBuilderTablesMatchOneAtATime(t *testing.T) {
	repl := Replication{Class: SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}
	minimal := func(ks, name string, id uint64, extra int) *Table {
		tb := &Table{Keyspace: ks, Name: name, ID: TableID(id, 0),
			Columns: []Column{{Name: "id", Type: TypeInt, Kind: PartitionKey}}, PartitionKey: []string{"id"}}
		for i := range extra {
			tb.Columns = append(tb.Columns, Column{Name: fmt.Sprintf("c%d", i), Type: TypeText, Kind: Regular})
		}
		return tb
	}
	rapid.Check(t, func(t *rapid.T) {
		var bb Builder
		bb.PutKeyspace(&Keyspace{Name: "a", Replication: repl})
		bb.PutKeyspace(&Keyspace{Name: "b", Replication: repl})
		if err := bb.PutTable(minimal("b", "pre", 1, 0)); err != nil {
			t.Fatal(err)
		}
		base := bb.Schema()
		baseDescribed := DescribeSchema(base)
		var tables []*Table
		for i := range rapid.IntRange(0, 40).Draw(t, "n") {
			ks := rapid.SampledFrom([]string{"a", "a", "b", "c"}).Draw(t, "keyspace")
			tb := minimal(ks, rapid.SampledFrom([]string{"t1", "t2", "t3", "pre"}).Draw(t, "name"), uint64(i+2), rapid.IntRange(0, 2).Draw(t, "extra"))
			if rapid.IntRange(0, 9).Draw(t, "invalid") == 0 {
				tb.PartitionKey = nil
			}
			tables = append(tables, tb)
		}
		one := NewBuilder(base)
		var wantErrs []string
		for _, tb := range tables {
			wantErrs = append(wantErrs, fmt.Sprint(one.putTableAlone(tb)))
		}
		want := one.Schema()
		l := NewBuilder(base)
		var gotErrs []string
		for _, tb := range tables {
			gotErrs = append(gotErrs, fmt.Sprint(l.PutTable(tb)))
		}
		got := l.Schema()
		for i := range tables {
			if gotErrs[i] != wantErrs[i] {
				t.Fatalf("table %d (%s): PutTable error %q, one at a time %q", i, tables[i].QualifiedName(), gotErrs[i], wantErrs[i])
			}
		}
		if DescribeSchema(base) != baseDescribed {
			t.Fatal("building changed the base schema")
		}
		if g, w := DescribeSchema(got), DescribeSchema(want); g != w {
			t.Fatalf("loaded schema:\n%s\nwant:\n%s", g, w)
		}
		if got.Digest() != want.Digest() || got.TableCount() != want.TableCount() {
			t.Fatalf("digest %x count %d, want %x count %d", got.Digest(), got.TableCount(), want.Digest(), want.TableCount())
		}
		if got.Digest() != ComputeDigest(got) {
			t.Fatal("incremental digest differs from the computed one")
		}
	})
}

// TestPutEncodedTable: tables put with their canonical encodings give the
// schema and digest PutTable gives; an encoding that is not canonical
// gives another digest, which is what a loader checks; a keyspace that
// does not exist is still refused.
func TestPutEncodedTable(t *testing.T) {
	repl := Replication{Class: SimpleStrategy, Options: map[string]string{"replication_factor": "1"}}
	table := func(name string, id uint64) *Table {
		return &Table{Keyspace: "a", Name: name, ID: TableID(id, 0),
			Columns: []Column{{Name: "id", Type: TypeInt, Kind: PartitionKey}, {Name: "v", Type: TypeText, Kind: Regular}}, PartitionKey: []string{"id"}}
	}
	var checked, encoded, odd Builder
	for _, b := range []*Builder{&checked, &encoded, &odd} {
		b.PutKeyspace(&Keyspace{Name: "a", Replication: repl})
	}
	for i := range 50 {
		tb := table(fmt.Sprintf("t%03d", i), uint64(i+1))
		enc := AppendTable(nil, tb)
		if err := checked.PutTable(tb); err != nil {
			t.Fatal(err)
		}
		if err := encoded.PutEncodedTable(tb, enc); err != nil {
			t.Fatal(err)
		}
		if i == 7 {
			enc = append(enc, 0) // not what AppendTable writes
		}
		if err := odd.PutEncodedTable(tb, enc); err != nil {
			t.Fatal(err)
		}
	}
	want, got := checked.Schema(), encoded.Schema()
	if got.Digest() != want.Digest() || got.Digest() != ComputeDigest(got) || DescribeSchema(got) != DescribeSchema(want) || got.TableCount() != 50 {
		t.Fatalf("encoded tables: digest %x, %d tables; want %x", got.Digest(), got.TableCount(), want.Digest())
	}
	if odd.Schema().Digest() == want.Digest() {
		t.Fatal("a table with an encoding that is not canonical gave the canonical digest")
	}
	tb := table("x", 99)
	tb.Keyspace = "nope"
	if err := encoded.PutEncodedTable(tb, AppendTable(nil, tb)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("table of a keyspace that does not exist: %v", err)
	}
}
