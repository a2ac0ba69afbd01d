package client_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func tableObject(name string, cols ...string) *pb.SchemaObject {
	t := &pb.Table{Keyspace: "ks", Name: name, PartitionKey: []string{"id"}}
	for _, c := range cols {
		t.Columns = append(t.Columns, &pb.Column{Name: c, Type: "int", Kind: "regular"})
	}
	return &pb.SchemaObject{Object: &pb.SchemaObject_Table{Table: t}}
}

func indexObject(name, table string) *pb.SchemaObject {
	return &pb.SchemaObject{Object: &pb.SchemaObject_Index{Index: &pb.Index{Keyspace: "ks", Table: table, Name: name, Column: "v"}}}
}

func keyspaceObject() *pb.SchemaObject {
	return &pb.SchemaObject{Object: &pb.SchemaObject_Keyspace{Keyspace: &pb.Keyspace{Name: "ks", ReplicationClass: "SimpleStrategy", DurableWrites: true}}}
}

// TestMirrorFollowsTheChain: a mirror applies creates, alterations and
// drops, derived events included, skips guardrail changes, and refuses
// (ErrMirrorDiverged, unchanged) an event whose before object is not its
// own: a missed create, a repeated event, another value.
func TestMirrorFollowsTheChain(t *testing.T) {
	m := client.NewMirror(nil)
	msgs := []*pb.WatchResponse{
		{Type: string(client.WatchEvents), Epoch: 1, Events: []*pb.Event{{Epoch: 1, Kind: "CREATE KEYSPACE", AfterObject: keyspaceObject()}}},
		{Type: string(client.WatchEvents), Epoch: 3, Events: []*pb.Event{
			{Epoch: 2, Kind: "CREATE TABLE", AfterObject: tableObject("t", "v")},
			{Epoch: 3, Kind: "CREATE TABLE", AfterObject: tableObject("c", "v")},
			{Epoch: 3, Kind: "CREATE INDEX", AfterObject: indexObject("c_v_idx", "c"), Cause: &pb.EventCause{Kind: "CREATE TABLE"}},
		}},
		{Type: string(client.WatchEvents), Epoch: 5, Events: []*pb.Event{
			{Epoch: 4, Kind: "SET GUARDRAILS", Before: "a=1\n", After: "a=2\n"},
			{Epoch: 5, Kind: "ALTER TABLE", BeforeObject: tableObject("t", "v"), AfterObject: tableObject("t", "v", "w")},
		}},
		{Type: string(client.WatchProgress), Epoch: 6},
	}
	for _, msg := range msgs {
		if err := m.Apply(msg); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{}
	for _, k := range m.Keys() {
		keys = append(keys, k.String())
	}
	if want := []string{"index ks.c_v_idx", "keyspace ks", "table ks.c", "table ks.t"}; !slices.Equal(keys, want) || m.Epoch() != 6 {
		t.Fatalf("mirror at %d holds %v, want %v", m.Epoch(), keys, want)
	}
	if got := m.Get(client.ObjectKey{Kind: client.ObjectTable, Keyspace: "ks", Name: "t"}).GetTable(); len(got.GetColumns()) != 2 {
		t.Errorf("table t is %v", got)
	}
	for _, bad := range []*pb.Event{
		{Epoch: 7, Kind: "DROP INDEX", BeforeObject: indexObject("other", "c")},                                  // never created
		{Epoch: 7, Kind: "CREATE TABLE", AfterObject: tableObject("c", "v")},                                     // repeated
		{Epoch: 7, Kind: "ALTER TABLE", BeforeObject: tableObject("t", "v"), AfterObject: tableObject("t", "x")}, // an old before
		{Epoch: 7, Kind: "ALTER TABLE", BeforeObject: tableObject("t", "v", "w"), AfterObject: tableObject("u")}, // another object after
	} {
		if err := m.ApplyEvent(bad); !errors.Is(err, client.ErrMirrorDiverged) {
			t.Errorf("%s %v: %v, want ErrMirrorDiverged", bad.Kind, bad, err)
		}
	}
	if m.Len() != 4 || m.Epoch() != 6 {
		t.Errorf("refused events changed the mirror: %d objects at epoch %d", m.Len(), m.Epoch())
	}
	drop := &pb.WatchResponse{Type: string(client.WatchEvents), Epoch: 7, Events: []*pb.Event{
		{Epoch: 7, Kind: "DROP TABLE", BeforeObject: tableObject("c", "v")},
		{Epoch: 7, Kind: "DROP INDEX", BeforeObject: indexObject("c_v_idx", "c"), Cause: &pb.EventCause{Kind: "DROP TABLE"}},
	}}
	if err := m.Apply(drop); err != nil || m.Len() != 2 {
		t.Fatalf("drop: %v, %d objects", err, m.Len())
	}
}

// TestMirrorResyncAndDiff: a resync replaces the mirror's objects with
// the schema it carries (without the keyspace's own for a table's feed),
// and Diff names the objects that differ from GetSchema's.
func TestMirrorResyncAndDiff(t *testing.T) {
	ks := []*pb.Keyspace{{
		Name: "ks", ReplicationClass: "SimpleStrategy", DurableWrites: true,
		Tables:    []*pb.Table{tableObject("t", "v").GetTable()},
		Indexes:   []*pb.Index{indexObject("t_v_idx", "t").GetIndex()},
		Types:     []*pb.UserType{{Keyspace: "ks", Name: "ty"}},
		Functions: []*pb.Function{{Keyspace: "ks", Name: "f", Signature: "f(int)"}},
	}}
	m := client.NewMirror(nil)
	if err := m.Apply(&pb.WatchResponse{Type: string(client.WatchResync), Epoch: 9, Keyspaces: ks}); err != nil || m.Len() != 5 || m.Epoch() != 9 {
		t.Fatalf("resync: %v, %d objects at %d", err, m.Len(), m.Epoch())
	}
	want := client.SchemaObjects(ks)
	if diff := m.Diff(want); len(diff) != 0 {
		t.Errorf("diff after a resync: %v", diff)
	}
	if err := m.ApplyEvent(&pb.Event{Epoch: 10, Kind: "DROP TYPE", BeforeObject: &pb.SchemaObject{Object: &pb.SchemaObject_Type{Type: ks[0].Types[0]}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.ApplyEvent(&pb.Event{Epoch: 11, Kind: "ALTER TABLE", BeforeObject: tableObject("t", "v"), AfterObject: tableObject("t")}); err != nil {
		t.Fatal(err)
	}
	if diff := fmt.Sprint(m.Diff(want)); diff != "[missing type ks.ty other table ks.t]" {
		t.Errorf("diff %s", diff)
	}
	tm := client.NewMirror(&pb.WatchRequest{Keyspace: "ks", Table: "t"})
	tm.Reset(9, []*pb.Keyspace{{Name: "ks", Tables: ks[0].Tables, Indexes: ks[0].Indexes}})
	if fmt.Sprint(tm.Keys()) != "[index ks.t_v_idx table ks.t]" {
		t.Errorf("a table's mirror holds %v", tm.Keys())
	}
}
