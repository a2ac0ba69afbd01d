package raftlog

import (
	"context"
	"crypto/sha256"
	"net"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/raftlog/internal/peerpb"
)

// stepRecorder is a LocalNode that records the messages stepped.
type stepRecorder struct {
	mu   sync.Mutex // guards msgs
	msgs []*raftpb.Message
}

func (r *stepRecorder) Step(_ context.Context, m *raftpb.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *stepRecorder) stepped() []*raftpb.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*raftpb.Message(nil), r.msgs...)
}

func (*stepRecorder) ReportUnreachable(uint64)                   {}
func (*stepRecorder) ReportSnapshot(uint64, raft.SnapshotStatus) {}
func (*stepRecorder) PeerRemoved(uint64) (uint64, bool)          { return 0, false }
func (*stepRecorder) ReportRemoved(uint64, uint64, bool)         {}
func (*stepRecorder) ClusterID() uint64                          { return 0 }
func (*stepRecorder) ReportForeign(error)                        {}

// TestReceiveSnapshotChecks sends snapshot streams by hand to a transport
// serving a LocalNode that is not a Node: a header announcing more than
// anyone has (the receiver must not allocate it), more data than
// announced, a wrong or malformed checksum, then a good one, which alone
// is stepped.
func TestReceiveSnapshotChecks(t *testing.T) {
	tr := NewTransport(TransportConfig{ID: 2, Logger: testLogger()})
	rec := &stepRecorder{}
	tr.SetNode(rec)
	srv := grpc.NewServer()
	tr.Register(srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(tr.Listen(lis))
	}()
	defer func() {
		tr.Stop()
		srv.Stop()
		<-served
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := peerpb.NewPeerClient(conn)

	data := []byte("the snapshot's data")
	msg := &raftpb.Message{
		Type: raftpb.MsgSnap.Enum(), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(3)),
		Snapshot: &raftpb.Snapshot{Data: data, Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(9)), Term: new(uint64(3))}},
	}
	hdr, err := marshalWithoutSnapshotData(msg)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	send := func(size uint64, sum []byte, chunks ...[]byte) error {
		stream, err := client.SendSnapshot(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		// A send fails once the receiver ended the stream; its status
		// comes with CloseAndRecv.
		if stream.Send(&peerpb.SnapshotChunk{Message: hdr, Size: size, Sha256: sum}) == nil {
			for _, c := range chunks {
				if stream.Send(&peerpb.SnapshotChunk{Data: c}) != nil {
					break
				}
			}
		}
		_, err = stream.CloseAndRecv()
		return err
	}
	for _, tt := range []struct {
		name     string
		size     uint64
		sum      []byte
		code     codes.Code
		contains string
	}{
		{"announced too much", 1 << 62, sum[:], codes.ResourceExhausted, "announces 4611686018427387904 bytes, more than the"},
		{"announced too little", 4 << 10, sum[:], codes.DataLoss, "received 19 bytes, announced 4096"},
		{"more than announced", 4, sum[:], codes.InvalidArgument, "more than the announced 4 bytes"},
		{"wrong checksum", uint64(len(data)), make([]byte, sha256.Size), codes.DataLoss, "SHA-256 mismatch"},
		{"short checksum", uint64(len(data)), sum[:4], codes.InvalidArgument, "checksum has 4 bytes, want 32"},
	} {
		err := send(tt.size, tt.sum, data[:5], data[5:])
		if status.Code(err) != tt.code || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("%s: err = %v, want %v containing %q", tt.name, err, tt.code, tt.contains)
		}
	}
	if got := rec.stepped(); len(got) != 0 {
		t.Fatalf("%d bad snapshots stepped", len(got))
	}
	if err := send(uint64(len(data)), sum[:], data[:5], data[5:]); err != nil {
		t.Fatalf("good snapshot: %v", err)
	}
	got := rec.stepped()
	if len(got) != 1 || string(got[0].GetSnapshot().GetData()) != string(data) || got[0].GetSnapshot().GetMetadata().GetIndex() != 9 {
		t.Fatalf("stepped %v, want the one snapshot at index 9 with its data", got)
	}
}
