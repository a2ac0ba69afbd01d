package raftlog

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcpeer "google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

// A snapshot being received is written to a temporary file as its chunks
// arrive, never held in memory: its announced size is the sender's word,
// checked against the largest this member accepts before anything is
// received, and what arrives must match it and its SHA-256. Only then is
// the data read back, once, to be handed to the node (raft and the Applier
// take the snapshot in memory; the node writes it to its own snapshot
// file). The temporary file is removed in every case; one left by a crash
// goes at the next start (purgeSnapFiles). It is not synced: it is never
// read after a restart, the node's own file is.

// snapRecvPattern names the temporary files of snapshots being received
// (os.CreateTemp); purgeSnapFiles removes them by their ".tmp" suffix.
const snapRecvPattern = "receiving-*.tmp"

// snapshotStream is the receiving end of a SendSnapshot stream.
type snapshotStream = grpc.ClientStreamingServer[peerpb.SnapshotChunk, peerpb.Ack]

// receiveSnapshot receives the data of snapshot message m, whose first
// chunk (the header, which may carry data too) is first, to the end of
// stream. It returns the data, checked against the announced size and
// SHA-256, and the bytes received (also on error).
func (b *peerBounds) receiveSnapshot(stream snapshotStream, m *raftpb.Message, first *peerpb.SnapshotChunk) ([]byte, int, error) {
	index, from, want := m.GetSnapshot().GetMetadata().GetIndex(), FormatID(m.GetFrom()), first.GetSize()
	if want > b.maxSnapshot {
		return nil, 0, status.Errorf(codes.ResourceExhausted,
			"raftlog: snapshot at %d from %s announces %d bytes, more than the %d this member accepts (twice its max_mutation_size, plus 1 MiB): refused before any of it was received; give every member the same max_mutation_size",
			index, from, want, b.maxSnapshot)
	}
	select {
	case b.snapTurns <- struct{}{}:
		defer func() { <-b.snapTurns }()
	default:
		return nil, 0, status.Errorf(codes.ResourceExhausted,
			"raftlog: snapshot at %d from %s: %d snapshots are being received already: refused, the sender tries again later", index, from, maxSnapshotReceives)
	}
	f, err := b.snapshotFile()
	if err != nil {
		return nil, 0, status.Errorf(codes.Unavailable, "raftlog: snapshot at %d from %s: %v", index, from, err)
	}
	defer func() {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}()
	r := snapshotReceipt{b: b, f: f, sum: sha256.New(), want: want, index: index, from: from}
	if err := r.copy(stream, first); err != nil {
		return nil, int(r.got), err
	}
	if sum := r.sum.Sum(nil); !bytes.Equal(sum, first.GetSha256()) {
		return nil, int(r.got), status.Errorf(codes.DataLoss, "raftlog: snapshot at %d from %s: SHA-256 mismatch (%x, announced %x)", index, from, sum, first.GetSha256())
	}
	data, err := r.readBack()
	if err != nil {
		return nil, int(r.got), status.Errorf(codes.Unavailable, "raftlog: snapshot at %d from %s: read back %s: %v", index, from, f.Name(), err)
	}
	return data, int(r.got), nil
}

// snapshotFile creates the temporary file of a snapshot being received.
func (b *peerBounds) snapshotFile() (*os.File, error) {
	if err := os.MkdirAll(b.snapDir, 0o700); err != nil {
		return nil, fmt.Errorf("create snapshot directory: %w", err)
	}
	f, err := os.CreateTemp(b.snapDir, snapRecvPattern)
	if err != nil {
		return nil, fmt.Errorf("create a file for the snapshot being received: %w", err)
	}
	return f, nil
}

// snapshotReceipt is one snapshot being written to its file.
type snapshotReceipt struct {
	b     *peerBounds
	f     *os.File
	sum   hash.Hash
	want  uint64 // announced size
	got   uint64 // bytes received so far
	index uint64
	from  string
}

// copy writes the data of first and of every chunk after it to the file,
// to the end of stream, and checks that exactly the announced size came.
func (r *snapshotReceipt) copy(stream snapshotStream, first *peerpb.SnapshotChunk) error {
	if err := r.add(first.GetData()); err != nil {
		return err
	}
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := r.add(c.GetData()); err != nil {
			return err
		}
	}
	if r.got != r.want {
		return status.Errorf(codes.DataLoss, "raftlog: snapshot at %d from %s: received %d bytes, announced %d", r.index, r.from, r.got, r.want)
	}
	return nil
}

// add writes one chunk's data.
func (r *snapshotReceipt) add(p []byte) error {
	if r.got+uint64(len(p)) > r.want {
		return status.Errorf(codes.InvalidArgument, "raftlog: snapshot at %d from %s: more than the announced %d bytes", r.index, r.from, r.want)
	}
	if len(p) == 0 {
		return nil
	}
	if _, err := r.f.Write(p); err != nil {
		return status.Errorf(codes.Unavailable, "raftlog: snapshot at %d from %s: write %s: %v", r.index, r.from, r.f.Name(), err)
	}
	r.sum.Write(p)
	r.got += uint64(len(p))
	if r.b.recvHook != nil {
		r.b.recvHook(r.f.Name(), int64(r.got))
	}
	return nil
}

// readBack returns the whole data written (one allocation of its size).
func (r *snapshotReceipt) readBack() ([]byte, error) {
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	data := make([]byte, r.got)
	if _, err := io.ReadFull(r.f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// snapshotRemote returns the address a snapshot stream came from, for logs.
func snapshotRemote(stream snapshotStream) string {
	if p, ok := grpcpeer.FromContext(stream.Context()); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return "unknown"
}
