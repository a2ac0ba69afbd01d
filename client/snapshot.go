package client

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// SaveSnapshot opens a backup stream (see the service's SaveSnapshot) on
// the first endpoint that answers: it returns once the first message, with
// the epoch, index and size, has arrived, so an unavailable member is
// passed over as for any call. A failure after that comes from Recv; a
// backup is then taken again from the start. Without a deadline on ctx the
// whole backup is bounded by Config.Timeout.
func (c *Client) SaveSnapshot(ctx context.Context, req *pb.SaveSnapshotRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[pb.SaveSnapshotResponse], error) {
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
	}
	open := func(rpc pb.MetadataServiceClient, ctx context.Context, req *pb.SaveSnapshotRequest, opts ...grpc.CallOption) (*snapshotStream, error) {
		stream, err := rpc.SaveSnapshot(ctx, req, opts...)
		if err != nil {
			return nil, err
		}
		first, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		return &snapshotStream{ServerStreamingClient: stream, first: first, cancel: cancel}, nil
	}
	s, err := call(ctx, c, open, req, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return s, nil
}

// snapshotStream hands out the first message SaveSnapshot received, then
// the rest of the stream; it releases the stream's context once Recv
// returned an error (io.EOF at the end).
type snapshotStream struct {
	grpc.ServerStreamingClient[pb.SaveSnapshotResponse]
	first  *pb.SaveSnapshotResponse
	cancel context.CancelFunc
}

func (s *snapshotStream) Recv() (*pb.SaveSnapshotResponse, error) {
	m := new(pb.SaveSnapshotResponse)
	if err := s.RecvMsg(m); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *snapshotStream) RecvMsg(m any) error {
	if s.first != nil {
		msg, ok := m.(*pb.SaveSnapshotResponse)
		if !ok {
			return fmt.Errorf("client: SaveSnapshot RecvMsg into %T, want *metalogpb.SaveSnapshotResponse", m)
		}
		proto.Reset(msg)
		proto.Merge(msg, s.first)
		s.first = nil
		return nil
	}
	err := s.ServerStreamingClient.RecvMsg(m)
	if err != nil {
		s.cancel()
	}
	return err
}
