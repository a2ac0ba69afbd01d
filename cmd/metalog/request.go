package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

func newRequestCmd() *cobra.Command {
	var cf clientFlags
	var afterIndex uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "request ID [--after-index N]",
		Short: "Say what became of a request id: applied (with its result), not applied, or not known",
		Long: `Say what became of a request id, after a linearizable read: the first line
is the member's answer in words; then, for an applied request, one line per
statement as exec prints them, its warnings and its error.

  applied       the log applied it at that epoch (log index): its result
                is final, and a retry under the id gets the same answer
  not applied   it had not applied as of that epoch, and the cluster
                would remember it if it had. A proposal of it still in
                flight (on a leader waiting for its quorum) can still apply
                later: to settle it, send the request again with this id
                (exec --request-id ID): it applies at most once
  not known     the cluster remembers the last 10000 request ids and may
                have forgotten this one: it never applied, or applied
                before the oldest one remembered
  not visible   a reader scoped to keyspaces is told only of requests
                whose every statement applied in its keyspaces

--after-index N (an outcome-unknown message prints it) says the request
cannot have applied at or before log index N, so that an id the cluster
would still remember had it applied answers "not applied" rather than "not
known". It needs the reader role, as history does.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.GetRequestOutcomeResponse, error) {
				return c.GetRequestOutcome(ctx, &pb.GetRequestOutcomeRequest{RequestId: args[0], AfterIndex: afterIndex})
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONLine(cmd.OutOrStdout(), resp)
			}
			printRequestOutcome(cmd.OutOrStdout(), resp)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().Uint64Var(&afterIndex, "after-index", 0, "a log index the request cannot have applied at or before (from the outcome-unknown message)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as one JSON object (state, epoch, index, results, warnings, error_code, error, as_of_epoch, message, ...)")
	return cmd
}

// printRequestOutcome prints the answer's message, then for an applied
// request its statements (as exec prints them), warnings and error.
func printRequestOutcome(w io.Writer, resp *pb.GetRequestOutcomeResponse) {
	fmt.Fprintln(w, safetext.Line(resp.Message))
	if resp.State != "applied" {
		return
	}
	printExecResult(w, &pb.ExecuteResponse{Epoch: resp.Epoch, Results: resp.Results, Warnings: resp.Warnings})
	if resp.Error != "" {
		fmt.Fprintf(w, "error: %s: %s\n", safetext.Line(resp.ErrorCode), safetext.Line(resp.Error))
	}
}
