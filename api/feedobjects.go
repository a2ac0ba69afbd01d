package api

import (
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
)

// setObjects sets the structured objects of ev, the converted e: its
// before and after objects, and the statement that caused a derived
// event.
func setObjects(ev *pb.Event, e *metadata.Event) {
	ev.BeforeObject = objectToProto(e.BeforeObject())
	ev.AfterObject = objectToProto(e.AfterObject())
	if c := e.Cause; c != nil {
		ev.Cause = &pb.EventCause{Kind: c.Kind, Keyspace: c.Keyspace, Table: c.Table, Name: c.Name, Statement: c.Statement}
	}
}
