package client

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// Backup opens a backup stream (see the service's Backup) on the first
// endpoint that answers, a read endpoint first (Config.ReadEndpoints): it returns once the first message, with the
// epoch, index and size, has arrived, so an unavailable member is passed
// over as for any call. A failure after that comes from Recv; a backup is
// then taken again from the start. Without a deadline on ctx the whole
// backup is bounded by Config.Timeout.
func (c *Client) Backup(ctx context.Context, req *pb.BackupRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[pb.BackupResponse], error) {
	return openBackup(ctx, c, pb.MetadataServiceClient.Backup, req, opts)
}

// SaveSnapshot is Backup under the service's deprecated name, for members
// that predate Backup.
//
// Deprecated: call Backup.
func (c *Client) SaveSnapshot(ctx context.Context, req *pb.SaveSnapshotRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[pb.SaveSnapshotResponse], error) {
	return openBackup(ctx, c, pb.MetadataServiceClient.SaveSnapshot, req, opts)
}

// openBackup opens a backup stream with rpcMethod, as Backup says.
func openBackup[Req any, Resp any](ctx context.Context, c *Client,
	rpcMethod func(pb.MetadataServiceClient, context.Context, Req, ...grpc.CallOption) (grpc.ServerStreamingClient[Resp], error),
	req Req, opts []grpc.CallOption) (grpc.ServerStreamingClient[Resp], error) {
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
	}
	open := func(rpc pb.MetadataServiceClient, ctx context.Context, req Req, opts ...grpc.CallOption) (*backupStream[Resp], error) {
		stream, err := rpcMethod(rpc, ctx, req, opts...)
		if err != nil {
			return nil, err
		}
		first, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		return &backupStream[Resp]{ServerStreamingClient: stream, first: first, cancel: cancel}, nil
	}
	s, err := read(ctx, c, open, req, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return s, nil
}

// backupStream hands out the first message the stream received, then the
// rest of the stream; it releases the stream's context once Recv returned
// an error (io.EOF at the end).
type backupStream[Resp any] struct {
	grpc.ServerStreamingClient[Resp]
	first  *Resp
	cancel context.CancelFunc
}

func (s *backupStream[Resp]) Recv() (*Resp, error) {
	m := new(Resp)
	if err := s.RecvMsg(m); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *backupStream[Resp]) RecvMsg(m any) error {
	if s.first != nil {
		msg, ok := m.(*Resp)
		if !ok {
			return fmt.Errorf("client: backup RecvMsg into %T, want %T", m, s.first)
		}
		// Every Resp is a generated message: *Resp is a proto.Message.
		dst, src := any(msg).(proto.Message), any(s.first).(proto.Message)
		proto.Reset(dst)
		proto.Merge(dst, src)
		s.first = nil
		return nil
	}
	err := s.ServerStreamingClient.RecvMsg(m)
	if err != nil {
		s.cancel()
	}
	return err
}
