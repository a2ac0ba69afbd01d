package peerrpc

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// History copying: the bounds of one HistoryRecordsChunk.
const (
	// historyChunkRecords bounds the records of one chunk.
	historyChunkRecords = 256
	// historyChunkBytes bounds a chunk's size (a chunk holds at least one
	// record, however large).
	historyChunkBytes = 1 << 20
)

// Handler is the member's side of the peer service. Its methods return
// the member's own errors; the server answers them with gRPC statuses
// (answer). Every method may be called concurrently.
type Handler interface {
	// CheckCaller refuses a call of a member of another cluster with a
	// *CallerError; nil otherwise.
	CheckCaller(ctx context.Context) error
	// Caller says which current member makes the call of ctx, or why it
	// is none (raftlog.PeerGate.Caller).
	Caller(ctx context.Context) (raftlog.PeerCall, error)
	// NodeStatus is the member's own status, once it has applied
	// minEpoch or has waited a little for it (0: at once); brief, without
	// its history, alarms and configuration.
	NodeStatus(ctx context.Context, minEpoch uint64, brief bool) *PeerMember
	// Repair rebuilds the member's metadata from its log and newest
	// snapshot; id, if not empty, must name this member.
	Repair(ctx context.Context, id string) (*PeerRepairResponse, error)
	// HistoryRecords is where the member's encoded history records of
	// (from, to] are read from, for the call of ctx.
	HistoryRecords(ctx context.Context, from, to uint64) HistorySource
}

// HistorySource is a member's encoded history (metadata.StateMachine).
type HistorySource interface {
	// EncodedHistory returns at most max encoded records of the epochs in
	// (from, to], oldest first, and the oldest epoch kept.
	EncodedHistory(from, to uint64, max int) ([][]byte, uint64, error)
}

// Register registers the peer service of h on s.
func Register(s *grpc.Server, h Handler) {
	RegisterPeerServiceServer(s, &server{h: h})
}

// server implements PeerServiceServer over a Handler.
type server struct {
	UnimplementedPeerServiceServer
	h Handler
}

// NodeStatus implements PeerServiceServer.
func (s *server) NodeStatus(ctx context.Context, req *NodeStatusRequest) (*PeerMember, error) {
	return s.h.NodeStatus(ctx, req.GetMinEpoch(), req.GetBrief()), nil
}

// Repair implements PeerServiceServer.
func (s *server) Repair(ctx context.Context, req *PeerRepairRequest) (*PeerRepairResponse, error) {
	resp, err := s.h.Repair(ctx, req.GetId())
	if err != nil {
		return nil, answer(err)
	}
	return resp, nil
}

// HistoryRecords implements PeerServiceServer: the handler's records of
// (from_epoch, to_epoch], oldest first, in chunks.
func (s *server) HistoryRecords(req *HistoryRecordsRequest, stream grpc.ServerStreamingServer[HistoryRecordsChunk]) error {
	ctx := stream.Context()
	if err := s.h.CheckCaller(ctx); err != nil {
		return answer(err)
	}
	from, to := req.GetFromEpoch(), req.GetToEpoch()
	if to < from {
		return status.Errorf(codes.InvalidArgument, "to_epoch %d is before from_epoch %d", to, from)
	}
	src := s.h.HistoryRecords(ctx, from, to)
	for from < to {
		recs, oldest, err := src.EncodedHistory(from, to, historyChunkRecords)
		var pruned *metadata.PrunedError
		var incomplete *metadata.IncompleteError
		switch {
		case errors.As(err, &pruned):
			return status.Error(codes.OutOfRange, pruned.Error())
		case errors.As(err, &incomplete):
			return status.Error(codes.Unavailable, incomplete.Error())
		case err != nil:
			return err // Unknown
		case len(recs) == 0:
			return nil // this member has no more (it is behind)
		}
		chunk := &HistoryRecordsChunk{OldestEpoch: oldest}
		size := 0
		for _, r := range recs {
			if size > 0 && size+len(r) > historyChunkBytes {
				break
			}
			chunk.Records = append(chunk.Records, r)
			size += len(r)
		}
		if err := stream.Send(chunk); err != nil {
			return err
		}
		// The next read starts after the last record sent.
		last, err := metadata.RecordEpoch(chunk.Records[len(chunk.Records)-1])
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		from = last
	}
	return nil
}

// answer is the status the peer service answers a handler's error with:
// the peer wire's own small table (the client API's is package
// api/apierr). The message is the error's.
//
//   - a *CallerError: raftlog's status of a caller of another cluster;
//   - ErrPrecondition, raftlog.ErrRepairUnsupported: FailedPrecondition;
//   - no leader, a stopped node or state machine, history this member
//     has not copied yet: Unavailable;
//   - the call's deadline, its cancellation: DeadlineExceeded, Canceled;
//   - anything else: Internal.
func answer(err error) error {
	var ce *CallerError
	if errors.As(err, &ce) {
		return ce.status()
	}
	code := codes.Internal
	switch {
	case errors.Is(err, ErrPrecondition), errors.Is(err, raftlog.ErrRepairUnsupported):
		code = codes.FailedPrecondition
	case errors.Is(err, raftlog.ErrNoLeader), errors.Is(err, raftlog.ErrStopped), errors.Is(err, raftlog.ErrLeaderChanged),
		errors.Is(err, metadata.ErrStateMachineClosed), errors.Is(err, metadata.ErrHistoryIncomplete):
		code = codes.Unavailable
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	}
	return status.Error(code, err.Error())
}

// ServerOptions are the peer server's interceptors for h: a unary call is
// refused when it comes from a member of another cluster
// (Handler.CheckCaller), then when its caller is not a current member
// (PermissionDenied); the streams of PeerService are admitted from
// current members only, and check the caller's cluster themselves; other
// streams (raftlog's snapshot service) check their callers themselves.
// A handler finds its caller with CallerOf.
func ServerOptions(h Handler) []grpc.ServerOption {
	return []grpc.ServerOption{grpc.UnaryInterceptor((&gate{h}).unary), grpc.StreamInterceptor((&gate{h}).stream)}
}

// gate holds the interceptors of a Handler.
type gate struct{ h Handler }

// callerKey is the context key of a peer call's raftlog.PeerCall.
type callerKey struct{}

// CallerOf is who made the peer call of ctx (the interceptors put it).
func CallerOf(ctx context.Context) raftlog.PeerCall {
	c, _ := ctx.Value(callerKey{}).(raftlog.PeerCall)
	return c
}

// unary is the peer server's unary interceptor.
func (g *gate) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := g.h.CheckCaller(ctx); err != nil {
		return nil, answer(err)
	}
	call, err := g.h.Caller(ctx)
	if err != nil {
		return nil, refusal(info.FullMethod, err)
	}
	return handler(context.WithValue(ctx, callerKey{}, call), req)
}

// stream is the peer server's stream interceptor.
func (g *gate) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !strings.HasPrefix(info.FullMethod, "/"+PeerService_ServiceDesc.ServiceName+"/") {
		return handler(srv, ss)
	}
	call, err := g.h.Caller(ss.Context())
	if err != nil {
		return refusal(info.FullMethod, err)
	}
	return handler(srv, &callerStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), callerKey{}, call)})
}

// refusal is the answer to a peer call of method that is not a current
// member's: PermissionDenied, or Unavailable when who the caller is could
// not be told.
func refusal(method string, err error) error {
	code := codes.PermissionDenied
	if !errors.Is(err, raftlog.ErrNotMember) && !errors.Is(err, raftlog.ErrPeerUsage) {
		code = codes.Unavailable
	}
	return status.Errorf(code, "%s: %v; only the members of this cluster may call its peer port", method, err)
}

// callerStream is a server stream whose context carries its caller.
type callerStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context implements grpc.ServerStream.
func (s *callerStream) Context() context.Context { return s.ctx }
