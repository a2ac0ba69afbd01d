package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// The kinds of an ObjectKey.
const (
	// ObjectKeyspace is a keyspace's own properties (a pb.Keyspace without
	// tables, types, indexes or functions).
	ObjectKeyspace = "keyspace"
	// ObjectTable is a table or a materialized view (a pb.Table, with
	// View set for a view): they share their keyspace's names.
	ObjectTable = "table"
	// ObjectType is a user-defined type.
	ObjectType = "type"
	// ObjectIndex is a secondary index.
	ObjectIndex = "index"
	// ObjectFunction is a function or an aggregate (pb.Function.Kind).
	ObjectFunction = "function"
)

// ObjectKey names one object of the schema: what a copy of the schema
// kept from the change feed is keyed by.
type ObjectKey struct {
	// Kind is ObjectKeyspace, ObjectTable, ObjectType, ObjectIndex or
	// ObjectFunction.
	Kind string
	// Keyspace is the object's keyspace (the keyspace's own name for
	// ObjectKeyspace).
	Keyspace string
	// Name is the table, view, type or index name, or the function's
	// signature ("plus(int,int)"); empty for ObjectKeyspace.
	Name string
}

// String returns the key as "kind keyspace.name", or "keyspace ks".
func (k ObjectKey) String() string {
	if k.Kind == ObjectKeyspace {
		return k.Kind + " " + k.Keyspace
	}
	return k.Kind + " " + k.Keyspace + "." + k.Name
}

// KeyOf returns the key of o, as an event's before_object or
// after_object holds it; false for nil or an object of a kind this client
// does not know.
func KeyOf(o *pb.SchemaObject) (ObjectKey, bool) {
	switch v := o.GetObject().(type) {
	case *pb.SchemaObject_Keyspace:
		return ObjectKey{Kind: ObjectKeyspace, Keyspace: v.Keyspace.GetName()}, true
	case *pb.SchemaObject_Table:
		return ObjectKey{Kind: ObjectTable, Keyspace: v.Table.GetKeyspace(), Name: v.Table.GetName()}, true
	case *pb.SchemaObject_Type:
		return ObjectKey{Kind: ObjectType, Keyspace: v.Type.GetKeyspace(), Name: v.Type.GetName()}, true
	case *pb.SchemaObject_Index:
		return ObjectKey{Kind: ObjectIndex, Keyspace: v.Index.GetKeyspace(), Name: v.Index.GetName()}, true
	case *pb.SchemaObject_Function:
		return ObjectKey{Kind: ObjectFunction, Keyspace: v.Function.GetKeyspace(), Name: v.Function.GetSignature()}, true
	}
	return ObjectKey{}, false
}

// EventKey returns the key of the object ev is about (its before_object,
// or its after_object for a create); false for an event about no object:
// a guardrail change.
func EventKey(ev *pb.Event) (ObjectKey, bool) {
	if k, ok := KeyOf(ev.GetBeforeObject()); ok {
		return k, true
	}
	return KeyOf(ev.GetAfterObject())
}

// SchemaObjects splits keyspaces, as GetSchema and a resync message
// return them, into the objects the change feed's events are about: each
// keyspace's own properties, and each of its tables, views, types,
// indexes and functions. The values share keyspaces' messages (but for
// the keyspaces' own, which are new): they must not be modified.
func SchemaObjects(keyspaces []*pb.Keyspace) map[ObjectKey]*pb.SchemaObject {
	out := map[ObjectKey]*pb.SchemaObject{}
	add := func(o *pb.SchemaObject) {
		if k, ok := KeyOf(o); ok {
			out[k] = o
		}
	}
	for _, k := range keyspaces {
		add(&pb.SchemaObject{Object: &pb.SchemaObject_Keyspace{Keyspace: &pb.Keyspace{
			Name: k.Name, ReplicationClass: k.ReplicationClass, Replication: k.Replication, DurableWrites: k.DurableWrites,
		}}})
		for _, t := range k.Tables {
			add(&pb.SchemaObject{Object: &pb.SchemaObject_Table{Table: t}})
		}
		for _, t := range k.Types {
			add(&pb.SchemaObject{Object: &pb.SchemaObject_Type{Type: t}})
		}
		for _, ix := range k.Indexes {
			add(&pb.SchemaObject{Object: &pb.SchemaObject_Index{Index: ix}})
		}
		for _, f := range k.Functions {
			add(&pb.SchemaObject{Object: &pb.SchemaObject_Function{Function: f}})
		}
	}
	return out
}

// ErrMirrorDiverged is matched (errors.Is) by the error of a Mirror given
// an event whose before_object is not what the mirror holds for its
// object: an event was missed, repeated or applied out of order, or the
// mirror was kept from another feed. Start the mirror again from a
// resync or from GetSchema.
var ErrMirrorDiverged = errors.New("client: mirror: an event's before object is not the mirror's")

// Mirror is a copy of the schema's objects kept from the change feed:
// the structured objects GetSchema returns, by ObjectKey, updated from
// each event's after_object, with no CQL to parse. Every event's
// before_object is checked against the copy first, so a gap in the feed
// is an error, never a silent difference. A Mirror is not safe for
// concurrent use.
//
// A mirror of a feed filtered by keyspace holds that keyspace's objects;
// of a feed filtered by table, the table (or view) and its indexes.
type Mirror struct {
	table   bool // the feed is one table's: no keyspace object
	epoch   uint64
	objects map[ObjectKey]*pb.SchemaObject
}

// NewMirror returns an empty mirror at epoch 0 for the feed req asks
// for (nil: the whole schema): apply to it the messages of a watch from
// epoch 0, or start it with Reset from a GetSchema answer and watch from
// that answer's epoch.
func NewMirror(req *pb.WatchRequest) *Mirror {
	return &Mirror{table: req.GetTable() != "", objects: map[ObjectKey]*pb.SchemaObject{}}
}

// Epoch returns the epoch the mirror is at: that of the last message
// applied, of the last event applied, or of the last Reset.
func (m *Mirror) Epoch() uint64 { return m.epoch }

// Len returns how many objects the mirror holds.
func (m *Mirror) Len() int { return len(m.objects) }

// Get returns the object of key k, nil when the mirror has none.
func (m *Mirror) Get(k ObjectKey) *pb.SchemaObject { return m.objects[k] }

// Keys returns the keys of the objects the mirror holds, sorted by kind,
// keyspace and name.
func (m *Mirror) Keys() []ObjectKey {
	out := make([]ObjectKey, 0, len(m.objects))
	for k := range m.objects {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b ObjectKey) int {
		return strings.Compare(a.Kind+"\x00"+a.Keyspace+"\x00"+a.Name, b.Kind+"\x00"+b.Keyspace+"\x00"+b.Name)
	})
	return out
}

// Reset makes the mirror hold the objects of keyspaces (SchemaObjects;
// for a table's feed, without the keyspace's own) at epoch: what a resync
// message carries, or a GetSchema answer.
func (m *Mirror) Reset(epoch uint64, keyspaces []*pb.Keyspace) {
	m.objects = SchemaObjects(keyspaces)
	if m.table {
		for k := range m.objects {
			if k.Kind == ObjectKeyspace {
				delete(m.objects, k)
			}
		}
	}
	m.epoch = epoch
}

// Apply applies one message of a watch: the events of an events message
// in order (ApplyEvent), the schema of a resync (Reset); then the mirror
// is at the message's epoch. On error the mirror holds the events before
// the one that failed.
func (m *Mirror) Apply(resp *pb.WatchResponse) error {
	switch WatchTypeOf(resp) {
	case WatchResync:
		m.Reset(resp.GetEpoch(), resp.GetKeyspaces())
		return nil
	case WatchEvents:
		for _, ev := range resp.GetEvents() {
			if err := m.ApplyEvent(ev); err != nil {
				return err
			}
		}
	}
	m.epoch = max(m.epoch, resp.GetEpoch())
	return nil
}

// ApplyEvent applies one event, of a watch or of History: the object it
// is about must be in the mirror as its before_object has it (absent
// before a create), or the error matches ErrMirrorDiverged and the mirror
// is unchanged; then the mirror holds its after_object (nothing after a
// drop). A guardrail change changes no object.
func (m *Mirror) ApplyEvent(ev *pb.Event) error {
	k, ok := EventKey(ev)
	if !ok {
		m.epoch = max(m.epoch, ev.GetEpoch())
		return nil
	}
	before, after := ev.GetBeforeObject(), ev.GetAfterObject()
	if after != nil {
		if ka, _ := KeyOf(after); ka != k {
			return fmt.Errorf("%w: epoch %d, %s: before is %s, after is %s", ErrMirrorDiverged, ev.GetEpoch(), ev.GetKind(), k, ka)
		}
	}
	cur, held := m.objects[k]
	if held != (before != nil) || held && !proto.Equal(cur, before) {
		what := "another value of it"
		switch {
		case !held:
			what = "no such object"
		case before == nil:
			what = "the object it creates already"
		}
		return fmt.Errorf("%w: epoch %d, %s of %s: the mirror holds %s (resync from GetSchema)", ErrMirrorDiverged, ev.GetEpoch(), ev.GetKind(), k, what)
	}
	if after != nil {
		m.objects[k] = after
	} else {
		delete(m.objects, k)
	}
	m.epoch = max(m.epoch, ev.GetEpoch())
	return nil
}

// Diff lists the objects in which the mirror and want (SchemaObjects of
// a GetSchema answer at the mirror's epoch) differ, as "missing K",
// "extra K" and "other K", sorted; empty when the mirror is exact.
func (m *Mirror) Diff(want map[ObjectKey]*pb.SchemaObject) []string {
	var out []string
	for k, w := range want {
		if got, ok := m.objects[k]; !ok {
			out = append(out, "missing "+k.String())
		} else if !proto.Equal(got, w) {
			out = append(out, "other "+k.String())
		}
	}
	for k := range m.objects {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k.String())
		}
	}
	slices.Sort(out)
	return out
}
