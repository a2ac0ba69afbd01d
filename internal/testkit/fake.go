package testkit

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// Fake is a MetadataService configured per method: a call runs the
// method's hook (OnExecute for Execute, and so on) when it is set, or
// else answers Err when that is set, or else Unimplemented as a server
// without the method does. Set the fields before serving it.
type Fake struct {
	pb.UnimplementedMetadataServiceServer

	// Err answers every call whose method has no hook (nil:
	// Unimplemented).
	Err error

	OnExecute           func(context.Context, *pb.ExecuteRequest) (*pb.ExecuteResponse, error)
	OnGetSchema         func(context.Context, *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error)
	OnGetKeyspace       func(context.Context, *pb.GetKeyspaceRequest) (*pb.GetKeyspaceResponse, error)
	OnGetTable          func(context.Context, *pb.GetTableRequest) (*pb.GetTableResponse, error)
	OnListMembers       func(context.Context, *pb.ListMembersRequest) (*pb.ListMembersResponse, error)
	OnAddMember         func(context.Context, *pb.AddMemberRequest) (*pb.AddMemberResponse, error)
	OnRemoveMember      func(context.Context, *pb.RemoveMemberRequest) (*pb.RemoveMemberResponse, error)
	OnCheckCluster      func(context.Context, *pb.CheckClusterRequest) (*pb.CheckClusterResponse, error)
	OnRepairMember      func(context.Context, *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error)
	OnGetGuardrails     func(context.Context, *pb.GetGuardrailsRequest) (*pb.GetGuardrailsResponse, error)
	OnSetGuardrails     func(context.Context, *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error)
	OnWatch             func(*pb.WatchRequest, grpc.ServerStreamingServer[pb.WatchResponse]) error
	OnHistory           func(context.Context, *pb.HistoryRequest) (*pb.HistoryResponse, error)
	OnBackup            func(*pb.BackupRequest, grpc.ServerStreamingServer[pb.BackupResponse]) error
	OnSaveSnapshot      func(*pb.SaveSnapshotRequest, grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error
	OnPlan              func(context.Context, *pb.PlanRequest) (*pb.PlanResponse, error)
	OnGetRequestOutcome func(context.Context, *pb.GetRequestOutcomeRequest) (*pb.GetRequestOutcomeResponse, error)
}

// unary answers a call of method with hook, or f's canned answer.
func unary[Req, Resp any](ctx context.Context, f *Fake, method string, req Req, hook func(context.Context, Req) (Resp, error)) (Resp, error) {
	if hook != nil {
		return hook(ctx, req)
	}
	var none Resp
	return none, f.canned(method)
}

// streaming answers a streaming call of method with hook, or f's canned
// answer.
func streaming[Req, Msg any](f *Fake, method string, req Req, s grpc.ServerStreamingServer[Msg], hook func(Req, grpc.ServerStreamingServer[Msg]) error) error {
	if hook != nil {
		return hook(req, s)
	}
	return f.canned(method)
}

func (f *Fake) canned(method string) error {
	if f.Err != nil {
		return f.Err
	}
	return status.Errorf(codes.Unimplemented, "method %s not implemented", method)
}

// Execute runs OnExecute.
func (f *Fake) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	return unary(ctx, f, "Execute", req, f.OnExecute)
}

// GetSchema runs OnGetSchema.
func (f *Fake) GetSchema(ctx context.Context, req *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error) {
	return unary(ctx, f, "GetSchema", req, f.OnGetSchema)
}

// GetKeyspace runs OnGetKeyspace.
func (f *Fake) GetKeyspace(ctx context.Context, req *pb.GetKeyspaceRequest) (*pb.GetKeyspaceResponse, error) {
	return unary(ctx, f, "GetKeyspace", req, f.OnGetKeyspace)
}

// GetTable runs OnGetTable.
func (f *Fake) GetTable(ctx context.Context, req *pb.GetTableRequest) (*pb.GetTableResponse, error) {
	return unary(ctx, f, "GetTable", req, f.OnGetTable)
}

// ListMembers runs OnListMembers.
func (f *Fake) ListMembers(ctx context.Context, req *pb.ListMembersRequest) (*pb.ListMembersResponse, error) {
	return unary(ctx, f, "ListMembers", req, f.OnListMembers)
}

// AddMember runs OnAddMember.
func (f *Fake) AddMember(ctx context.Context, req *pb.AddMemberRequest) (*pb.AddMemberResponse, error) {
	return unary(ctx, f, "AddMember", req, f.OnAddMember)
}

// RemoveMember runs OnRemoveMember.
func (f *Fake) RemoveMember(ctx context.Context, req *pb.RemoveMemberRequest) (*pb.RemoveMemberResponse, error) {
	return unary(ctx, f, "RemoveMember", req, f.OnRemoveMember)
}

// CheckCluster runs OnCheckCluster.
func (f *Fake) CheckCluster(ctx context.Context, req *pb.CheckClusterRequest) (*pb.CheckClusterResponse, error) {
	return unary(ctx, f, "CheckCluster", req, f.OnCheckCluster)
}

// RepairMember runs OnRepairMember.
func (f *Fake) RepairMember(ctx context.Context, req *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error) {
	return unary(ctx, f, "RepairMember", req, f.OnRepairMember)
}

// GetGuardrails runs OnGetGuardrails.
func (f *Fake) GetGuardrails(ctx context.Context, req *pb.GetGuardrailsRequest) (*pb.GetGuardrailsResponse, error) {
	return unary(ctx, f, "GetGuardrails", req, f.OnGetGuardrails)
}

// SetGuardrails runs OnSetGuardrails.
func (f *Fake) SetGuardrails(ctx context.Context, req *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error) {
	return unary(ctx, f, "SetGuardrails", req, f.OnSetGuardrails)
}

// Watch runs OnWatch.
func (f *Fake) Watch(req *pb.WatchRequest, s grpc.ServerStreamingServer[pb.WatchResponse]) error {
	return streaming(f, "Watch", req, s, f.OnWatch)
}

// History runs OnHistory.
func (f *Fake) History(ctx context.Context, req *pb.HistoryRequest) (*pb.HistoryResponse, error) {
	return unary(ctx, f, "History", req, f.OnHistory)
}

// Backup runs OnBackup.
func (f *Fake) Backup(req *pb.BackupRequest, s grpc.ServerStreamingServer[pb.BackupResponse]) error {
	return streaming(f, "Backup", req, s, f.OnBackup)
}

// SaveSnapshot runs OnSaveSnapshot.
func (f *Fake) SaveSnapshot(req *pb.SaveSnapshotRequest, s grpc.ServerStreamingServer[pb.SaveSnapshotResponse]) error {
	return streaming(f, "SaveSnapshot", req, s, f.OnSaveSnapshot)
}

// Plan runs OnPlan.
func (f *Fake) Plan(ctx context.Context, req *pb.PlanRequest) (*pb.PlanResponse, error) {
	return unary(ctx, f, "Plan", req, f.OnPlan)
}

// GetRequestOutcome runs OnGetRequestOutcome.
func (f *Fake) GetRequestOutcome(ctx context.Context, req *pb.GetRequestOutcomeRequest) (*pb.GetRequestOutcomeResponse, error) {
	return unary(ctx, f, "GetRequestOutcome", req, f.OnGetRequestOutcome)
}
