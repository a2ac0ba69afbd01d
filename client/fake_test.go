package client

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// fake is a MetadataService that answers every call with code (OK:
// success), or holds it until the caller gives up when block is set, and
// records what it was sent.
type fake struct {
	pb.UnimplementedMetadataServiceServer
	code  codes.Code
	block bool
	addr  string
	calls atomic.Int64
	// unavailable, while above zero, is how many more calls are answered
	// Unavailable before code is.
	unavailable atomic.Int64

	mu   sync.Mutex // guards ids, auth and at
	ids  []string   // request ids of Execute and SetGuardrails, in order
	auth []string   // authorization headers of GetGuardrails, in order
	at   []string   // "METHOD at_epoch" of the schema reads ("-": absent)
}

func (f *fake) answer(ctx context.Context) error {
	f.calls.Add(1)
	if f.unavailable.Add(-1) >= 0 {
		return status.Error(codes.Unavailable, "fake has no leader yet")
	}
	if f.block {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	if f.code != codes.OK {
		return status.Error(f.code, "fake says "+f.code.String())
	}
	return nil
}

func (f *fake) recordID(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, id)
}

func (f *fake) requestIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ids...)
}

// reset forgets the request ids, with room for n more.
func (f *fake) reset(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = make([]string, 0, n)
}

func (f *fake) authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

func (f *fake) GetSchema(ctx context.Context, req *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error) {
	f.recordAt("GetSchema", req.AtEpoch)
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.GetSchemaResponse{Epoch: 7, Cql: "schema"}, nil
}

// recordAt records the at_epoch of a schema read.
func (f *fake) recordAt(method string, at *uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if at == nil {
		f.at = append(f.at, method+" -")
		return
	}
	f.at = append(f.at, fmt.Sprintf("%s %d", method, *at))
}

func (f *fake) atEpochs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.at...)
}

func (f *fake) GetKeyspace(ctx context.Context, req *pb.GetKeyspaceRequest) (*pb.GetKeyspaceResponse, error) {
	f.recordAt("GetKeyspace", req.AtEpoch)
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.GetKeyspaceResponse{Cql: "keyspace " + req.Keyspace}, nil
}

func (f *fake) GetTable(ctx context.Context, req *pb.GetTableRequest) (*pb.GetTableResponse, error) {
	f.recordAt("GetTable", req.AtEpoch)
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.GetTableResponse{Cql: "table " + req.Keyspace + "." + req.Table}, nil
}

func (f *fake) History(ctx context.Context, req *pb.HistoryRequest) (*pb.HistoryResponse, error) {
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.HistoryResponse{Epoch: 11, Events: []*pb.Event{{Epoch: req.GetFromEpoch() + 1}}}, nil
}

func (f *fake) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	f.recordID(req.RequestId)
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.ExecuteResponse{Epoch: 8}, nil
}

func (f *fake) SetGuardrails(ctx context.Context, req *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error) {
	f.recordID(req.RequestId)
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.SetGuardrailsResponse{Epoch: 9}, nil
}

func (f *fake) GetGuardrails(ctx context.Context, _ *pb.GetGuardrailsRequest) (*pb.GetGuardrailsResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.auth = append(f.auth, md.Get("authorization")...)
	f.mu.Unlock()
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &pb.GetGuardrailsResponse{Epoch: 10}, nil
}

// startFake serves f on a loopback port until the test ends and returns f.
func startFake(t testing.TB, f *fake, opts ...grpc.ServerOption) *fake {
	t.Helper()
	f.addr = testkit.Serve(t, f, testkit.WithGRPC(opts...))
	return f
}

// deadAddr returns a loopback address nobody listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// newTestClient returns a Client for cfg closed when the test ends.
func newTestClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// SaveSnapshot sends "abc" then "de" as a 5-byte backup at epoch 11.
func (f *fake) SaveSnapshot(_ *pb.SaveSnapshotRequest, stream grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	if err := f.answer(stream.Context()); err != nil {
		return err
	}
	if err := stream.Send(&pb.SaveSnapshotResponse{Epoch: 11, Index: 20, Size: 5, Data: []byte("abc")}); err != nil {
		return err
	}
	return stream.Send(&pb.SaveSnapshotResponse{Data: []byte("de")})
}
