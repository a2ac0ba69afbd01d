package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/guardrails"
	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/raftlog"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
)

// proposer is the part of the raft node the service needs.
type proposer interface {
	Propose(ctx context.Context, data []byte) (any, error)
}

// service implements pb.MetadataServiceServer on top of a state machine
// (reads) and a raft node (writes).
type service struct {
	pb.UnimplementedMetadataServiceServer

	srv     *Server
	sm      *metadata.StateMachine
	node    proposer
	timeout time.Duration
	logger  *slog.Logger
	// maxMutationSize is this node's max_mutation_size, carried in its
	// commands for the metadata_size guardrail.
	maxMutationSize int64
	metrics         *Metrics
}

// withTimeout applies the server's default deadline to requests without
// one. A client's own deadline is shortened a little, so that the server
// answers "Unavailable: no quorum" before the client gives up and sees only
// its own DeadlineExceeded.
func (s *service) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithTimeout(ctx, s.timeout)
	}
	left := time.Until(d)
	return context.WithDeadline(ctx, d.Add(-min(200*time.Millisecond, left/10)))
}

// Execute parses the statements, checks them against this node's current
// view (so a request that cannot apply is refused before it reaches the
// log), proposes them as one command and waits for it to apply.
func (s *service) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	start := time.Now()
	out, err := s.execute(ctx, req)
	s.metrics.observeExecute(time.Since(start), codeOf(err), err == nil)
	s.metrics.countStatements(out, err)
	for _, w := range out.Warnings {
		s.metrics.guardrailWarnings.WithLabelValues(w.Guardrail).Inc()
		s.logger.Warn("guardrail warning", "request_id", req.GetRequestId(), "epoch", out.Epoch, "guardrail", w.Guardrail, "warning", w.Message)
	}
	if err != nil {
		var f *guardrails.Failure
		if errors.As(err, &f) {
			s.metrics.guardrailFailures.WithLabelValues(f.Guardrail).Inc()
		}
		s.logger.Info("execute refused", "request_id", req.GetRequestId(), "err", err)
		return nil, toStatus(err)
	}
	s.logger.Debug("execute", "request_id", req.GetRequestId(), "epoch", out.Epoch)
	return executeResponse(out), nil
}

func (s *service) execute(ctx context.Context, req *pb.ExecuteRequest) (metadata.Outcome, error) {
	if strings.TrimSpace(req.GetStatements()) == "" {
		return metadata.Outcome{}, status.Error(codes.InvalidArgument, "statements: no statement to execute")
	}
	parsed, err := cql.Parse(req.GetStatements())
	if err != nil {
		return metadata.Outcome{}, err
	}
	cmd := metadata.Command{
		RequestID:       req.GetRequestId(),
		Keyspace:        req.GetKeyspace(),
		Atomic:          req.GetAtomic(),
		Text:            req.GetStatements(),
		MaxMutationSize: s.maxMutationSize,
	}
	cur := s.sm.Current()
	if rec, ok := cur.Requests.Get(cmd.RequestID); ok {
		// A retry of a request this node has already applied.
		return rec.Outcome, rec.Err
	}
	if _, _, out, err := cur.ExecuteParsed(cmd, parsed, cur.Index); err != nil {
		// Refused on this node's view, before the log. The view may be
		// behind (a keyspace just created through another member), so
		// confirm with the leader (ReadIndex) and check once more before
		// refusing: only failing requests pay that round trip.
		rctx, cancel := s.withTimeout(ctx)
		_, rerr := s.srv.node.ReadIndex(rctx)
		cancel()
		if rerr != nil {
			return out, err
		}
		cur = s.sm.Current()
		if rec, ok := cur.Requests.Get(cmd.RequestID); ok {
			return rec.Outcome, rec.Err
		}
		if _, _, out, err := cur.ExecuteParsed(cmd, parsed, cur.Index); err != nil {
			return out, err
		}
	}
	return s.propose(ctx, cmd)
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

// view returns the metadata to answer a read from: the current one (after
// a ReadIndex round for linearizable reads), or the first at or past
// minEpoch (bounded by the request deadline).
func (s *service) view(ctx context.Context, minEpoch uint64, consistency string) (*metadata.ClusterMetadata, error) {
	if err := s.consistent(ctx, consistency); err != nil {
		return nil, err
	}
	cur := s.sm.Current()
	if minEpoch <= cur.Epoch {
		return cur, nil
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	m, err := s.sm.WaitEpoch(ctx, minEpoch)
	if err != nil {
		return nil, status.Error(codes.Unavailable, fmt.Sprintf("min_epoch %d: this node is at epoch %d: %v", minEpoch, m.Epoch, err))
	}
	return m, nil
}

func checkFormat(format string) error {
	switch format {
	case "", "json", "cql":
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "format %q: want \"cql\" or \"json\"", format)
}

// GetSchema returns every keyspace with its tables.
func (s *service) GetSchema(ctx context.Context, req *pb.GetSchemaRequest) (*pb.GetSchemaResponse, error) {
	if err := checkFormat(req.GetFormat()); err != nil {
		return nil, err
	}
	m, err := s.view(ctx, req.GetMinEpoch(), req.GetConsistency())
	if err != nil {
		return nil, err
	}
	d := m.Schema.Digest()
	resp := &pb.GetSchemaResponse{Epoch: m.Epoch, Keyspaces: []*pb.Keyspace{}, Digest: hex.EncodeToString(d[:])}
	for _, k := range m.Schema.Keyspaces() {
		resp.Keyspaces = append(resp.Keyspaces, keyspaceToProto(k, true))
	}
	if req.GetFormat() == "cql" {
		resp.Cql = schema.DescribeSchema(m.Schema)
	}
	return resp, nil
}

// GetKeyspace returns one keyspace with its tables.
func (s *service) GetKeyspace(ctx context.Context, req *pb.GetKeyspaceRequest) (*pb.GetKeyspaceResponse, error) {
	if err := checkFormat(req.GetFormat()); err != nil {
		return nil, err
	}
	m, err := s.view(ctx, req.GetMinEpoch(), req.GetConsistency())
	if err != nil {
		return nil, err
	}
	k, ok := m.Schema.Keyspace(req.GetKeyspace())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "keyspace %s does not exist (epoch %d)", req.GetKeyspace(), m.Epoch)
	}
	resp := &pb.GetKeyspaceResponse{Epoch: m.Epoch, Keyspace: keyspaceToProto(k, true)}
	if req.GetFormat() == "cql" {
		resp.Cql = schema.DescribeKeyspace(k)
	}
	return resp, nil
}

// GetTable returns one table.
func (s *service) GetTable(ctx context.Context, req *pb.GetTableRequest) (*pb.GetTableResponse, error) {
	if err := checkFormat(req.GetFormat()); err != nil {
		return nil, err
	}
	m, err := s.view(ctx, req.GetMinEpoch(), req.GetConsistency())
	if err != nil {
		return nil, err
	}
	if _, ok := m.Schema.Keyspace(req.GetKeyspace()); !ok {
		return nil, status.Errorf(codes.NotFound, "keyspace %s does not exist (epoch %d)", req.GetKeyspace(), m.Epoch)
	}
	t, ok := m.Schema.Table(req.GetKeyspace(), req.GetTable())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "table %s.%s does not exist (epoch %d)", req.GetKeyspace(), req.GetTable(), m.Epoch)
	}
	resp := &pb.GetTableResponse{Epoch: m.Epoch, Table: tableToProto(t)}
	if req.GetFormat() == "cql" {
		resp.Cql = schema.DescribeTable(t)
	}
	return resp, nil
}

// randomID returns 16 random bytes in hex.
func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// propose commits cmd and returns its outcome. It gives a command without
// a request id one, so that a proposal lost in a leader change can be
// proposed again without applying twice.
func (s *service) propose(ctx context.Context, cmd metadata.Command) (metadata.Outcome, error) {
	if cmd.RequestID == "" {
		cmd.RequestID = "server-" + randomID()
	}
	ctx, cancel := s.withTimeout(ctx)
	defer cancel()
	data := cmd.Marshal(nil)
	s.metrics.proposalsPending.Inc()
	defer s.metrics.proposalsPending.Dec()
	for {
		v, err := s.node.Propose(ctx, data)
		if errors.Is(err, raftlog.ErrLeaderChanged) {
			s.logger.Info("leader changed during a proposal; proposing again", "request_id", cmd.RequestID)
			continue
		}
		if err != nil {
			s.metrics.proposalsFailed.Inc()
			if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, raftlog.ErrNoLeader) {
				return metadata.Outcome{}, fmt.Errorf("%w: %w", errNotCommitted, err)
			}
			return metadata.Outcome{}, err
		}
		out, ok := v.(metadata.Outcome)
		if !ok {
			return metadata.Outcome{}, fmt.Errorf("api: unexpected apply result %T", v)
		}
		return out, nil
	}
}
