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
	file                 string
	prune, allowRecreate bool
}

func (f *planFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.file, "file", "f", "", "the desired schema as CQL DDL (- for standard input)")
	cmd.Flags().BoolVar(&f.prune, "prune", false, "drop what a covered keyspace has and the desired schema lacks (destructive)")
	cmd.Flags().BoolVar(&f.allowRecreate, "allow-recreate", false, "plan a change Cassandra cannot make in place as DROP + CREATE (destructive) instead of refusing it")
}

// request reads the desired schema and builds the Plan request for the
// keyspaces named.
func (f *planFlags) request(cmd *cobra.Command, keyspaces []string) (*pb.PlanRequest, error) {
	if f.file == "" {
		return nil, errors.New("no desired schema: give -f desired.cql (- for standard input)")
	}
	desired, err := statementsFrom("", f.file, cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	return &pb.PlanRequest{Desired: desired, Keyspaces: keyspaces, Prune: f.prune, AllowRecreate: f.allowRecreate}, nil
}

func newPlanCmd() *cobra.Command {
	var cf clientFlags
	var pf planFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan -f desired.cql [keyspace ...]",
		Short: "Print the DDL that turns the cluster's schema into desired.cql, changing nothing",
		Long: `Plan the DDL that turns the cluster's schema (a linearizable read) into the
schema desired.cql describes, in order, with a warning for every destructive
statement and every guardrail the result would cross. The plan covers the
keyspaces the file creates, or the keyspaces named; other keyspaces are
never touched. Objects a covered keyspace has and the file lacks are kept
unless --prune. The output is CQL that exec accepts; apply sends it as one
atomic request that lands only if the schema is still at the planned epoch.

A scoped reader (reader@shop) plans against the keyspaces in scope only,
as if the others did not exist.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := pf.request(cmd, args)
			if err != nil {
				return err
			}
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.PlanResponse, error) {
				return c.Plan(ctx, req)
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONLine(cmd.OutOrStdout(), resp)
			}
			printPlan(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	cf.register(cmd)
	pf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as one JSON object (epoch, statements, warnings, destructive, digest)")
	return cmd
}

// printPlan prints a plan as CQL: a comment with its epoch and what it
// does, the warnings as comments, then one statement a line, escaped as
// describe's CQL is (escapedCQL).
func printPlan(w io.Writer, p *pb.PlanResponse) {
	if len(p.Statements) == 0 {
		fmt.Fprintf(w, "-- the schema at epoch %d already matches: nothing to do\n", p.Epoch)
		return
	}
	kind := "nothing is dropped"
	if p.Destructive {
		kind = "DESTRUCTIVE"
	}
	fmt.Fprintf(w, "-- plan at epoch %d: %d statement(s), %s; the schema it makes has digest %s\n", p.Epoch, len(p.Statements), kind, p.Digest)
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "-- warning: %s\n", safetext.Line(warn))
	}
	fmt.Fprint(w, escapedCQL(member.JoinStatements(p.Statements)+"\n", "plan --json"))
}

func newApplyCmd() *cobra.Command {
	var cf clientFlags
	var pf planFlags
	var yes bool
	cmd := &cobra.Command{
		Use:   "apply -f desired.cql [keyspace ...]",
		Short: "Plan, show, confirm (or --yes), then apply the plan atomically if the schema has not moved",
		Long: `Plan as "metalog plan" does, print the plan, ask for confirmation (unless
--yes), then send the plan's statements as one atomic request with
if_epoch set to the planned epoch: what was reviewed is what lands, and if
anyone changed the schema in between nothing applies (FailedPrecondition,
exit 1): plan again. When the outcome is unknown (exit 3), running apply
again is safe: it plans from the schema as it is then, and if_epoch keeps
a second request from applying after the first.

` + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := pf.request(cmd, args)
			if err != nil {
				return err
			}
			c, err := cf.open()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), cf.timeout)
			defer cancel()
			plan, err := c.Plan(ctx, req)
			if err != nil {
				return describeErr(err)
			}
			printPlan(cmd.OutOrStdout(), plan)
			if len(plan.Statements) == 0 {
				return nil
			}
			if !yes {
				if err := confirm(cmd, fmt.Sprintf("apply these %d statement(s) at epoch %d? [y/N] ", len(plan.Statements), plan.Epoch)); err != nil {
					return err
				}
			}
			epoch := plan.Epoch
			resp, err := c.Execute(ctx, &pb.ExecuteRequest{Statements: member.JoinStatements(plan.Statements), Atomic: true, IfEpoch: &epoch})
			if err != nil {
				return commandError(cmd, cf.endpoints, err)
			}
			printExecResult(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	cf.register(cmd)
	pf.register(cmd)
	cmd.Flags().BoolVar(&yes, "yes", false, "apply without asking")
	return cmd
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
