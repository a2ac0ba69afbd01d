package member

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/metalog/metalog/metadata"
	"github.com/metalog/metalog/schema"
	"github.com/metalog/metalog/schema/cql"
	"github.com/metalog/metalog/schema/plan"
)

// PlanRequest asks for the DDL from the current schema to a desired one.
type PlanRequest struct {
	// Desired is the schema wanted, as CQL DDL; or Files.
	Desired string
	// Files is the schema wanted as several texts read in order as one
	// (plan.LoadSources), instead of Desired: errors name the file.
	Files []plan.Source
	// Keyspaces limits the plan to these keyspaces; empty: those the
	// desired schema creates.
	Keyspaces []string
	// Prune drops the objects a covered keyspace has and the desired
	// schema lacks.
	Prune bool
	// DropColumns drops the columns a table has and its desired
	// definition lacks; without it they are kept.
	DropColumns bool
	// AllowRecreate plans a change Cassandra cannot make in place as
	// DROP + CREATE instead of refusing the plan.
	AllowRecreate bool
	// Visible, when set, is the reader's scope: the plan starts from the
	// schema of only the keyspaces it reports true for (Reads.Read), so a
	// keyspace outside it is planned as if it did not exist, Prune drops
	// nothing outside it, and the check and Digest are those of that scope.
	Visible func(keyspace string) bool
}

// PlanResult is a plan: the statements to apply, in order, at Epoch.
type PlanResult struct {
	// Epoch is the epoch of the schema the plan starts from: apply it
	// with if_epoch set to it.
	Epoch uint64
	// Statements are CQL statements without the ';'.
	Statements []string
	// Warnings name what the plan loses (plan.Plan.Warnings) and every
	// guardrail warning applying the plan would raise.
	Warnings []string
	// Notes are what the plan keeps or rebuilds (plan.Plan.Notes).
	Notes []string
	// Destructive is true when a statement drops data.
	Destructive bool
	// Digest is the digest of the schema the plan leads to.
	Digest [32]byte
	// BaseDigest is the digest of the schema at Epoch, the one the plan
	// starts from (of the reader's scope, as Digest).
	BaseDigest [32]byte
}

// Plan plans the DDL that turns the schema, as of a linearizable read,
// into req.Desired, and checks it as the cluster would apply it (one
// atomic request at the plan's epoch), so a plan the guardrails or the
// schema rules would refuse is refused here with the same error. It
// changes nothing.
func (w *Writes) Plan(ctx context.Context, req PlanRequest) (PlanResult, error) {
	sources := req.Files
	switch {
	case len(sources) > 0 && req.Desired != "":
		return PlanResult{}, &ArgumentError{Field: "desired", Msg: "plan: the request gives the desired schema twice, as desired and as desired_files: give one of them"}
	case len(sources) == 0:
		sources = []plan.Source{{Text: req.Desired}}
	}
	desired, err := plan.LoadSources(sources)
	if err != nil {
		return PlanResult{}, &ArgumentError{Field: "desired", Msg: err.Error(), Err: err} // "plan: desired schema: ..."
	}
	if err := consistent(ctx, w.node, w.cfg.RequestTimeout, Linearizable); err != nil {
		return PlanResult{}, err
	}
	state := w.sm.Current().Visible(req.Visible)
	p, err := plan.Diff(state.Schema, desired, plan.Options{Keyspaces: req.Keyspaces, Prune: req.Prune, DropColumns: req.DropColumns, AllowRecreate: req.AllowRecreate})
	var impossible *plan.ImpossibleError
	if errors.As(err, &impossible) {
		return PlanResult{}, &PlanRefusedError{Err: err}
	}
	if err != nil {
		return PlanResult{}, &ArgumentError{Field: "desired", Msg: "plan: " + err.Error(), Err: err}
	}
	base := state.Schema.Digest()
	res := PlanResult{Epoch: state.Epoch, Warnings: p.Warnings, Notes: p.Notes, Destructive: p.Destructive, Digest: base, BaseDigest: base}
	for _, st := range p.Statements {
		res.Statements = append(res.Statements, st.CQL)
	}
	if len(res.Statements) == 0 {
		return res, nil
	}
	cmd := metadata.Command{Text: JoinStatements(res.Statements), Atomic: true, MaxMutationSize: w.cfg.MaxMutationSize,
		IfEpoch: state.Epoch, HasIfEpoch: true, Rules: schema.CurrentRules, Cluster: idCluster(schema.CurrentRules, w.node.ClusterID())}
	parsed, err := cql.Parse(cmd.Text)
	if err != nil {
		return PlanResult{}, fmt.Errorf("member: the plan does not parse (a planner bug): %w", err)
	}
	next, out, err := state.DryRun(cmd, parsed)
	if err != nil {
		return PlanResult{}, planRefused(res.Statements, err)
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

// ErrPlanRefused is matched (errors.Is) by a *PlanRefusedError.
var ErrPlanRefused = errors.New("member: plan refused")

// PlanRefusedError is a plan that cannot be made or would not apply: the
// desired schema needs changes that cannot be made in place
// (*plan.ImpossibleError), or a planned statement would be refused as the
// cluster would apply it (a guardrail, a schema rule). Its code is
// FailedPrecondition: the plan does not fit the current schema or
// settings.
type PlanRefusedError struct {
	// Statement is the planned statement that would be refused and
	// Position its 1-based place in the plan; "" and 0 when no statement
	// was planned (a change that cannot be made in place).
	Statement string
	Position  int
	// Err is why: a *plan.ImpossibleError, or the refusal of Statement.
	Err error
}

// Error says why; a refused statement is named by its cause.
func (e *PlanRefusedError) Error() string {
	if e.Statement == "" {
		return e.Err.Error()
	}
	return "the plan would be refused: " + e.Err.Error()
}

// Is matches ErrPlanRefused.
func (e *PlanRefusedError) Is(target error) bool { return target == ErrPlanRefused }

// Unwrap returns the cause.
func (e *PlanRefusedError) Unwrap() error { return e.Err }

// planRefused is the *PlanRefusedError of err, the refusal of the planned
// statements stmts as one atomic request.
func planRefused(stmts []string, err error) error {
	pe := &PlanRefusedError{Err: err}
	var se *metadata.StatementError
	switch {
	case errors.As(err, &se) && se.Position >= 1 && se.Position <= len(stmts):
		pe.Position, pe.Statement = se.Position, stmts[se.Position-1]
	case len(stmts) == 1:
		pe.Position, pe.Statement = 1, stmts[0]
	}
	return pe
}
