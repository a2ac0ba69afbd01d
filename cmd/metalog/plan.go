package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
	"github.com/metalog/metalog/member"
)

// planFlags are the flags plan and apply share.
type planFlags struct {
	files                             []string
	prune, dropColumns, allowRecreate bool
}

// keptHelp is the rule of what a plan keeps, as the help of plan and
// apply, the README and docs/planner.md say it.
const keptHelp = `Nothing the desired schema lacks is dropped unless asked: objects (tables,
types, indexes, functions, aggregates, triggers, views, and the keyspaces
named after the flags) are kept unless --prune, and the columns of a table
are kept unless --drop-columns (--prune alone keeps them).`

func (f *planFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&f.files, "file", "f", nil, "the desired schema as CQL DDL: a file, a directory (its .cql files in name order) or - for standard input; several -f make one schema, read in order")
	cmd.Flags().BoolVar(&f.prune, "prune", false, "drop the objects a covered keyspace has and the desired schema lacks (destructive); columns stay unless --drop-columns")
	cmd.Flags().BoolVar(&f.dropColumns, "drop-columns", false, "drop the columns a table has and its desired definition lacks (destructive)")
	cmd.Flags().BoolVar(&f.allowRecreate, "allow-recreate", false, "plan a change Cassandra cannot make in place as DROP + CREATE (destructive) instead of refusing it")
}

// request reads the desired schema and builds the Plan request for the
// keyspaces named.
func (f *planFlags) request(cmd *cobra.Command, keyspaces []string) (*pb.PlanRequest, error) {
	files, err := desiredFiles(f.files, cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	return &pb.PlanRequest{DesiredFiles: files, Keyspaces: keyspaces, Prune: f.prune, DropColumns: f.dropColumns, AllowRecreate: f.allowRecreate}, nil
}

// errOldMember is a plan answered without base_digest: by a member of an
// older build, which ignores desired_files and drop_columns (it would
// plan nothing, or drop columns), so its plan is not shown as this one's.
var errOldMember = errors.New("the member that answered is of an older build: its plan ignores desired_files and drop_columns (no base_digest in its answer); upgrade the members before planning with this metalog")

// requestPlan asks c for the plan of req, refusing one of an older member.
func requestPlan(ctx context.Context, c *client.Client, req *pb.PlanRequest) (*pb.PlanResponse, error) {
	p, err := c.Plan(ctx, req)
	if err == nil && p.BaseDigest == "" {
		return nil, errOldMember
	}
	return p, err
}

func newPlanCmd() *cobra.Command {
	var cf clientFlags
	var pf planFlags
	var asJSON, detailed bool
	var out string
	cmd := &cobra.Command{
		Use:   "plan -f desired.cql [-f more.cql | -f dir/ ...] [keyspace ...]",
		Short: "Print the DDL that turns the cluster's schema into the desired one, changing nothing",
		Long: `Plan the DDL that turns the cluster's schema (a linearizable read) into the
schema the -f files describe, read in order as one schema, and print it in
order: a comment with the epoch, a "-- warning:" line for every statement
that loses data and every guardrail the result would cross, a "-- note:"
line for what is kept or rebuilt, then the statements. The plan covers the
keyspaces the files create, or the keyspaces named; other keyspaces are
never touched. An object defined twice across the files is an error naming
both places.

` + keptHelp + `

The output is CQL that exec accepts. -o writes the plan to a file that
"apply PLANFILE" applies exactly, atomically, and only while the schema is
still at the planned epoch. --detailed-exitcode exits 0 when there is
nothing to do, 2 when changes are pending, 1 on an error.

A scoped reader (reader@shop) plans against the keyspaces in scope only,
as if the others did not exist.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := pf.request(cmd, args)
			if err != nil {
				return err
			}
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.PlanResponse, error) {
				return requestPlan(ctx, c, req)
			})
			if err != nil {
				return err
			}
			if out != "" {
				if err := newPlanFile(req, resp).write(out); err != nil {
					return fmt.Errorf("-o %s: %w (the plan was made, but not written)", out, err)
				}
			}
			if asJSON {
				err = printJSONLine(cmd.OutOrStdout(), resp)
			} else {
				printPlan(cmd.OutOrStdout(), resp)
			}
			if err == nil && detailed && len(resp.Statements) > 0 {
				return errChangesPending
			}
			return err
		},
	}
	cf.register(cmd)
	pf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as one JSON object (epoch, statements, warnings, notes, destructive, digest, base_digest)")
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 0 when there is nothing to do, 2 when changes are pending, 1 on an error")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the plan to this file, for \"metalog apply FILE\"")
	return cmd
}

// printPlan prints a plan as CQL: a comment with its epoch and what it
// does, the warnings and the notes as comments, then one statement a
// line, escaped as describe's CQL is (escapedCQL).
func printPlan(w io.Writer, p *pb.PlanResponse) {
	switch {
	case len(p.Statements) > 0:
		kind := "nothing is dropped"
		if p.Destructive {
			kind = "DESTRUCTIVE"
		}
		fmt.Fprintf(w, "-- plan at epoch %d: %d statement(s), %s; the schema it makes has digest %s\n", p.Epoch, len(p.Statements), kind, p.Digest)
	case len(p.Notes) > 0:
		fmt.Fprintf(w, "-- the schema at epoch %d needs no change: nothing to do\n", p.Epoch)
	default:
		fmt.Fprintf(w, "-- the schema at epoch %d already matches: nothing to do\n", p.Epoch)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "-- warning: %s\n", safetext.Line(warn))
	}
	for _, note := range p.Notes {
		fmt.Fprintf(w, "-- note: %s\n", safetext.Line(note))
	}
	if len(p.Statements) > 0 {
		fmt.Fprint(w, escapedCQL(member.JoinStatements(p.Statements)+"\n", "plan --json"))
	}
}

func newApplyCmd() *cobra.Command {
	var cf clientFlags
	var pf planFlags
	var yes bool
	cmd := &cobra.Command{
		Use:   "apply (-f desired.cql [-f more.cql | -f dir/ ...] [keyspace ...] | PLANFILE)",
		Short: "Apply the desired schema, or a plan file, atomically if the schema has not moved",
		Long: `With -f: plan as "metalog plan" does, print the plan, ask for confirmation
(unless --yes), then send the plan's statements as one atomic request with
if_epoch set to the planned epoch: what was shown is what lands, at one
epoch, and if anyone changed the schema in between nothing applies
(FailedPrecondition, exit 1): plan again. When the outcome is unknown
(exit 3), running apply again is safe: it plans from the schema as it is
then, and if_epoch keeps a second request from applying after the first.

With PLANFILE (written by "plan -o"): apply exactly that plan, in the same
way, only if the cluster's schema is still at the plan's epoch and the plan
makes there the digest it was reviewed with; otherwise nothing applies
(exit 1): plan again. The file's options are those it was planned with.

` + keptHelp + `

` + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(pf.files) == 0 {
				return applyPlanFile(cmd, &cf, &pf, args, yes)
			}
			req, err := pf.request(cmd, args)
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(ctx context.Context, c *client.Client) error {
				plan, err := requestPlan(ctx, c, req)
				if err != nil {
					return describeErr(err)
				}
				return applyReviewed(ctx, cmd, c, &cf, plan, yes, "")
			})
		},
	}
	cf.register(cmd)
	pf.register(cmd)
	cmd.Flags().BoolVar(&yes, "yes", false, "apply without asking")
	return cmd
}

// applyPlanFile applies the plan file args names: exactly its
// statements, atomically at its epoch, once the cluster showed (a dry run
// at that epoch) that they make there the digest the plan was reviewed
// with.
func applyPlanFile(cmd *cobra.Command, cf *clientFlags, pf *planFlags, args []string, yes bool) error {
	switch {
	case len(args) != 1:
		return errors.New("give the desired schema (-f desired.cql [keyspace ...]) or one plan file (metalog apply plan.json)")
	case pf.prune || pf.dropColumns || pf.allowRecreate:
		return fmt.Errorf("%s: a plan file applies as it was planned: --prune, --drop-columns and --allow-recreate go with -f, or with plan -o", args[0])
	}
	path := args[0]
	f, err := readPlanFile(path)
	if err != nil {
		return err
	}
	return withClient(cmd, cf, func(ctx context.Context, c *client.Client) error {
		return applyReviewed(ctx, cmd, c, cf, f.response(), yes, path)
	})
}

// applyReviewed prints plan p, asks for confirmation unless yes, and
// applies its statements as one atomic request at its epoch. For a plan
// read from file planPath, a dry run at that epoch first checks that the
// statements make the reviewed digest there, so that the plan of another
// cluster, or of a history that changed (restored, forced), is refused.
func applyReviewed(ctx context.Context, cmd *cobra.Command, c *client.Client, cf *clientFlags, p *pb.PlanResponse, yes bool, planPath string) error {
	printPlan(cmd.OutOrStdout(), p)
	if len(p.Statements) == 0 {
		return nil
	}
	if !yes {
		if err := confirm(cmd, fmt.Sprintf("apply these %d statement(s) at epoch %d? [y/N] ", len(p.Statements), p.Epoch)); err != nil {
			return err
		}
	}
	epoch := p.Epoch
	req := &pb.ExecuteRequest{Statements: member.JoinStatements(p.Statements), Atomic: true, IfEpoch: &epoch}
	if planPath != "" {
		dry := &pb.ExecuteRequest{Statements: req.Statements, Atomic: true, IfEpoch: &epoch, DryRun: true}
		resp, err := c.Execute(ctx, dry)
		if err != nil {
			return planMoved(planPath, p.Epoch, describeErr(err), err)
		}
		if resp.Digest != p.Digest {
			return fmt.Errorf("%s: at epoch %d this cluster's schema is not the one the plan was made from: the plan would make digest %s there, not the reviewed %s (a plan of another cluster, or a history restored or forced since); nothing was applied: plan again against this cluster", planPath, p.Epoch, resp.Digest, p.Digest)
		}
	}
	resp, err := c.Execute(ctx, req)
	if err != nil {
		return planMoved(planPath, p.Epoch, commandError(cmd, cf.endpoints, err), err)
	}
	printExecResult(cmd.OutOrStdout(), resp)
	return nil
}

// planMoved adds to shown, the error of applying the plan (of file
// planPath, "" for a plan just made) that the cluster answered err, what
// to do when it is an if_epoch conflict: the schema moved since the plan's
// epoch, and nothing was applied.
func planMoved(planPath string, epoch uint64, shown, err error) error {
	if !errors.Is(err, client.ErrIfEpochConflict) {
		return shown
	}
	what := "the plan"
	if planPath != "" {
		what = "the plan in " + planPath
	}
	return fmt.Errorf("%w\n%s was made at epoch %d and applies only there: plan again", shown, what, epoch)
}

// confirm asks question on standard error and reads the answer from
// standard input: anything but y or yes, or no answer, applies nothing.
func confirm(cmd *cobra.Command, question string) error {
	fmt.Fprint(cmd.ErrOrStderr(), question)
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	case "":
		if err != nil {
			return errors.New("not applied: no answer on standard input (pass --yes to apply without asking)")
		}
	}
	return errors.New("not applied")
}
