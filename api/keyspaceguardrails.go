package api

import (
	"context"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/access"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
)

// KeyspaceGuardrailsSetter is the optional part of a Writer that changes
// per-keyspace guardrail overrides; *member.Writes implements it. A
// Writer without it answers Unimplemented to SetGuardrails with a
// keyspace.
type KeyspaceGuardrailsSetter interface {
	// SetKeyspaceGuardrails commits a change of the override of scope
	// asked for by principal (reset removes the whole override first) and
	// returns its epoch and the scope's override after it.
	// bounded keeps fail thresholds at or under the cluster's (a caller
	// holding operator only for some keyspaces).
	SetKeyspaceGuardrails(ctx context.Context, principal, requestID, scope string, set map[string]string, reset, bounded bool) (uint64, guardrails.Override, error)
}

// keyspaceGuardrailValues answers GetGuardrails for req.Keyspace (a
// keyspace, or a scope pattern: the values under its own override) from
// m: the values with their sources and the override that applies. A
// scoped reader (visible not nil) sees the overrides of the scopes it
// covers (metadata.ScopeVisible), and the values of a keyspace outside
// them as those of a keyspace without override: the same answer whether
// that keyspace exists or not.
func keyspaceGuardrailValues(m *metadata.ClusterMetadata, keyspace string, visible func(string) bool) (*pb.GetGuardrailsResponse, error) {
	resp := &pb.GetGuardrailsResponse{Epoch: m.Epoch}
	if keyspace == "" {
		resp.Guardrails = guardrailValues(m.Guardrails.Values())
		for _, o := range m.KeyspaceGuardrails.All() {
			if metadata.ScopeVisible(visible, o.Scope) {
				resp.Overrides = append(resp.Overrides, overrideToProto(o))
			}
		}
		return resp, nil
	}
	scope, err := guardrails.ParseScope(keyspace)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "keyspace: "+err.Error())
	}
	if !metadata.ScopeVisible(visible, scope) {
		resp.Guardrails = guardrailValues(m.Guardrails.Values())
		return resp, nil
	}
	var o guardrails.Override
	ok := false
	if guardrails.IsPattern(scope) {
		o, ok = m.KeyspaceGuardrails.Get(scope)
	} else {
		o, ok = m.KeyspaceGuardrails.Lookup(scope)
	}
	if !ok {
		resp.Guardrails = guardrailValues(m.Guardrails.Values())
		return resp, nil
	}
	resp.Guardrails = guardrailValues(guardrails.OverrideValues(m.Guardrails, o))
	resp.Overrides = []*pb.KeyspaceGuardrailOverride{overrideToProto(o)}
	return resp, nil
}

// setKeyspaceGuardrails answers SetGuardrails with a keyspace.
func (s *service) setKeyspaceGuardrails(ctx context.Context, req *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error) {
	if req.GetKeyspace() == "" {
		return nil, status.Error(codes.InvalidArgument, "reset_override needs keyspace: the scope whose per-keyspace override to remove")
	}
	ks, ok := s.w.(KeyspaceGuardrailsSetter)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "per-keyspace guardrails are not supported by this member")
	}
	epoch, o, err := ks.SetKeyspaceGuardrails(ctx, principal(ctx), req.GetRequestId(), req.GetKeyspace(), req.GetSet(), req.GetResetOverride(), scopedOperator(ctx))
	if err != nil {
		return nil, toStatus(err)
	}
	m, err := s.r.Read(ctx, epoch, "", nil)
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.SetGuardrailsResponse{Epoch: epoch, Guardrails: guardrailValues(guardrails.OverrideValues(m.Guardrails, o))}
	if !o.Empty() {
		resp.Override = overrideToProto(o)
	}
	return resp, nil
}

// overrideToProto is the wire form of an override.
func overrideToProto(o guardrails.Override) *pb.KeyspaceGuardrailOverride {
	out := &pb.KeyspaceGuardrailOverride{Scope: o.Scope, Set: map[string]string{}}
	for _, v := range o.Values() {
		out.Set[v.Name] = strconv.FormatInt(v.Value, 10)
	}
	return out
}

// scopedOperator reports whether the caller of ctx holds operator only for
// some keyspaces: authorize let it through for a keyspace override inside
// its scope, and the override may then not loosen the cluster's fail
// thresholds.
func scopedOperator(ctx context.Context) bool {
	grants, ok := callerGrants(ctx)
	return ok && !grants.Unscoped(access.Operator)
}
