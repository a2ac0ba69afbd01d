package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// snapshotChunk is the most snapshot bytes one SaveSnapshot message
// carries (a variable for the tests).
var snapshotChunk = 1 << 20

// SaveSnapshot streams a backup of the state at a linearizable point
// (Backend.Backup).
func (s *service) SaveSnapshot(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	data, view, err := s.m.Backup(stream.Context())
	if err != nil {
		return toStatus(err)
	}
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

// snapshotDownload serves GET /v1/snapshot: SaveSnapshot through the
// gateway's connections (so the same interceptors authorize it), written as
// the raw file, application/octet-stream, with its length and the
// Metalog-Epoch and Metalog-Index headers. An error before the first byte
// is the gateway's JSON error; one after it cuts the response short of its
// Content-Length, so a client never takes a partial file for a whole one.
func snapshotDownload(gw *runtime.ServeMux, rpc pb.MetadataServiceClient) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		_, out := runtime.MarshalerForRequest(gw, r)
		ctx, err := runtime.AnnotateContext(r.Context(), gw, r, "/metalog.v1.MetadataService/SaveSnapshot", runtime.WithHTTPPathPattern("/v1/snapshot"))
		if err != nil {
			runtime.HTTPError(ctx, gw, out, w, r, err)
			return
		}
		stream, err := rpc.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
		var first *pb.SaveSnapshotResponse
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
