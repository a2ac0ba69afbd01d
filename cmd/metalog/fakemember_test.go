package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/internal/testkit"
)

// fakeMember is a fake metalog member for the client subcommands: Watch sends
// a script and ends as told, History pages through a list of events as
// the server does, the schema reads answer what they were asked, and
// Execute applies anything at epoch 1.
type fakeMember struct {
	pb.UnimplementedMetadataServiceServer
	addr string
	// watch is what every Watch sends, whatever its from_epoch; then the
	// stream ends with watchEnd, or stays open until the client goes when
	// watchEnd is nil.
	watch    []*pb.WatchResponse
	watchEnd error
	// events are History's, in epoch order; pageSize is the page of a
	// request with limit 0 and the largest (at least 1), and pruned the
	// oldest epoch whose changes are kept (OutOfRange before it).
	events   []*pb.Event
	pageSize int
	pruned   uint64
	// describe, when set, is the CQL GetTable answers; tableErr, when
	// set, its error.
	describe string
	tableErr error

	mu    sync.Mutex // guards asked
	asked []string   // each request, as "Method field=value ..."
}

// startMember serves m on a loopback port until the test ends.
func startMember(t *testing.T, m *fakeMember) *fakeMember {
	t.Helper()
	m.addr = testkit.Serve(t, m)
	return m
}

func (m *fakeMember) ask(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, fmt.Sprintf(format, args...))
}

// requests returns what m was asked so far.
func (m *fakeMember) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.asked)
}

// opt shows an optional field: "-" when absent.
func opt(v *uint64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func (m *fakeMember) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.WatchResponse]) error {
	m.ask("Watch from=%s ks=%s table=%s", opt(req.FromEpoch), req.Keyspace, req.Table)
	for _, msg := range m.watch {
		if err := stream.Send(msg); err != nil {
			return err
		}
	}
	if m.watchEnd != nil {
		return m.watchEnd
	}
	<-stream.Context().Done()
	return status.FromContextError(stream.Context().Err()).Err()
}

func (m *fakeMember) History(_ context.Context, req *pb.HistoryRequest) (*pb.HistoryResponse, error) {
	filters := ""
	if req.Principal != "" || req.Kind != "" || req.Since != nil || req.Until != nil {
		filters = fmt.Sprintf(" principal=%s kind=%s since=%s until=%s", req.Principal, req.Kind, stamp(req.Since), stamp(req.Until))
	}
	m.ask("History from=%s to=%s limit=%d ks=%s table=%s%s", opt(req.FromEpoch), opt(req.ToEpoch), req.Limit, req.Keyspace, req.Table, filters)
	if req.FromEpoch != nil && *req.FromEpoch+1 < m.pruned {
		return nil, status.Errorf(codes.OutOfRange, "the history before epoch %d was pruned", m.pruned)
	}
	to := uint64(1<<64 - 1)
	if req.ToEpoch != nil {
		to = *req.ToEpoch
	}
	var in []*pb.Event // the events in range
	for _, ev := range m.events {
		if (req.FromEpoch == nil || ev.Epoch > *req.FromEpoch) && ev.Epoch <= to {
			in = append(in, ev)
		}
	}
	limit := int(req.Limit) // at most pageSize, the server's 10000
	if limit == 0 || limit > m.pageSize {
		limit = m.pageSize
	}
	if req.FromEpoch == nil { // the newest, sent newest epoch first
		page := in[max(len(in)-limit, 0):]
		slices.SortStableFunc(page, func(a, b *pb.Event) int { return cmp.Compare(b.Epoch, a.Epoch) })
		return &pb.HistoryResponse{Events: page, Epoch: 99, OldestEpoch: m.pruned}, nil
	}
	n := 0 // whole epochs, until the page holds limit events
	for n < len(in) && (n < limit || in[n].Epoch == in[n-1].Epoch) {
		n++
	}
	resp := &pb.HistoryResponse{Events: in[:n], Epoch: 99, OldestEpoch: m.pruned}
	if n < len(in) {
		resp.NextEpoch = &in[n-1].Epoch
	}
	return resp, nil
}

// stamp prints a time filter of a request: "-" when not set.
func stamp(t *timestamppb.Timestamp) string {
	if t == nil {
		return "-"
	}
	return t.AsTime().UTC().Format(time.RFC3339)
}

func (m *fakeMember) GetSchema(_ context.Context, req *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error) {
	m.ask("GetSchema at=%s", opt(req.AtEpoch))
	return &pb.GetSchemaResponse{Cql: "-- the schema at " + opt(req.AtEpoch)}, nil
}

func (m *fakeMember) GetKeyspace(_ context.Context, req *pb.GetKeyspaceRequest) (*pb.GetKeyspaceResponse, error) {
	m.ask("GetKeyspace %s at=%s", req.Keyspace, opt(req.AtEpoch))
	return &pb.GetKeyspaceResponse{Cql: "-- keyspace " + req.Keyspace + " at " + opt(req.AtEpoch) + "\n"}, nil
}

func (m *fakeMember) GetTable(_ context.Context, req *pb.GetTableRequest) (*pb.GetTableResponse, error) {
	m.ask("GetTable %s.%s at=%s", req.Keyspace, req.Table, opt(req.AtEpoch))
	if m.tableErr != nil {
		return nil, m.tableErr
	}
	if m.describe != "" {
		return &pb.GetTableResponse{Cql: m.describe}, nil
	}
	return &pb.GetTableResponse{Cql: "-- table " + req.Keyspace + "." + req.Table + " at " + opt(req.AtEpoch) + "\n"}, nil
}

func (m *fakeMember) Execute(_ context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	m.ask("Execute %s", req.Statements)
	return &pb.ExecuteResponse{Epoch: 1}, nil
}

// at is a change's time in the tests: 2026-12-01T10:00:00Z plus minutes.
func at(minutes int) *timestamppb.Timestamp {
	return timestamppb.New(time.Date(2026, 12, 1, 10, minutes, 0, 0, time.UTC))
}

// syncBuffer is a bytes.Buffer a command writes to while the test reads.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runCtx runs the root command with args under ctx and returns what it
// printed and its error.
func runCtx(ctx context.Context, out *syncBuffer, args ...string) error {
	root := newRootCmd()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// runErr runs the root command with args and returns what it printed and
// its error.
func runErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out syncBuffer
	err := runCtx(ctx, &out, args...)
	return out.String(), err
}
