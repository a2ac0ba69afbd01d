package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/api/apierr"
	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/internal/clip"
	"github.com/metalog/metalog/member"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema/describe"
	"github.com/metalog/metalog/schema/plan"
)

// service implements pb.MetadataServiceServer over the slices of a
// Backend (the member): each handler checks what is the API's to check
// (formats), calls the member through its slice alone, converts the
// answer and maps the error.
type service struct {
	pb.UnimplementedMetadataServiceServer

	// w serves Execute, Plan and SetGuardrails; r the reads, History,
	// Watch, GetRequestOutcome and Backup; c the membership calls.
	w       Writer
	r       Reader
	c       ClusterAdmin
	logger  *slog.Logger
	metrics *metrics
	events  eventCache
	// stamp puts the member's cluster and history ids on every response
	// (identity.go); set by newService.
	stamp *stamp
}

// newService returns the service of b's slices, logging to logger and
// counting on mt.
func newService(b Backend, logger *slog.Logger, mt *metrics) *service {
	return &service{w: b.Writer, r: b.Reader, c: b.Cluster, logger: logger, metrics: mt, stamp: newStamp(b.Identity)}
}

// toStatus turns err, an error of the member or the API's own status,
// into the gRPC status error the API answers with, keeping its message:
// apierr's table.
func toStatus(err error) error { return apierr.Status(err) }

// Execute executes the statements through the member, and counts and logs
// the outcome.
func (s *service) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	start := time.Now()
	mreq := member.Request{
		Statements: req.GetStatements(), Keyspace: req.GetKeyspace(), RequestID: req.GetRequestId(), Atomic: req.GetAtomic(),
		Principal: principal(ctx), IfEpoch: req.GetIfEpoch(), HasIfEpoch: req.IfEpoch != nil, Grants: scopeGrants(ctx),
		Visible: visible(ctx),
	}
	if req.GetDryRun() {
		return s.dryRun(ctx, mreq)
	}
	out, err := s.w.Execute(ctx, mreq)
	if c := apierr.Classify(err); c == apierr.TooManyStatements || c == apierr.RateLimited {
		// Refused by a limit before anything was checked: not a DDL
		// answered, as for the other request limits.
		return nil, toStatus(err)
	}
	s.metrics.observeExecute(time.Since(start), apierr.Code(err), err == nil)
	s.metrics.countStatements(out, err)
	for _, w := range out.Warnings {
		if w.Guardrail == "" {
			// A statement's own warning (CREATE TABLE LIKE skipping
			// indexes), not a guardrail's.
			s.logger.Warn("statement warning", "request_id", clip.String(req.GetRequestId()), "epoch", out.Epoch, "warning", w.Message)
			continue
		}
		s.metrics.guardrailWarnings.WithLabelValues(w.Guardrail).Inc()
		s.logger.Warn("guardrail warning", "request_id", clip.String(req.GetRequestId()), "epoch", out.Epoch, "guardrail", w.Guardrail, "warning", w.Message)
	}
	if err != nil {
		var f *guardrails.Failure
		var oe *member.OutcomeUnknownError
		switch {
		case errors.As(err, &oe):
			// Not refused: it may still apply. The id is the member's own
			// when the request came without one.
			s.logger.Warn("execute outcome unknown", "request_id", clip.String(oe.RequestID), "applied_index", oe.AppliedIndex, "err", err)
			return nil, toStatus(err)
		case errors.As(err, &f):
			s.metrics.guardrailFailures.WithLabelValues(f.Guardrail).Inc()
		}
		s.logger.Info("execute refused", "request_id", clip.String(req.GetRequestId()), "err", err)
		return nil, toStatus(err)
	}
	if s.logger.Enabled(ctx, slog.LevelInfo) { // the summary costs allocations
		s.logger.Info("ddl applied", "request_id", clip.String(req.GetRequestId()), "epoch", out.Epoch, "statements", statementKinds(out))
	}
	return executeResponse(out), nil
}

// statementKinds summarises the statements of an outcome for its log line:
// each kind once, in order of first appearance, with its count when more
// than one ("CREATE KEYSPACE, CREATE TABLE x3").
func statementKinds(out metadata.Outcome) string {
	var kinds []string
	count := map[string]int{}
	for _, r := range out.Results {
		if count[r.Result.Kind] == 0 {
			kinds = append(kinds, r.Result.Kind)
		}
		count[r.Result.Kind]++
	}
	for i, k := range kinds {
		if n := count[k]; n > 1 {
			kinds[i] = fmt.Sprintf("%s x%d", k, n)
		}
	}
	return strings.Join(kinds, ", ")
}

// Plan plans the DDL from the current schema to the desired one.
func (s *service) Plan(ctx context.Context, req *pb.PlanRequest) (*pb.PlanResponse, error) {
	var files []plan.Source
	for _, f := range req.GetDesiredFiles() {
		files = append(files, plan.Source{Name: f.GetName(), Text: f.GetText()})
	}
	p, err := s.w.Plan(ctx, member.PlanRequest{Desired: req.GetDesired(), Files: files, Keyspaces: req.GetKeyspaces(),
		Prune: req.GetPrune(), DropColumns: req.GetDropColumns(), AllowRecreate: req.GetAllowRecreate(), Visible: visible(ctx)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.PlanResponse{Epoch: p.Epoch, Statements: p.Statements, Warnings: p.Warnings, Notes: p.Notes, Destructive: p.Destructive,
		Digest: fmt.Sprintf("%x", p.Digest[:]), BaseDigest: fmt.Sprintf("%x", p.BaseDigest[:])}, nil
}

// dryRun answers an Execute with dry_run set: what it would do, from the
// member's DryRun; it counts as no DDL and logs nothing.
func (s *service) dryRun(ctx context.Context, req member.Request) (*pb.ExecuteResponse, error) {
	out, digest, err := s.w.DryRun(ctx, req)
	if err != nil {
		return nil, toStatus(err)
	}
	resp := executeResponse(out)
	resp.DryRun, resp.Digest = true, fmt.Sprintf("%x", digest[:])
	return resp, nil
}

func executeResponse(out metadata.Outcome) *pb.ExecuteResponse {
	resp := &pb.ExecuteResponse{Epoch: out.Epoch, Results: make([]*pb.StatementResult, 0, len(out.Results)), Warnings: []string{}}
	for _, w := range out.Warnings {
		resp.Warnings = append(resp.Warnings, w.Message)
	}
	for _, r := range out.Results {
		resp.Results = append(resp.Results, &pb.StatementResult{
			Statement: r.Text,
			Kind:      r.Result.Kind,
			Keyspace:  r.Result.Keyspace,
			Table:     r.Result.Table,
			Applied:   r.Result.Applied,
			Epoch:     r.Epoch,
			Name:      r.Result.Name,
		})
	}
	return resp
}

func checkFormat(format string) error {
	switch format {
	case "", "json", "cql":
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "format %q: want \"cql\" or \"json\"", format)
}

// read checks a read's format and returns the member's state for it: the
// current one, or the schema as it was at *at when at is set; either with
// only the keyspaces the caller may see (visible).
func (s *service) read(ctx context.Context, format string, minEpoch uint64, consistency string, at *uint64) (*metadata.ClusterMetadata, error) {
	if err := checkFormat(format); err != nil {
		return nil, err
	}
	if at != nil {
		if minEpoch != 0 {
			return nil, status.Errorf(codes.InvalidArgument, "min_epoch %d and at_epoch %d exclude each other: at_epoch waits for its epoch", minEpoch, *at)
		}
		m, err := s.r.ReadAt(ctx, *at, consistency, visible(ctx))
		return m, toStatus(err)
	}
	m, err := s.r.Read(ctx, minEpoch, consistency, visible(ctx))
	return m, toStatus(err)
}

// GetSchema returns every keyspace with its tables.
func (s *service) GetSchema(ctx context.Context, req *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error) {
	m, err := s.read(ctx, req.GetFormat(), req.GetMinEpoch(), req.GetConsistency(), req.AtEpoch)
	if err != nil {
		return nil, err
	}
	d := m.Schema.Digest()
	resp := &pb.GetSchemaResponse{Epoch: m.Epoch, Keyspaces: []*pb.Keyspace{}, Digest: hex.EncodeToString(d[:])}
	for _, k := range m.Schema.Keyspaces() {
		resp.Keyspaces = append(resp.Keyspaces, keyspaceToProto(k, true))
	}
	if req.GetFormat() == "cql" {
		resp.Cql = describe.Schema(m.Schema)
	}
	return resp, nil
}

// GetKeyspace returns one keyspace with its tables.
func (s *service) GetKeyspace(ctx context.Context, req *pb.GetKeyspaceRequest) (*pb.GetKeyspaceResponse, error) {
	m, err := s.read(ctx, req.GetFormat(), req.GetMinEpoch(), req.GetConsistency(), req.AtEpoch)
	if err != nil {
		return nil, err
	}
	k, ok := m.Schema.Keyspace(req.GetKeyspace())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "keyspace %s does not exist (epoch %d)", req.GetKeyspace(), m.Epoch)
	}
	resp := &pb.GetKeyspaceResponse{Epoch: m.Epoch, Keyspace: keyspaceToProto(k, true)}
	if req.GetFormat() == "cql" {
		resp.Cql = describe.Keyspace(k)
	}
	return resp, nil
}

// GetTable returns one table.
func (s *service) GetTable(ctx context.Context, req *pb.GetTableRequest) (*pb.GetTableResponse, error) {
	m, err := s.read(ctx, req.GetFormat(), req.GetMinEpoch(), req.GetConsistency(), req.AtEpoch)
	if err != nil {
		return nil, err
	}
	if _, ok := m.Schema.Keyspace(req.GetKeyspace()); !ok {
		return nil, status.Errorf(codes.NotFound, "keyspace %s does not exist (epoch %d)", req.GetKeyspace(), m.Epoch)
	}
	t, ok := m.Schema.Table(req.GetKeyspace(), req.GetTable())
	if !ok {
		// DESCRIBE of a name that is no table prints the functions and
		// aggregates of that name, every overload, when there are some.
		k, _ := m.Schema.Keyspace(req.GetKeyspace())
		if cql := describe.FunctionsNamed(k, req.GetTable()); cql != "" && req.GetFormat() == "cql" {
			return &pb.GetTableResponse{Epoch: m.Epoch, Cql: cql}, nil
		}
		return nil, status.Errorf(codes.NotFound, "table %s.%s does not exist (epoch %d)", req.GetKeyspace(), req.GetTable(), m.Epoch)
	}
	resp := &pb.GetTableResponse{Epoch: m.Epoch, Table: tableToProto(t)}
	if req.GetFormat() == "cql" {
		// As DESCRIBE TABLE: the table with its indexes, triggers and views.
		k, _ := m.Schema.Keyspace(req.GetKeyspace())
		resp.Cql = describe.TableElements(k, t)
	}
	return resp, nil
}

// GetGuardrails returns every guardrail setting of the cluster.
func (s *service) GetGuardrails(ctx context.Context, req *pb.GetGuardrailsRequest) (*pb.GetGuardrailsResponse, error) {
	m, err := s.read(ctx, "", req.GetMinEpoch(), req.GetConsistency(), nil)
	if err != nil {
		return nil, err
	}
	return keyspaceGuardrailValues(m, req.GetKeyspace(), visible(ctx))
}

// SetGuardrails changes guardrails through the log.
func (s *service) SetGuardrails(ctx context.Context, req *pb.SetGuardrailsRequest) (*pb.SetGuardrailsResponse, error) {
	if req.GetKeyspace() != "" || req.GetResetOverride() {
		return s.setKeyspaceGuardrails(ctx, req)
	}
	epoch, g, err := s.w.SetGuardrails(ctx, principal(ctx), req.GetRequestId(), req.GetSet())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.SetGuardrailsResponse{Epoch: epoch, Guardrails: guardrailValues(g.Values())}, nil
}

func guardrailValues(values []guardrails.Value) []*pb.GuardrailValue {
	var out []*pb.GuardrailValue
	for _, v := range values {
		out = append(out, &pb.GuardrailValue{Name: v.Name, Value: v.Value, Default: v.Default, Changed: v.Changed, Source: v.Source})
	}
	return out
}

// ListMembers lists the members, each with its own status.
func (s *service) ListMembers(ctx context.Context, _ *pb.ListMembersRequest) (*pb.ListMembersResponse, error) {
	cs, err := s.c.ListMembers(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return clusterStatusToProto(cs), nil
}

// CheckCluster runs the agreement check.
func (s *service) CheckCluster(ctx context.Context, _ *pb.CheckClusterRequest) (*pb.CheckClusterResponse, error) {
	cc, err := s.c.CheckCluster(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return clusterCheckToProto(cc), nil
}

// AddMember adds a member as a learner.
func (s *service) AddMember(ctx context.Context, req *pb.AddMemberRequest) (*pb.AddMemberResponse, error) {
	m, err := s.c.AddMember(ctx, req.GetName(), req.GetPeerAddr(), req.GetObserver())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.AddMemberResponse{Member: memberToProto(m)}, nil
}

// RemoveMember removes a member named by name or hex id.
func (s *service) RemoveMember(ctx context.Context, req *pb.RemoveMemberRequest) (*pb.RemoveMemberResponse, error) {
	if err := s.c.RemoveMember(ctx, req.GetId()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.RemoveMemberResponse{}, nil
}

// RepairMember rebuilds a member's metadata from its own log.
func (s *service) RepairMember(ctx context.Context, req *pb.RepairMemberRequest) (*pb.RepairMemberResponse, error) {
	r, err := s.c.RepairMember(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.RepairMemberResponse{Name: r.Name, Epoch: r.Epoch, Digest: r.Digest}, nil
}
