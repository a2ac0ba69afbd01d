package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// backupChunk is the most backup bytes one Backup message carries (a
// variable for the tests).
var backupChunk = 1 << 20

// Backup streams a backup of the state at a linearizable point
// (Reader.Backup).
func (s *service) Backup(_ *pb.BackupRequest, stream grpc.ServerStreamingServer[pb.BackupResponse]) error {
	return s.sendBackup(stream.Context(), "Backup", func(m *pb.BackupResponse) error { return stream.Send(m) })
}

// SaveSnapshot is Backup under its deprecated name: the same chunks, in
// messages of the older type.
func (s *service) SaveSnapshot(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	return s.sendBackup(stream.Context(), "SaveSnapshot", func(m *pb.BackupResponse) error {
		return stream.Send(&pb.SaveSnapshotResponse{Epoch: m.Epoch, Index: m.Index, Size: m.Size, Data: m.Data})
	})
}

// sendBackup takes a backup and hands it to send in chunks of at most
// backupChunk bytes, the first one with the epoch, index and size.
func (s *service) sendBackup(ctx context.Context, method string, send func(*pb.BackupResponse) error) error {
	data, state, err := s.r.Backup(ctx)
	if err != nil {
		return toStatus(err)
	}
	msg := &pb.BackupResponse{Epoch: state.Epoch, Index: state.Index, Size: uint64(len(data))}
	for off := 0; ; {
		n := min(backupChunk, len(data)-off)
		msg.Data = data[off : off+n]
		if err := send(msg); err != nil {
			return err
		}
		if off += n; off == len(data) {
			break
		}
		msg = &pb.BackupResponse{}
	}
	s.logger.Info("backup saved by a client", "method", method, "principal", principal(ctx), "epoch", state.Epoch, "index", state.Index, "bytes", len(data))
	return nil
}

// backupDownload serves GET /v1/backup (and its deprecated older path,
// /v1/snapshot): Backup through the gateway's connections (so the same
// interceptors authorize it), written as the raw file,
// application/octet-stream, with its length and the Metalog-Epoch and
// Metalog-Index headers. An error before the first byte is the gateway's
// JSON error; one after it cuts the response short of its
// Content-Length, so a client never takes a partial file for a whole one.
func backupDownload(gw *runtime.ServeMux, rpc pb.MetadataServiceClient, path string) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		_, out := runtime.MarshalerForRequest(gw, r)
		ctx, err := runtime.AnnotateContext(r.Context(), gw, r, "/metalog.v1.MetadataService/Backup", runtime.WithHTTPPathPattern(path))
		if err != nil {
			runtime.HTTPError(ctx, gw, out, w, r, err)
			return
		}
		stream, err := rpc.Backup(ctx, &pb.BackupRequest{})
		var first *pb.BackupResponse
		if err == nil {
			first, err = stream.Recv()
		}
		if err != nil {
			runtime.HTTPError(ctx, gw, out, w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatUint(first.Size, 10))
		h.Set("Metalog-Epoch", strconv.FormatUint(first.Epoch, 10))
		h.Set("Metalog-Index", strconv.FormatUint(first.Index, 10))
		for m := first; ; {
			if _, err := w.Write(m.Data); err != nil {
				return // the client went away
			}
			if m, err = stream.Recv(); errors.Is(err, io.EOF) {
				return
			} else if err != nil {
				panic(http.ErrAbortHandler) // cut short: see above
			}
		}
	}
}
