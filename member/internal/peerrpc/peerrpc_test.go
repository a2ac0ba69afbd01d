package peerrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
)

// TestServiceKeepsItsWire: the service's full name, and so its method
// paths, are those the members used when the service was part of the
// client API, and its messages have the fields (numbers, kinds, lists) of
// the client API's messages they were.
func TestServiceKeepsItsWire(t *testing.T) {
	if got := PeerService_ServiceDesc.ServiceName; got != "metalog.v1.PeerService" {
		t.Fatalf("service name %q, want metalog.v1.PeerService", got)
	}
	for _, path := range []string{PeerService_NodeStatus_FullMethodName, PeerService_Repair_FullMethodName, PeerService_HistoryRecords_FullMethodName} {
		if want := "/metalog.v1.PeerService/"; path[:len(want)] != want {
			t.Errorf("method path %s, want under %s", path, want)
		}
	}
	for _, tc := range []struct {
		peer, client proto.Message
	}{
		{&PeerMember{}, &pb.Member{}},
		{&PeerConfigMember{}, &pb.ConfigMember{}},
		{&PeerEpochDigest{}, &pb.EpochDigest{}},
		{&PeerRepairRequest{}, &pb.RepairMemberRequest{}},
		{&PeerRepairResponse{}, &pb.RepairMemberResponse{}},
	} {
		if got, want := fieldsOf(tc.peer.ProtoReflect().Descriptor()), fieldsOf(tc.client.ProtoReflect().Descriptor()); got != want {
			t.Errorf("%s has fields %s, want those of %s: %s", tc.peer.ProtoReflect().Descriptor().FullName(), got,
				tc.client.ProtoReflect().Descriptor().FullName(), want)
		}
	}
	// A status encoded by the peer decodes as the client API's Member did.
	pm := &PeerMember{Id: "ab", Name: "n2", Epoch: 7, History: []*PeerEpochDigest{{Epoch: 6, Digest: "d6"}},
		Configuration: []*PeerConfigMember{{Id: "ab", Name: "n2", Role: "voter", PeerAddr: "h:2"}}, KnownLeader: "ab"}
	b, err := proto.Marshal(pm)
	if err != nil {
		t.Fatal(err)
	}
	var m pb.Member
	if err := proto.Unmarshal(b, &m); err != nil || m.GetName() != "n2" || m.GetEpoch() != 7 || m.GetHistory()[0].GetDigest() != "d6" ||
		m.GetConfiguration()[0].GetPeerAddr() != "h:2" || m.GetKnownLeader() != "ab" {
		t.Errorf("decoded as pb.Member: %v, %v", &m, err)
	}
}

// fieldsOf lists a message's fields by number: name, kind, cardinality,
// and the fields of a message field.
func fieldsOf(md protoreflect.MessageDescriptor) string {
	out := ""
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		out += fmt.Sprintf("%d:%s:%v:%v;", f.Number(), f.Name(), f.Kind(), f.Cardinality())
		if f.Message() != nil {
			out += "{" + fieldsOf(f.Message()) + "}"
		}
	}
	return out
}

// fakeHandler is a Handler whose answers a test sets.
type fakeHandler struct {
	callerErr, gateErr, repairErr error
	history                       func(from, to uint64, max int) ([][]byte, uint64, error)
	repairCaller                  raftlog.PeerCall
}

func (f *fakeHandler) CheckCaller(context.Context) error { return f.callerErr }

func (f *fakeHandler) Caller(context.Context) (raftlog.PeerCall, error) {
	return raftlog.PeerCall{ID: 7, Certified: true}, f.gateErr
}

func (f *fakeHandler) NodeStatus(_ context.Context, minEpoch uint64, _ bool) *PeerMember {
	return &PeerMember{Name: "n1", Epoch: minEpoch} // says which epoch was asked for
}

func (f *fakeHandler) Repair(ctx context.Context, id string) (*PeerRepairResponse, error) {
	f.repairCaller = CallerOf(ctx)
	if f.repairErr != nil {
		return nil, f.repairErr
	}
	return &PeerRepairResponse{Name: id, Epoch: 3}, nil
}

func (f *fakeHandler) HistoryRecords(context.Context, uint64, uint64) HistorySource {
	return historyFunc(f.history)
}

type historyFunc func(from, to uint64, max int) ([][]byte, uint64, error)

func (h historyFunc) EncodedHistory(from, to uint64, max int) ([][]byte, uint64, error) {
	return h(from, to, max)
}

// serve starts the peer service of h on a loopback port and returns its
// address.
func serve(t *testing.T, h Handler) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(ServerOptions(h)...)
	Register(srv, h)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

var plain = grpc.WithTransportCredentials(insecure.NewCredentials())

// TestCalls: the client calls reach the server by the service's paths;
// the interceptors refuse a caller of another cluster (raftlog's status)
// and one that is not a member (PermissionDenied); the server answers a
// handler's error with the code of its kind, and the client reads the
// answer back into an *Error of that kind, keeping the status.
func TestCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := &fakeHandler{}
	addr := serve(t, h)
	if st, err := NodeStatus(ctx, plain, addr, 7, time.Second); err != nil || st.GetName() != "n1" || st.GetEpoch() != 7 {
		t.Fatalf("NodeStatus: %v, %v", st, err)
	}
	if r, err := Repair(ctx, plain, addr, "n1"); err != nil || r.GetName() != "n1" || h.repairCaller.ID != 7 {
		t.Fatalf("Repair: %v, %v (caller %+v)", r, err, h.repairCaller)
	}
	for _, tc := range []struct {
		name      string
		set       func()
		code      codes.Code
		kind      error
		msgPrefix string
	}{
		{"refused", func() { h.repairErr = fmt.Errorf("repair member x: this member is n1: %w", ErrPrecondition) }, codes.FailedPrecondition, ErrPrecondition, "repair member x"},
		{"no leader", func() { h.repairErr = fmt.Errorf("repair member n1: %w", raftlog.ErrStopped) }, codes.Unavailable, ErrUnreachable, "repair member n1"},
		{"repair unsupported", func() { h.repairErr = fmt.Errorf("x: %w", raftlog.ErrRepairUnsupported) }, codes.FailedPrecondition, ErrPrecondition, "x"},
		{"deadline", func() { h.repairErr = fmt.Errorf("x: %w", context.DeadlineExceeded) }, codes.DeadlineExceeded, context.DeadlineExceeded, "x"},
		{"internal", func() { h.repairErr = errors.New("disk on fire") }, codes.Internal, nil, "disk on fire"},
		{"not a member", func() { h.repairErr, h.gateErr = nil, fmt.Errorf("%w: who", raftlog.ErrNotMember) }, codes.PermissionDenied, raftlog.ErrNotMember,
			"/metalog.v1.PeerService/Repair: "},
		{"gate failed", func() { h.gateErr = errors.New("cannot tell") }, codes.Unavailable, ErrUnreachable, "/metalog.v1.PeerService/Repair: cannot tell"},
		{"other cluster", func() { h.gateErr, h.callerErr = nil, &CallerError{Local: 0xaa, Msg: "other cluster"} }, codes.FailedPrecondition, ErrPrecondition, "other cluster"},
	} {
		tc.set()
		_, err := Repair(ctx, plain, addr, "x")
		var pe *Error
		if !errors.As(err, &pe) || status.Code(err) != tc.code || (tc.kind != nil && !errors.Is(err, tc.kind)) ||
			len(err.Error()) < len(tc.msgPrefix) || err.Error()[:len(tc.msgPrefix)] != tc.msgPrefix {
			t.Errorf("%s: %v (%v), want an *Error of %v matching %v, message %q...", tc.name, err, status.Code(err), tc.code, tc.kind, tc.msgPrefix)
		}
		for _, k := range []error{ErrPrecondition, ErrUnreachable, raftlog.ErrNotMember, context.DeadlineExceeded, context.Canceled} {
			if k != tc.kind && errors.Is(err, k) {
				t.Errorf("%s: %v matches %v too", tc.name, err, k)
			}
		}
	}
	if cluster, ok := raftlog.MismatchOf(func() error { _, err := Repair(ctx, plain, addr, "x"); return err }()); !ok || cluster != 0xaa {
		t.Errorf("a caller of another cluster reads cluster %x, %v; want aa", cluster, ok)
	}
	if _, err := Repair(ctx, plain, "bad address:::", "x"); !errors.Is(err, ErrUnreachable) || status.Code(err) != codes.Unavailable {
		t.Errorf("an address that does not dial: %v, want unreachable", err)
	}
}

// TestHistoryRecords: the records come in chunks up to the peer's end; a
// range reaching past the oldest epoch kept is OutOfRange, to before
// from InvalidArgument, and a caller of another cluster is refused.
func TestHistoryRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := &fakeHandler{}
	addr := serve(t, h)
	record := func(epoch uint64) []byte { return metadata.AppendRecord(nil, &metadata.Record{Epoch: epoch}) }
	h.history = func(from, to uint64, max int) ([][]byte, uint64, error) {
		var out [][]byte
		for e := from + 1; e <= min(to, 5) && len(out) < 2; e++ {
			out = append(out, record(e))
		}
		return out, 1, nil
	}
	var got int
	err := CopyHistory(ctx, plain, addr, 0, 9, 1<<20, func(records [][]byte, oldest uint64) (bool, error) {
		got += len(records)
		return false, nil
	})
	if err == nil || got != 5 {
		t.Errorf("copy: %d records, %v; want 5 then the end of the stream", got, err)
	}
	h.history = func(from, to uint64, max int) ([][]byte, uint64, error) {
		return nil, 0, &metadata.PrunedError{From: from, Oldest: 4, Retention: 3}
	}
	err = CopyHistory(ctx, plain, addr, 0, 9, 1<<20, func([][]byte, uint64) (bool, error) { return false, nil })
	if status.Code(err) != codes.OutOfRange {
		t.Errorf("pruned: %v, want OutOfRange", err)
	}
	err = CopyHistory(ctx, plain, addr, 9, 2, 1<<20, func([][]byte, uint64) (bool, error) { return false, nil })
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "to_epoch 2 is before from_epoch 9" {
		t.Errorf("to before from: %v, want InvalidArgument", err)
	}
	h.callerErr = &CallerError{Local: 0xbb, Msg: "other cluster"}
	err = CopyHistory(ctx, plain, addr, 0, 9, 1<<20, func([][]byte, uint64) (bool, error) { return false, nil })
	if cluster, ok := raftlog.MismatchOf(err); !ok || cluster != 0xbb {
		t.Errorf("a caller of another cluster: %v, want the mismatch of cluster bb", err)
	}
}

// TestUnimplemented: the answer of a server without the service is told
// apart, with its message.
func TestUnimplemented(t *testing.T) {
	if msg, ok := Unimplemented(status.Error(codes.Unimplemented, "unknown service")); !ok || msg != "unknown service" {
		t.Errorf("Unimplemented: %q, %v", msg, ok)
	}
	if _, ok := Unimplemented(status.Error(codes.Unavailable, "down")); ok {
		t.Error("Unavailable taken for Unimplemented")
	}
}
