package member

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/plan"
)

// PlanRequest asks for the DDL from the current schema to a desired one.
type PlanRequest struct {
	// Desired is the schema wanted, as CQL DDL.
	Desired string
	// Keyspaces limits the plan to these keyspaces; empty: those Desired
	// creates.
	Keyspaces []string
	// Prune drops what a covered keyspace has and Desired lacks.
	Prune bool
	// AllowRecreate plans a change Cassandra cannot make in place as
	// DROP + CREATE instead of refusing the plan.
	AllowRecreate bool
	// Visible, when set, is the reader's view: the plan starts from the
	// schema of only the keyspaces it reports true for (View), so a
	// keyspace outside it is planned as if it did not exist, Prune drops
	// nothing outside it, and the check and Digest are those of that view.
	Visible func(keyspace string) bool
}

// PlanResult is a plan: the statements to apply, in order, at Epoch.
type PlanResult struct {
	// Epoch is the epoch of the schema the plan starts from: apply it
	// with if_epoch set to it.
	Epoch uint64
	// Statements are CQL statements without the ';'.
	Statements []string
	// Warnings name every destructive statement and every guardrail
	// warning applying the plan would raise.
	Warnings []string
	// Destructive is true when a statement drops data.
	Destructive bool
	// Digest is the digest of the schema the plan leads to.
	Digest [32]byte
}

// Plan plans the DDL that turns the schema, as of a linearizable read,
// into req.Desired, and checks it as the cluster would apply it (one
// atomic request at the plan's epoch), so a plan the guardrails or the
// schema rules would refuse is refused here with the same error. It
// changes nothing.
func (m *Member) Plan(ctx context.Context, req PlanRequest) (PlanResult, error) {
	desired, err := plan.Load(req.Desired)
	if err != nil {
		return PlanResult{}, status.Errorf(codes.InvalidArgument, "desired schema: %v", err)
	}
	view, err := m.View(ctx, 0, Linearizable, req.Visible)
	if err != nil {
		return PlanResult{}, err
	}
	p, err := plan.Diff(view.Schema, desired, plan.Options{Keyspaces: req.Keyspaces, Prune: req.Prune, AllowRecreate: req.AllowRecreate})
	var impossible *plan.ImpossibleError
	if errors.As(err, &impossible) {
		return PlanResult{}, status.Error(codes.FailedPrecondition, err.Error())
	}
	if err != nil {
		return PlanResult{}, status.Errorf(codes.InvalidArgument, "plan: %v", err)
	}
	res := PlanResult{Epoch: view.Epoch, Warnings: p.Warnings, Destructive: p.Destructive, Digest: view.Schema.Digest()}
	for _, st := range p.Statements {
		res.Statements = append(res.Statements, st.CQL)
	}
	if len(res.Statements) == 0 {
		return res, nil
	}
	cmd := metadata.Command{Text: JoinStatements(res.Statements), Atomic: true, MaxMutationSize: m.cfg.MaxMutationSize,
		IfEpoch: view.Epoch, HasIfEpoch: true, Rules: schema.CurrentRules, Cluster: idCluster(schema.CurrentRules, m.node.ClusterID())}
	parsed, err := cql.Parse(cmd.Text)
	if err != nil {
		return PlanResult{}, fmt.Errorf("member: the plan does not parse (a planner bug): %w", err)
	}
	next, out, err := view.DryRun(cmd, parsed)
	if err != nil {
		return PlanResult{}, fmt.Errorf("the plan would be refused: %w", err)
	}
	for _, w := range out.Warnings {
		res.Warnings = append(res.Warnings, w.Message)
	}
	res.Digest = next.Schema.Digest()
	return res, nil
}

// JoinStatements joins statements into one request's text, a statement a
// line, as apply sends a plan.
func JoinStatements(stmts []string) string {
	return strings.Join(stmts, ";\n") + ";"
}
