package client

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// The Client works wherever the generated client does.
var _ pb.MetadataServiceClient = (*Client)(nil)

// Execute parses and commits CQL DDL statements (separated by ';'). A
// request without a request id is sent with a random one (req itself is
// left as it is), so that a retry on another endpoint never applies it
// twice; set RequestId to retry a request yourself later.
func (c *Client) Execute(ctx context.Context, req *pb.ExecuteRequest, opts ...grpc.CallOption) (*pb.ExecuteResponse, error) {
	if req.GetRequestId() == "" {
		req = copyOf(req)
		req.RequestId = NewRequestID()
	}
	return change(ctx, c, pb.MetadataServiceClient.Execute, req, opts, req.GetRequestId(), "")
}

// SetGuardrails changes guardrail settings through the raft log; like
// Execute it carries a request id, a random one when req has none.
func (c *Client) SetGuardrails(ctx context.Context, req *pb.SetGuardrailsRequest, opts ...grpc.CallOption) (*pb.SetGuardrailsResponse, error) {
	if req.GetRequestId() == "" {
		req = copyOf(req)
		req.RequestId = NewRequestID()
	}
	return change(ctx, c, pb.MetadataServiceClient.SetGuardrails, req, opts, req.GetRequestId(), "")
}

// copyOf returns a copy of req to set a request id on (the caller's
// message is never changed), or a new message when req is nil.
func copyOf[M interface {
	*T
	proto.Message
}, T any](req M) M {
	if req == nil {
		return new(T)
	}
	return proto.CloneOf(req)
}

// Plan returns the DDL that turns the current schema into the desired
// one; it changes nothing, so it is a read: sent to the read endpoints
// and retried on the next endpoint like GetSchema.
func (c *Client) Plan(ctx context.Context, req *pb.PlanRequest, opts ...grpc.CallOption) (*pb.PlanResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.Plan, req, opts)
}

// GetSchema returns the whole schema as the member answering sees it.
func (c *Client) GetSchema(ctx context.Context, req *pb.GetSchemaRequest, opts ...grpc.CallOption) (*pb.GetSchemaResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.GetSchema, req, opts)
}

// GetKeyspace returns one keyspace and its tables.
func (c *Client) GetKeyspace(ctx context.Context, req *pb.GetKeyspaceRequest, opts ...grpc.CallOption) (*pb.GetKeyspaceResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.GetKeyspace, req, opts)
}

// GetTable returns one table.
func (c *Client) GetTable(ctx context.Context, req *pb.GetTableRequest, opts ...grpc.CallOption) (*pb.GetTableResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.GetTable, req, opts)
}

// GetGuardrails returns every guardrail setting of the cluster and the
// per-keyspace overrides, or with req.Keyspace the values that hold in
// that keyspace (see KeyspaceGuardrails).
func (c *Client) GetGuardrails(ctx context.Context, req *pb.GetGuardrailsRequest, opts ...grpc.CallOption) (*pb.GetGuardrailsResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.GetGuardrails, req, opts)
}

// ListMembers returns the cluster's members with each one's raft and
// metadata position. It is the cluster's administration, asked of
// Endpoints (not of read endpoints) like CheckCluster and RepairMember.
func (c *Client) ListMembers(ctx context.Context, req *pb.ListMembersRequest, opts ...grpc.CallOption) (*pb.ListMembersResponse, error) {
	return call(ctx, c, pb.MetadataServiceClient.ListMembers, req, opts)
}

// AddMember adds a member as a learner; it becomes a voter once caught up.
func (c *Client) AddMember(ctx context.Context, req *pb.AddMemberRequest, opts ...grpc.CallOption) (*pb.AddMemberResponse, error) {
	return change(ctx, c, pb.MetadataServiceClient.AddMember, req, opts, "", "add member "+req.GetName())
}

// RemoveMember removes a member (the leader included).
func (c *Client) RemoveMember(ctx context.Context, req *pb.RemoveMemberRequest, opts ...grpc.CallOption) (*pb.RemoveMemberResponse, error) {
	return change(ctx, c, pb.MetadataServiceClient.RemoveMember, req, opts, "", "remove member "+req.GetId())
}

// RepairMember rebuilds one member's metadata from its raft log and
// newest snapshot.
func (c *Client) RepairMember(ctx context.Context, req *pb.RepairMemberRequest, opts ...grpc.CallOption) (*pb.RepairMemberResponse, error) {
	return call(ctx, c, pb.MetadataServiceClient.RepairMember, req, opts)
}

// CheckCluster asks every member, in one round, whether it holds the same
// schema.
func (c *Client) CheckCluster(ctx context.Context, req *pb.CheckClusterRequest, opts ...grpc.CallOption) (*pb.CheckClusterResponse, error) {
	return call(ctx, c, pb.MetadataServiceClient.CheckCluster, req, opts)
}

// History returns a page of the changes kept: those of the epochs in
// (FromEpoch, ToEpoch], oldest first, or without FromEpoch the newest
// Limit up to ToEpoch. Follow NextEpoch for the next page. It is a read:
// retried on the next endpoint like GetSchema. History that the answering
// member has pruned is OutOfRange, whose message names the oldest epoch
// it keeps.
func (c *Client) History(ctx context.Context, req *pb.HistoryRequest, opts ...grpc.CallOption) (*pb.HistoryResponse, error) {
	return read(ctx, c, pb.MetadataServiceClient.History, req, opts)
}

// Consistencies of a read (DescribeOptions.Consistency, and the
// Consistency field of the Get requests).
const (
	// ConsistencyLocal reads the answering member's current state (the
	// default).
	ConsistencyLocal = "local"
	// ConsistencyLinearizable confirms with the leader (raft ReadIndex) and
	// waits until the member has applied everything committed before the
	// read began.
	ConsistencyLinearizable = "linearizable"
)

// DescribeOptions are the read options of Describe. A nil
// *DescribeOptions means the defaults.
type DescribeOptions struct {
	// MinEpoch, if not zero, makes the member wait until it has applied
	// this epoch (the epoch of your last write reads your own writes).
	MinEpoch uint64
	// Consistency is ConsistencyLocal (the default when empty) or
	// ConsistencyLinearizable.
	Consistency string
	// AtEpoch, if not nil, asks for the schema as it was at that epoch (0:
	// before the first change), rebuilt from the history the member keeps:
	// OutOfRange when that history was pruned. Nil: the current schema.
	AtEpoch *uint64
}

// Describe returns CQL DESCRIBE text that re-creates the whole schema
// (keyspace empty), one keyspace (table empty) or one table: what
// `metalog describe` prints. With o.AtEpoch it is the text of the schema
// as it was at that epoch.
func (c *Client) Describe(ctx context.Context, keyspace, table string, o *DescribeOptions) (string, error) {
	if o == nil {
		o = &DescribeOptions{}
	}
	switch {
	case table != "":
		r, err := c.GetTable(ctx, &pb.GetTableRequest{Keyspace: keyspace, Table: table, Format: "cql", MinEpoch: o.MinEpoch, Consistency: o.Consistency, AtEpoch: o.AtEpoch})
		return r.GetCql(), err
	case keyspace != "":
		r, err := c.GetKeyspace(ctx, &pb.GetKeyspaceRequest{Keyspace: keyspace, Format: "cql", MinEpoch: o.MinEpoch, Consistency: o.Consistency, AtEpoch: o.AtEpoch})
		return r.GetCql(), err
	default:
		r, err := c.GetSchema(ctx, &pb.GetSchemaRequest{Format: "cql", MinEpoch: o.MinEpoch, Consistency: o.Consistency, AtEpoch: o.AtEpoch})
		return r.GetCql(), err
	}
}
