package raftlog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

// A MsgSnap travels on a SendSnapshot stream of its own (gRPC service
// metalog.peer.v1.Peer): a header chunk holding the message without the snapshot's
// data, the data's size and its SHA-256, then the data in
// TransportConfig.SnapshotChunkSize pieces. The receiver checks size and
// checksum, steps its node with the whole message and acknowledges. It
// writes the data to a file as it arrives, never taking an announced size
// on trust (snaprecv.go).

// sendSnapshot delivers one MsgSnap, when its turn comes, and reports the
// outcome to n and to OnSnapshotSent.
func (t *Transport) sendSnapshot(n LocalNode, p *peer, m *raftpb.Message) {
	defer t.wg.Done()
	start := time.Now()
	size := len(m.GetSnapshot().GetData())
	index := m.GetSnapshot().GetMetadata().GetIndex()
	err := t.streamSnapshot(p, m)
	d := time.Since(start)
	outcome := raft.SnapshotFinish
	if f, ok := ForcingOf(err); ok {
		toldForced(t.local(), t.log, p.id, f)
	}
	if err != nil {
		outcome = raft.SnapshotFailure
		t.snapFailed.Add(1)
		t.sendFailures.Add(1)
		t.log.Warn("send snapshot failed", "peer", memberID(p.id), "index", index, "bytes", size, "duration", d, "err", err)
	} else {
		t.snapSent.Add(1)
		t.snapSentBytes.Add(uint64(size))
		t.log.Info("snapshot sent", "peer", memberID(p.id), "index", index, "bytes", size, "duration", d)
	}
	if t.cfg.OnSnapshotSent != nil {
		t.cfg.OnSnapshotSent(size, d, err)
	}
	if n != nil {
		n.ReportSnapshot(p.id, outcome)
	}
}

// streamSnapshot waits for a turn and sends m over one SendSnapshot
// stream. It returns once the receiver acknowledged (its node queued the
// message) or the send failed.
func (t *Transport) streamSnapshot(p *peer, m *raftpb.Message) error {
	wait := time.NewTimer(t.cfg.SnapshotWaitTimeout)
	select {
	case t.snapTurns <- struct{}{}:
		wait.Stop()
	case <-wait.C:
		return fmt.Errorf("%w after %v (%d sends in flight)", errSnapshotTurn, t.cfg.SnapshotWaitTimeout, t.cfg.MaxConcurrentSnapshotSends)
	case <-p.ctx.Done():
		wait.Stop()
		return p.ctx.Err()
	}
	defer func() { <-t.snapTurns }()
	inFlight := t.snapInFlight.Add(1)
	defer t.snapInFlight.Add(-1)
	for {
		hw := t.snapMaxInFlight.Load()
		if inFlight <= hw || t.snapMaxInFlight.CompareAndSwap(hw, inFlight) {
			break
		}
	}

	if d := t.cfg.Faults.DelayFor(p.id); d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-p.ctx.Done():
			timer.Stop()
			return p.ctx.Err()
		}
	}
	var cluster uint64
	if n := t.local(); n != nil {
		cluster = n.ClusterID()
	}
	return writeSnapshot(p, m, cluster, t.cfg.SnapshotChunkSize, t.cfg.Faults.CorruptNextSnapshot(p.id))
}

// writeSnapshot sends m to p on a SendSnapshot stream of its own, naming
// this member's cluster (unless 0), the data in chunks of chunkSize bytes;
// with corrupt, one byte of the first chunk is flipped in transit.
func writeSnapshot(p *peer, m *raftpb.Message, cluster uint64, chunkSize int, corrupt bool) error {
	data := m.GetSnapshot().GetData()
	hdr, err := marshalWithoutSnapshotData(m)
	if err != nil {
		panic(fmt.Sprintf("raftlog: marshal snapshot to %d: %v", p.id, err))
	}
	sum := sha256.Sum256(data)
	ctx, cancel := context.WithTimeout(p.ctx, snapshotTimeout)
	defer cancel()
	if cluster != 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, clusterIDKey, FormatID(cluster))
	}
	// Without peer TLS the receiver believes the sender it names.
	ctx = metadata.AppendToOutgoingContext(ctx, PeerMemberIDKey, FormatID(m.GetFrom()))
	stream, err := p.client.SendSnapshot(ctx)
	if err != nil {
		return err
	}
	send := func(c *peerpb.SnapshotChunk) error {
		if err := stream.Send(c); err != nil {
			if errors.Is(err, io.EOF) {
				// The receiver ended the stream; its status says why.
				_, err = stream.CloseAndRecv()
			}
			return err
		}
		return nil
	}
	if err := send(&peerpb.SnapshotChunk{Message: hdr, Size: uint64(len(data)), Sha256: sum[:]}); err != nil {
		return err
	}
	for off := 0; off < len(data); off += chunkSize {
		piece := data[off:min(off+chunkSize, len(data))]
		if corrupt {
			// The data is shared with raft's storage: corrupt a copy.
			piece = slices.Clone(piece)
			piece[len(piece)/2] ^= 0xff
			corrupt = false
		}
		if err := send(&peerpb.SnapshotChunk{Data: piece}); err != nil {
			return err
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}

// marshalWithoutSnapshotData encodes m as if its Snapshot had no Data,
// without copying or modifying m (raft's storage shares the data).
func marshalWithoutSnapshotData(m *raftpb.Message) ([]byte, error) {
	hdr := &raftpb.Message{}
	hr := hdr.ProtoReflect()
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != "snapshot" {
			hr.Set(fd, v)
		}
		return true
	})
	hdr.Snapshot = &raftpb.Snapshot{Metadata: m.GetSnapshot().GetMetadata()}
	return proto.Marshal(hdr)
}

// snapshotServer is the receiving side of snapshot transfers: the
// transport's gRPC service, which serves only SendSnapshot.
type snapshotServer struct {
	peerpb.UnimplementedPeerServer
	t *Transport
}

// SendSnapshot implements peerpb.PeerServer.
func (s *snapshotServer) SendSnapshot(stream grpc.ClientStreamingServer[peerpb.SnapshotChunk, peerpb.Ack]) error {
	start := time.Now()
	size, err := s.t.receiveSnapshot(stream)
	if cb := s.t.cfg.OnSnapshotReceived; cb != nil {
		cb(size, time.Since(start), err)
	}
	if err != nil {
		// Once a minute per source host: a stranger's streams must not
		// flood the log.
		s.t.bounds.refused(snapshotRemote(stream), "receive snapshot failed", "bytes", size, "err", err)
		return err
	}
	return stream.SendAndClose(&peerpb.Ack{})
}

// receiveSnapshot reads the chunks of one SendSnapshot stream into a
// file, checks size and SHA-256 once everything arrived, and steps the
// node with the MsgSnap holding the data read back. It returns the data
// bytes received.
func (t *Transport) receiveSnapshot(stream grpc.ClientStreamingServer[peerpb.SnapshotChunk, peerpb.Ack]) (int, error) {
	select {
	case <-t.stopc:
		return 0, status.Error(codes.Unavailable, "raftlog: transport stopped")
	default:
	}
	// Only a member sends a snapshot, as itself (peerauth.go): who calls
	// is known before anything of the stream is read.
	call, err := t.cfg.Gate.Caller(stream.Context())
	if err != nil {
		return 0, status.Errorf(codes.PermissionDenied, "%v; snapshot refused", err)
	}
	first, m, err := recvSnapshotHeader(stream)
	if err != nil {
		return 0, err
	}
	if t.cfg.Faults.Dropped(m.GetFrom(), m.GetTo()) {
		return 0, status.Error(codes.Unavailable, "raftlog: snapshot dropped by fault injection")
	}
	n := t.local()
	if n == nil {
		return 0, status.Error(codes.Unavailable, "raftlog: no node to receive the snapshot yet")
	}
	if at, _ := n.PeerRemoved(m.GetFrom()); at != 0 {
		return 0, status.Errorf(codes.FailedPrecondition, "raftlog: snapshot from member %s, which was removed from the cluster at index %d: refused", FormatID(m.GetFrom()), at)
	}
	if err := t.cfg.Gate.sentAs(stream.Context(), call, m.GetFrom()); err != nil {
		return 0, status.Errorf(codes.PermissionDenied, "%v; snapshot refused", err)
	}
	md, _ := metadata.FromIncomingContext(stream.Context())
	if err := t.snapshotCluster(md, m.GetFrom(), call.Certified); err != nil {
		if _, isStatus := status.FromError(err); isStatus {
			return 0, err
		}
		return 0, status.Error(codes.FailedPrecondition, err.Error())
	}
	if at, _ := n.PeerRemoved(m.GetFrom()); at != 0 {
		return 0, status.Errorf(codes.FailedPrecondition, "raftlog: snapshot from member %s, which was removed from the cluster at index %d: refused", FormatID(m.GetFrom()), at)
	}
	data, received, err := t.bounds.receiveSnapshot(stream, m, first)
	if err != nil {
		return received, err
	}
	m.Snapshot.Data = data
	ctx := stream.Context()
	index := m.GetSnapshot().GetMetadata().GetIndex()
	if err := n.Step(ctx, m); err != nil {
		if ctx.Err() != nil {
			return len(data), status.FromContextError(ctx.Err()).Err()
		}
		return len(data), status.Errorf(codes.Unavailable, "raftlog: step snapshot at %d: %v", index, err)
	}
	t.log.Info("snapshot received", "from", memberID(m.GetFrom()), "index", index, "bytes", len(data))
	return len(data), nil
}

// recvSnapshotHeader receives and checks the first chunk of a snapshot
// stream: the MsgSnap (without data) it carries, and a SHA-256.
func recvSnapshotHeader(stream grpc.ClientStreamingServer[peerpb.SnapshotChunk, peerpb.Ack]) (*peerpb.SnapshotChunk, *raftpb.Message, error) {
	first, err := stream.Recv()
	if err != nil {
		return nil, nil, err
	}
	m := &raftpb.Message{}
	if err := proto.Unmarshal(first.GetMessage(), m); err != nil {
		return nil, nil, status.Errorf(codes.InvalidArgument, "raftlog: decode snapshot message: %v", err)
	}
	if m.GetType() != raftpb.MsgSnap || m.GetSnapshot().GetMetadata().GetIndex() == 0 {
		return nil, nil, status.Errorf(codes.InvalidArgument, "raftlog: snapshot stream from %d starts with a %v message without snapshot metadata", m.GetFrom(), m.GetType())
	}
	if len(first.GetSha256()) != sha256.Size {
		return nil, nil, status.Errorf(codes.InvalidArgument, "raftlog: snapshot from %d: checksum has %d bytes, want %d", m.GetFrom(), len(first.GetSha256()), sha256.Size)
	}
	return first, m, nil
}
