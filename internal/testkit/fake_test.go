package testkit

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

func dial(t *testing.T, addr string) pb.MetadataServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return pb.NewMetadataServiceClient(cc)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestFakeAnswers: a hook answers its method; a method without one
// answers Err, or Unimplemented without Err; streams alike.
func TestFakeAnswers(t *testing.T) {
	ctx := testCtx(t)
	c := dial(t, Serve(t, &Fake{
		OnExecute: func(_ context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
			return &pb.ExecuteResponse{Epoch: uint64(len(req.Statements))}, nil
		},
		OnWatch: func(_ *pb.WatchRequest, s grpc.ServerStreamingServer[pb.WatchResponse]) error {
			return s.Send(&pb.WatchResponse{Epoch: 4})
		},
	}))
	if r, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: "abc"}); err != nil || r.Epoch != 3 {
		t.Errorf("Execute: %v, %v", r, err)
	}
	if _, err := c.GetSchema(ctx, &pb.GetSchemaRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("GetSchema without a hook: %v, want Unimplemented", err)
	}
	w, err := c.Watch(ctx, &pb.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := w.Recv(); err != nil || m.Epoch != 4 {
		t.Errorf("Watch: %v, %v", m, err)
	}

	failing := dial(t, Serve(t, &Fake{Err: status.Error(codes.Unavailable, "no leader")}))
	if _, err := failing.GetTable(ctx, &pb.GetTableRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("GetTable: %v, want the canned error", err)
	}
	s, err := failing.SaveSnapshot(ctx, &pb.SaveSnapshotRequest{})
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("SaveSnapshot: %v, want the canned error", err)
	}
}

// TestStartStopAndAt: a stopped fake refuses calls; another can serve at
// its address again; Stop twice is harmless.
func TestStartStopAndAt(t *testing.T) {
	ctx := testCtx(t)
	ok := func(context.Context, *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error) {
		return &pb.GetSchemaResponse{Epoch: 1}, nil
	}
	s := Start(t, &Fake{OnGetSchema: ok})
	if _, err := dial(t, s.Addr).GetSchema(ctx, &pb.GetSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Stop()
	if _, err := dial(t, s.Addr).GetSchema(ctx, &pb.GetSchemaRequest{}, grpc.WaitForReady(false)); status.Code(err) != codes.Unavailable {
		t.Errorf("after Stop: %v, want Unavailable", err)
	}
	again := Start(t, &Fake{OnGetSchema: ok}, At(s.Addr))
	if again.Addr != s.Addr {
		t.Errorf("At(%s) served at %s", s.Addr, again.Addr)
	}
	if _, err := dial(t, again.Addr).GetSchema(ctx, &pb.GetSchemaRequest{}); err != nil {
		t.Errorf("served again at the address: %v", err)
	}
}
