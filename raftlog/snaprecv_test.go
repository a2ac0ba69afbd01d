package raftlog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

// snapReceiver is a transport serving a stepRecorder on loopback gRPC,
// and a client of it.
type snapReceiver struct {
	tr     *Transport
	rec    *stepRecorder
	client peerpb.PeerClient
}

func startSnapReceiver(t *testing.T, cfg TransportConfig) *snapReceiver {
	t.Helper()
	r := &snapReceiver{tr: NewTransport(cfg), rec: &stepRecorder{}}
	r.tr.SetNode(r.rec)
	srv := grpc.NewServer()
	r.tr.Register(srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(r.tr.Listen(lis))
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		r.tr.Stop()
		srv.Stop()
		<-served
	})
	r.client = peerpb.NewPeerClient(conn)
	return r
}

// snapHeader is the first chunk of a snapshot at index 9 from member 1
// whose data is data, announcing size bytes.
func snapHeader(t *testing.T, data []byte, size uint64) *peerpb.SnapshotChunk {
	t.Helper()
	msg := &raftpb.Message{
		Type: raftpb.MsgSnap.Enum(), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(3)),
		Snapshot: &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(9)), Term: new(uint64(3))}},
	}
	hdr, err := marshalWithoutSnapshotData(msg)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return &peerpb.SnapshotChunk{Message: hdr, Size: size, Sha256: sum[:]}
}

// TestAnnouncedSnapshotsRefusedBeforeAllocation: eight snapshot streams
// at once, each announcing 1 TiB and sending nothing more, are refused
// (ResourceExhausted) as soon as their header arrives, the heap does not
// grow by anything like what they announce, and one WARN line says so for
// the host.
func TestAnnouncedSnapshotsRefusedBeforeAllocation(t *testing.T) {
	var refused atomic.Int64
	out := &lines{}
	r := startSnapReceiver(t, TransportConfig{ID: 2, Logger: out.logger(), OnSnapshotReceived: func(_ int, _ time.Duration, err error) {
		if err != nil {
			refused.Add(1)
		}
	}})
	const streams, announced = 8, 1 << 40
	before := liveHeap()
	var opened []grpc.ClientStreamingClient[peerpb.SnapshotChunk, peerpb.Ack]
	for range streams {
		stream, err := r.client.SendSnapshot(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(snapHeader(t, nil, announced)); err != nil {
			t.Fatal(err)
		}
		opened = append(opened, stream)
	}
	waitFor(t, "every announced snapshot refused, or the heap grown", func() bool {
		if grew := liveHeap() - before; grew > 256<<20 {
			t.Fatalf("the heap grew by %d bytes for %d snapshots announcing %d bytes each", grew, streams, int64(announced))
		}
		return refused.Load() == streams
	})
	if grew := liveHeap() - before; grew > 16<<20 {
		t.Errorf("the heap grew by %d bytes for %d snapshots announcing %d bytes each", grew, streams, int64(announced))
	}
	for _, stream := range opened {
		if _, err := stream.CloseAndRecv(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "refused before any of it was received") {
			t.Errorf("a snapshot announcing %d bytes: %v, want ResourceExhausted", int64(announced), err)
		}
	}
	if n := len(r.rec.stepped()); n != 0 {
		t.Errorf("%d snapshots stepped", n)
	}
	if n := out.count("level=WARN", "receive snapshot failed", "remote=127.0.0.1:"); n != 1 {
		t.Errorf("%d WARN lines for %d refused snapshots from one host, want 1:\n%s", n, streams, out.buf.String())
	}
}

// tempFiles returns the files in dir (none if it does not exist).
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// TestSnapshotReceivedThroughAFile: a snapshot of a few MiB sent in small
// chunks is on disk, in the snap directory, while it arrives, and is
// stepped whole once it is complete, the file gone; a damaged one (wrong
// checksum, more or fewer bytes than announced, a stream cut off) is
// refused and leaves nothing behind.
func TestSnapshotReceivedThroughAFile(t *testing.T) {
	dir := t.TempDir()
	snapDir := filepath.Join(dir, snapDirName)
	r := startSnapReceiver(t, TransportConfig{ID: 2, Logger: testLogger(), Dir: dir})
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	const chunk = 64 << 10
	stream, err := r.client.SendSnapshot(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(snapHeader(t, data, uint64(len(data)))); err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	for off := 0; off < half; off += chunk {
		if err := stream.Send(&peerpb.SnapshotChunk{Data: data[off:min(off+chunk, half)]}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "half the snapshot in a file of the snap directory", func() bool {
		for _, name := range tempFiles(t, snapDir) {
			if fi, err := os.Stat(filepath.Join(snapDir, name)); err == nil && strings.HasSuffix(name, ".tmp") && fi.Size() == int64(half) {
				return true
			}
		}
		return false
	})
	for off := half; off < len(data); off += chunk {
		if err := stream.Send(&peerpb.SnapshotChunk{Data: data[off:min(off+chunk, len(data))]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stream.CloseAndRecv(); err != nil {
		t.Fatalf("a good snapshot: %v", err)
	}
	got := r.rec.stepped()
	if len(got) != 1 || !bytes.Equal(got[0].GetSnapshot().GetData(), data) {
		t.Fatalf("stepped %d messages, want the snapshot with its %d bytes", len(got), len(data))
	}
	if left := tempFiles(t, snapDir); len(left) != 0 {
		t.Errorf("files left after a snapshot was received: %v", left)
	}

	wrong := snapHeader(t, data, uint64(len(data)))
	wrong.Sha256[0] ^= 1
	for _, tt := range []struct {
		name   string
		header *peerpb.SnapshotChunk
		chunks [][]byte
		cut    bool
		code   codes.Code
	}{
		{"wrong checksum", wrong, [][]byte{data[:half], data[half:]}, false, codes.DataLoss},
		{"fewer bytes", snapHeader(t, data, uint64(len(data))), [][]byte{data[:half]}, false, codes.DataLoss},
		{"more bytes", snapHeader(t, data[:half], uint64(half)), [][]byte{data[:half], data[:1]}, false, codes.InvalidArgument},
		{"cut off", snapHeader(t, data, uint64(len(data))), [][]byte{data[:half]}, true, codes.Canceled},
	} {
		err := sendSnapshotBy(t, r, tt.header, tt.chunks, tt.cut, snapDir)
		if status.Code(err) != tt.code {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.code)
		}
		waitFor(t, tt.name+": the file removed", func() bool { return len(tempFiles(t, snapDir)) == 0 })
	}
	if n := len(r.rec.stepped()); n != 1 {
		t.Errorf("%d snapshots stepped, want the good one only", n)
	}
}

// sendSnapshotBy sends a snapshot stream by hand: the header, the chunks,
// then its end, or, with cut, cancels it once the data is on disk.
func sendSnapshotBy(t *testing.T, r *snapReceiver, header *peerpb.SnapshotChunk, chunks [][]byte, cut bool, snapDir string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	stream, err := r.client.SendSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, c := range append([]*peerpb.SnapshotChunk{header}, chunksOf(chunks)...) {
		if stream.Send(c) != nil {
			break
		}
		sent += len(c.GetData())
	}
	if cut {
		waitFor(t, "the data on disk", func() bool {
			for _, name := range tempFiles(t, snapDir) {
				if fi, err := os.Stat(filepath.Join(snapDir, name)); err == nil && fi.Size() == int64(sent) {
					return true
				}
			}
			return false
		})
		cancel()
	}
	_, err = stream.CloseAndRecv()
	return err
}

func chunksOf(data [][]byte) []*peerpb.SnapshotChunk {
	out := make([]*peerpb.SnapshotChunk, len(data))
	for i, d := range data {
		out[i] = &peerpb.SnapshotChunk{Data: d}
	}
	return out
}

// TestSnapshotReceivesBounded: with maxSnapshotReceives snapshots
// arriving, another is refused at once (ResourceExhausted; the sender
// tries again later), and accepted once one of them ended.
func TestSnapshotReceivesBounded(t *testing.T) {
	r := startSnapReceiver(t, TransportConfig{ID: 2, Logger: testLogger(), Dir: t.TempDir()})
	data := []byte("the snapshot's data")
	var held []grpc.ClientStreamingClient[peerpb.SnapshotChunk, peerpb.Ack]
	for range maxSnapshotReceives {
		stream, err := r.client.SendSnapshot(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(snapHeader(t, data, uint64(len(data)))); err != nil {
			t.Fatal(err)
		}
		held = append(held, stream)
	}
	waitFor(t, "the snapshots arriving", func() bool { return len(r.tr.bounds.snapTurns) == maxSnapshotReceives })
	send := func() error {
		stream, err := r.client.SendSnapshot(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if stream.Send(snapHeader(t, data, uint64(len(data)))) == nil {
			_ = stream.Send(&peerpb.SnapshotChunk{Data: data})
		}
		_, err = stream.CloseAndRecv()
		return err
	}
	if err := send(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "being received already") {
		t.Fatalf("a snapshot beyond %d arriving: %v, want ResourceExhausted", maxSnapshotReceives, err)
	}
	if err := held[0].Send(&peerpb.SnapshotChunk{Data: data}); err != nil {
		t.Fatal(err)
	}
	if _, err := held[0].CloseAndRecv(); err != nil {
		t.Fatalf("a held snapshot completed: %v", err)
	}
	if err := send(); err != nil {
		t.Fatalf("a snapshot once one ended: %v", err)
	}
	var wg sync.WaitGroup
	for _, stream := range held[1:] {
		wg.Go(func() { _, _ = stream.CloseAndRecv() })
	}
	wg.Wait()
}

// TestGRPCSnapshotInstalledThroughAFile: a follower cut off until the
// leader's log is compacted catches up by a real snapshot of a few MiB,
// sent in 64 KiB chunks: it is written, whole, to a temporary file in the
// follower's snap directory, installed, and the file is gone.
func TestGRPCSnapshotInstalledThroughAFile(t *testing.T) {
	all := []uint64{1, 2, 3}
	var mu sync.Mutex // guards written
	written := map[uint64]map[string]int64{1: {}, 2: {}, 3: {}}
	recv := map[uint64]*transferLog{1: {}, 2: {}, 3: {}}
	c, snaps := grpcSnapCluster(t, 3<<20, nil, func(id uint64, tc *TransportConfig) {
		tc.SnapshotChunkSize = 64 << 10
		tc.OnSnapshotReceived = recv[id].add
		tc.recvHook = func(path string, n int64) {
			mu.Lock()
			written[id][path] = n
			mu.Unlock()
		}
	}, all...)
	leader := c.waitLeader(all...)
	follower := without(all, leader)[0]
	catchUpBySnapshot(t, c, all, follower, nil)
	if r := snaps[follower].restores(); len(r) == 0 {
		t.Fatalf("follower %d caught up without a snapshot", follower)
	}
	sizes, errs := recv[follower].get()
	var size int64
	for i, err := range errs {
		if err == nil {
			size = int64(sizes[i])
		}
	}
	if size < 3<<20 {
		t.Fatalf("follower received %v (errors %v), want a snapshot of more than 3 MiB", sizes, errs)
	}
	snapDir := filepath.Join(c.node(follower).dir, snapDirName)
	mu.Lock()
	files := written[follower]
	mu.Unlock()
	whole := false
	for path, n := range files {
		if filepath.Dir(path) != snapDir || !strings.HasSuffix(path, ".tmp") {
			t.Errorf("snapshot received into %s, want a temporary file in %s", path, snapDir)
		}
		whole = whole || n == size
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", path, err)
		}
	}
	if !whole {
		t.Errorf("no file held the whole snapshot of %d bytes: %v", size, files)
	}
	c.checkSame(all...)
}
