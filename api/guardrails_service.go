package api

import (
	"context"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
)

func guardrailValues(g guardrails.Settings) []*pb.GuardrailValue {
	var out []*pb.GuardrailValue
	for _, v := range g.Values() {
		out = append(out, &pb.GuardrailValue{Name: v.Name, Value: v.Value, Default: v.Default, Changed: v.Changed})
	}
	return out
}

// GetGuardrails returns every guardrail setting of the cluster.
func (s *service) GetGuardrails(ctx context.Context, req *pb.GetGuardrailsRequest) (*pb.GetGuardrailsResponse, error) {
	m, err := s.view(ctx, req.GetMinEpoch(), req.GetConsistency())
	if err != nil {
		return nil, err
	}
	return &pb.GetGuardrailsResponse{Epoch: m.Epoch, Guardrails: guardrailValues(m.Guardrails)}, nil
}

// SetGuardrails validates the change on top of the current settings and
// commits it through the log.
func (s *service) SetGuardrails(ctx context.Context, req *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error) {
	if len(req.GetSet()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "set: no guardrail to change")
	}
	g := s.sm.Current().Guardrails
	names := make([]string, 0, len(req.GetSet()))
	for name := range req.GetSet() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var err error
		if g, err = g.Set(name, req.GetSet()[name]); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "guardrail %s=%q: %v", name, req.GetSet()[name], err)
		}
	}
	if err := g.Validate(); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	cmd := metadata.Command{Kind: metadata.KindSetGuardrails, RequestID: req.GetRequestId(), Guardrails: guardrails.AppendSettings(nil, g)}
	out, err := s.propose(ctx, cmd)
	if err != nil {
		return nil, toStatus(err)
	}
	m, err := s.sm.WaitEpoch(ctx, out.Epoch)
	if err != nil {
		return nil, toStatus(err)
	}
	s.logger.Info("guardrails changed", "request_id", cmd.RequestID, "epoch", out.Epoch, "set", req.GetSet())
	return &pb.SetGuardrailsResponse{Epoch: out.Epoch, Guardrails: guardrailValues(m.Guardrails)}, nil
}
