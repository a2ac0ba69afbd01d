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
		Use: "describe [keyspace[.table]]",
		Long: `Print the whole schema, one keyspace and its tables, or one table, as CQL
that re-creates it. Names are read as in CQL: unquoted ones are lowercased,
"Quoted" ones keep their case, so a table describe prints as shop."MixedCase"
is described with: metalog describe 'shop."MixedCase"'.`,
		Short: "Print the schema, a keyspace or a table as CQL",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ks, table string
			if len(args) == 1 {
				var err error
				if ks, table, err = parseDescribeArg(args[0]); err != nil {
					return err
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
