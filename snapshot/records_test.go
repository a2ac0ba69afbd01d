package snapshot_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/snapshot"
)

// record is a snapshot.Record with its slices copied.
type record struct {
	Kind           snapshot.RecordKind
	Keyspace, Name string
	Data           []byte
}

// allRecords collects what snapshot.Records yields for b.
func allRecords(t *testing.T, b []byte) []record {
	t.Helper()
	var out []record
	err := snapshot.Records(b, func(r snapshot.Record) error {
		out = append(out, record{r.Kind, string(r.Keyspace), string(r.Name), append([]byte{}, r.Data...)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withFunctions adds two overloads of a function and an aggregate to s.
func withFunctions(t *testing.T, s schema.Schema) schema.Schema {
	s = mustApply(t, s, &schema.CreateFunction{Keyspace: "shop", Name: "f", Args: []schema.FunctionArg{{Name: "a", Type: schema.TypeInt}},
		ReturnType: schema.TypeInt, CalledOnNullInput: true, Language: "java", Body: "return a;"}, 10)
	s = mustApply(t, s, &schema.CreateFunction{Keyspace: "shop", Name: "f", Args: []schema.FunctionArg{{Name: "a", Type: schema.TypeText}},
		ReturnType: schema.TypeInt, CalledOnNullInput: true, Language: "java", Body: "return 1;"}, 11)
	return s
}

// TestRecordsAreTheEncodedObjects: Records yields every keyspace, type,
// table, index, request and function, section by section in keyspace and
// name order (requests oldest first), each keyed as the schema store keys
// it and encoded as the schema encoders encode it.
func TestRecordsAreTheEncodedObjects(t *testing.T) {
	s := withFunctions(t, richSchema(t))
	var want []record
	add := func(kind snapshot.RecordKind, ks, name string, data []byte) {
		want = append(want, record{kind, ks, name, data})
	}
	for _, k := range s.Keyspaces() {
		add(snapshot.RecordKeyspace, k.Name, k.Name, schema.AppendKeyspace(nil, k))
	}
	for _, k := range s.Keyspaces() {
		for _, ut := range k.UserTypes() {
			add(snapshot.RecordType, k.Name, ut.Name, schema.AppendUserType(nil, ut))
		}
	}
	for _, k := range s.Keyspaces() {
		for _, tb := range k.Tables() {
			add(snapshot.RecordTable, k.Name, tb.Name, schema.AppendTable(nil, tb))
		}
	}
	for _, k := range s.Keyspaces() {
		for _, ix := range k.Indexes() {
			add(snapshot.RecordIndex, k.Name, ix.Name, schema.AppendIndex(nil, ix))
		}
	}
	c := richContents(t)
	c.Schema = s
	for _, r := range c.Requests {
		add(snapshot.RecordRequest, "", r.ID, r.Record)
	}
	for _, k := range s.Keyspaces() {
		for _, f := range k.Functions() {
			add(snapshot.RecordFunction, k.Name, f.Signature(), schema.AppendFunction(nil, f))
		}
	}
	got := allRecords(t, snapshot.Encode(nil, c))
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("records (-want +got):\n%s", d)
	}
	if len(want) < 10 {
		t.Fatalf("test setup: only %d records", len(want))
	}
}

// TestRecordsStopsAtCallbackError: the callback's error ends the walk and
// is returned as is.
func TestRecordsStopsAtCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := snapshot.Records(snapshot.Encode(nil, richContents(t)), func(snapshot.Record) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("Records: %v after %d records, want %v after 1", err, n, stop)
	}
}

// TestRecordsNeverPanics: every prefix and every changed byte of a snapshot
// gives an error or a walk, never a panic (Records runs on a snapshot
// before Decode has checked it).
func TestRecordsNeverPanics(t *testing.T) {
	good := snapshot.Encode(nil, &snapshot.Contents{Schema: withFunctions(t, richSchema(t))})
	walk := func(b []byte) error { return snapshot.Records(b, func(snapshot.Record) error { return nil }) }
	for n := range len(good) {
		if err := walk(good[:n]); n < 40 && !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: %v, want an error", n, err)
		}
	}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0xff
		_ = walk(b)
	}
}

// TestRecordsAllocations: walking the records allocates per section, not
// per table.
func TestRecordsAllocations(t *testing.T) {
	allocs := func(tables int) float64 {
		b := snapshot.Encode(nil, &snapshot.Contents{Schema: minimalTables(t, tables)})
		n := 0
		a := testing.AllocsPerRun(5, func() {
			n = 0
			if err := snapshot.Records(b, func(snapshot.Record) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
		})
		if n != tables+1 {
			t.Fatalf("%d records, want %d", n, tables+1)
		}
		return a
	}
	small, large := allocs(10), allocs(2000)
	if large != small || large > 16 {
		t.Fatalf("allocations: %v for 10 tables, %v for 2,000; want the same, at most 16", small, large)
	}
}
