package api

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// Watch streams the change feed the member runs.
func (s *service) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	hid, err := historyIDOf(req.GetHistoryId())
	if err != nil {
		return err
	}
	vis, scope := visibleScope(stream.Context())
	q := member.WatchQuery{From: req.FromEpoch, Keyspace: req.GetKeyspace(), Table: req.GetTable(), Visible: vis, Scope: scope, HistoryID: hid}
	err = s.r.Watch(stream.Context(), q, func(msg member.WatchMessage) error {
		b, err := s.encodeWatch(&q, msg)
		if err != nil {
			return err
		}
		return stream.SendMsg(&encodedMessage{b: b})
	})
	return toStatus(err)
}

// encodeWatch returns the bytes of the response of msg, stamped with the
// member's identity: those made for the first stream sent the same
// message with the same identity, when msg is shared
// (member.WatchMessage.Shared).
func (s *service) encodeWatch(q *member.WatchQuery, msg member.WatchMessage) ([]byte, error) {
	var ident any
	if s.stamp.b != nil {
		ident = s.stamp.text()
	}
	return msg.Shared.Bytes(ident, func() ([]byte, error) {
		resp := &pb.WatchResponse{Type: msg.Type, Epoch: msg.Epoch, Cql: msg.CQL}
		if msg.Type == member.WatchResync {
			resp.Keyspaces = resyncKeyspaces(msg.Schema, q.Keyspace, q.Table)
		}
		for _, r := range msg.Records {
			resp.Events = append(resp.Events, s.events.of(r)...)
		}
		s.stamp.set(resp)
		return marshalShared(resp)
	})
}

// History returns a page of the history.
func (s *service) History(ctx context.Context, req *pb.HistoryRequest) (*pb.HistoryResponse, error) {
	hid, err := historyIDOf(req.GetHistoryId())
	if err != nil {
		return nil, err
	}
	q := member.HistoryQuery{
		From: req.FromEpoch, To: req.ToEpoch, Keyspace: req.GetKeyspace(), Table: req.GetTable(), Limit: int(req.GetLimit()),
		Visible: visible(ctx), HistoryID: hid, Principal: req.GetPrincipal(), Kind: req.GetKind(),
	}
	if err := historyTimes(&q, req); err != nil {
		return nil, err
	}
	page, err := s.r.History(ctx, q)
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.HistoryResponse{Events: []*pb.Event{}, NextEpoch: page.Next, Epoch: page.Epoch, OldestEpoch: page.Oldest}
	for _, r := range page.Records {
		resp.Events = append(resp.Events, s.events.of(r)...)
	}
	return resp, nil
}

// eventsOf converts the events of a record (as the feed has them:
// metadata.Record.Feed).
func eventsOf(r *metadata.Record) []*pb.Event {
	var at *timestamppb.Timestamp
	if r.Time != 0 {
		at = timestamppb.New(r.When())
	}
	out := make([]*pb.Event, len(r.Events))
	for i := range r.Events {
		e := &r.Events[i]
		out[i] = &pb.Event{
			Epoch: r.Epoch, Index: r.Index, Time: at, Principal: r.Principal, Role: r.Role, RequestId: r.RequestID,
			Kind: e.Kind, Keyspace: e.Keyspace, Table: e.Table, Name: e.Name, Statement: e.Statement,
			Before: e.Before(), After: e.After(),
		}
		if sc := e.Scope(); sc != "" {
			out[i].Scope = &sc
		}
		setObjects(out[i], e)
	}
	return out
}

// eventCacheSize is how many records' converted events eventCache keeps.
const eventCacheSize = 1024

// eventCache keeps the converted events of the newest records, so that
// the watchers of one epoch share one conversion (the DESCRIBE text of the
// objects before and after is the costly part). The messages are only
// read afterwards, which is safe from many streams at once.
type eventCache struct {
	mu   sync.Mutex
	byID map[*metadata.Record][]*pb.Event
	ring [eventCacheSize]*metadata.Record
	next int
}

// of returns the events of r, converted once while r is among the newest.
func (c *eventCache) of(r *metadata.Record) []*pb.Event {
	c.mu.Lock()
	if ev, ok := c.byID[r]; ok {
		c.mu.Unlock()
		return ev
	}
	c.mu.Unlock()
	ev := eventsOf(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = make(map[*metadata.Record][]*pb.Event, eventCacheSize)
	}
	if old := c.ring[c.next]; old != nil {
		delete(c.byID, old)
	}
	c.ring[c.next] = r
	c.next = (c.next + 1) % eventCacheSize
	c.byID[r] = ev
	return ev
}
