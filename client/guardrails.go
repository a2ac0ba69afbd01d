package client

import (
	"context"

	"google.golang.org/grpc"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// SetKeyspaceGuardrails changes the per-keyspace guardrail override of
// scope (a keyspace name such as "shop", or a prefix pattern such as
// "tenant_*") through the raft log: set maps setting names to values,
// "default" removing a setting from the override. It is SetGuardrails with
// Keyspace set, retried under one request id like it.
func (c *Client) SetKeyspaceGuardrails(ctx context.Context, scope string, set map[string]string, opts ...grpc.CallOption) (*pb.SetGuardrailsResponse, error) {
	return c.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Keyspace: scope, Set: set}, opts...)
}

// ResetKeyspaceGuardrails removes the whole per-keyspace guardrail
// override of scope: the cluster's settings hold there again.
func (c *Client) ResetKeyspaceGuardrails(ctx context.Context, scope string, opts ...grpc.CallOption) (*pb.SetGuardrailsResponse, error) {
	return c.SetGuardrails(ctx, &pb.SetGuardrailsRequest{Keyspace: scope, ResetOverride: true}, opts...)
}

// KeyspaceGuardrails returns the guardrail values that hold in keyspace,
// each with its source (GuardrailValue.Source: "default", "cluster", or
// "keyspace:" and the scope of the override that applies), and that
// override in Overrides.
func (c *Client) KeyspaceGuardrails(ctx context.Context, keyspace string, opts ...grpc.CallOption) (*pb.GetGuardrailsResponse, error) {
	return c.GetGuardrails(ctx, &pb.GetGuardrailsRequest{Keyspace: keyspace}, opts...)
}
