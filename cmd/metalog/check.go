package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func newClusterCheckCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check in one round that every member has the same schema; exits 1 when they disagree",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.CheckClusterResponse, error) {
				return c.CheckCluster(ctx, &pb.CheckClusterRequest{})
			})
			if err != nil {
				return err
			}
			verdict := "yes"
			if !resp.Agreement {
				verdict = "NO"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "agreement: %s (reference %s, %d status calls)\n", verdict, resp.Reference, resp.Rpcs)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tEPOCH\tAPPLIED\tDIGEST\tSTATE\tDETAIL")
			for _, m := range resp.Members {
				digest := m.Digest
				if len(digest) > 12 {
					digest = digest[:12]
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Epoch, m.AppliedIndex, digest, m.State, m.Detail)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if !resp.Agreement {
				return errors.New("the members do not agree")
			}
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
