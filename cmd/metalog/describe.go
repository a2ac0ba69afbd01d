package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/client"
)

func newDescribeCmd() *cobra.Command {
	var cf clientFlags
	var minEpoch uint64
	var consistency string
	cmd := &cobra.Command{
		Use:   "describe [keyspace[.table]]",
		Short: "Print the schema, a keyspace or a table as CQL",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ks, table string
			if len(args) == 1 {
				var ok bool
				ks, table, ok = strings.Cut(args[0], ".")
				if ks == "" || (ok && table == "") {
					return fmt.Errorf("describe %q: want keyspace or keyspace.table", args[0])
				}
			}
			text, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (string, error) {
				return c.Describe(ctx, ks, table, &client.DescribeOptions{MinEpoch: minEpoch, Consistency: consistency})
			})
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), text)
			if text != "" && !strings.HasSuffix(text, "\n") {
				fmt.Fprintln(cmd.OutOrStdout())
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().Uint64Var(&minEpoch, "min-epoch", 0, "wait until the member has applied this epoch")
	cmd.Flags().StringVar(&consistency, "consistency", "local", "local (this member's view) or linearizable (confirmed with the leader)")
	return cmd
}
