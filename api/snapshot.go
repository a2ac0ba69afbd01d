package api

import (
	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
)

// snapshotChunk is the most snapshot bytes one SaveSnapshot message
// carries (a variable for the tests).
var snapshotChunk = 1 << 20

// SaveSnapshot streams a backup of the state at a linearizable point: the
// member confirms with the leader that it has applied everything committed
// when the request came, then encodes that (immutable) view while it
// applies on.
func (s *service) SaveSnapshot(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	view, err := s.m.View(stream.Context(), 0, member.Linearizable)
	if err != nil {
		return toStatus(err)
	}
	data := metadata.EncodeBackup(view)
	msg := &pb.SaveSnapshotResponse{Epoch: view.Epoch, Index: view.Index, Size: uint64(len(data))}
	for off := 0; ; {
		n := min(snapshotChunk, len(data)-off)
		msg.Data = data[off : off+n]
		if err := stream.Send(msg); err != nil {
			return err
		}
		if off += n; off == len(data) {
			break
		}
		msg = &pb.SaveSnapshotResponse{}
	}
	s.logger.Info("snapshot saved by a client", "principal", principal(stream.Context()), "epoch", view.Epoch, "index", view.Index, "bytes", len(data))
	return nil
}
