package api

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/metalog/metalog/member"
)

// Every response of the service carries the answering member's cluster id
// and history id (member.Identity) in its fields cluster_id and
// history_id, so that a consumer can tell that epoch numbers changed
// meaning (a restore, a forced new cluster). They are set in one place,
// an interceptor of both gRPC servers (so the gateway's answers have them
// too), rather than by each handler: a handler added later cannot forget
// them, and TestEveryResponseCarriesTheIdentity checks that every
// response message has the fields.

// Names of the identity fields, the same in every response message.
const (
	clusterIDField protoreflect.Name = "cluster_id"
	historyIDField protoreflect.Name = "history_id"
)

// stamp sets the identity fields of the responses. A member's cluster id
// never changes while it runs, but its history id is "" until the cluster
// has named its history and is set from then on, so the identity is read
// for every response; its text is made once per identity.
type stamp struct {
	b    Identifier // nil: the Backend has no identity, nothing is set
	last atomic.Pointer[stampText]
}

// stampText is the text of one identity's fields.
type stampText struct {
	id               member.Identity
	cluster, history string
}

// newStamp returns the stamp of b's identity (one that sets nothing when b
// is nil: a Backend without Identity, as a test's fake).
func newStamp(b Identifier) *stamp {
	return &stamp{b: b}
}

// text returns the text of the identity fields as of now.
func (s *stamp) text() *stampText {
	ident := s.b.Identity()
	if t := s.last.Load(); t != nil && t.id == ident {
		return t
	}
	t := &stampText{id: ident, cluster: clusterIDText(ident.ClusterID), history: member.FormatHistoryID(ident.HistoryID)}
	s.last.Store(t)
	return t
}

// set sets the identity fields of m, when it is a message that has them.
func (s *stamp) set(m any) {
	pm, ok := m.(proto.Message)
	if s.b == nil || !ok || pm == nil {
		return
	}
	r := pm.ProtoReflect()
	if !r.IsValid() {
		return
	}
	fields := r.Descriptor().Fields()
	t := s.text()
	for _, f := range []struct {
		name  protoreflect.Name
		value string
	}{{clusterIDField, t.cluster}, {historyIDField, t.history}} {
		if fd := fields.ByName(f.name); fd != nil && fd.Kind() == protoreflect.StringKind && fd.Cardinality() != protoreflect.Repeated {
			r.Set(fd, protoreflect.ValueOfString(f.value))
		}
	}
}

// unary stamps the response of a unary call.
func (s *stamp) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err == nil {
		s.set(resp)
	}
	return resp, err
}

// stream stamps every message a streaming call sends (Watch, Backup).
func (s *stamp) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if s.b == nil {
		return handler(srv, ss)
	}
	return handler(srv, &stampedStream{ServerStream: ss, stamp: s})
}

// stampedStream is a server stream whose messages get the identity.
type stampedStream struct {
	grpc.ServerStream
	stamp *stamp
}

// SendMsg stamps m and sends it.
func (ss *stampedStream) SendMsg(m any) error {
	ss.stamp.set(m)
	return ss.ServerStream.SendMsg(m)
}

// historyIDOf reads the history_id of a Watch or History request: 0 when
// empty, InvalidArgument when it is not a history id.
func historyIDOf(s string) (uint64, error) {
	id, err := member.ParseHistoryID(s)
	if err != nil {
		return 0, status.Error(codes.InvalidArgument, err.Error())
	}
	return id, nil
}
