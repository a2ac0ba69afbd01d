package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

func newDescribeCmd() *cobra.Command {
	var cf clientFlags
	var minEpoch, atEpoch uint64
	var consistency string
	var raw bool
	cmd := &cobra.Command{
		Use: "describe [keyspace[.table|.function]]",
		Long: `Print the whole schema, one keyspace and its tables, or one table, as CQL
that re-creates it. A name that is no table but names functions or
aggregates prints every overload of them. Names are read as in CQL: unquoted ones are lowercased,
"Quoted" ones keep their case, so a table describe prints as shop."MixedCase"
is described with: metalog describe 'shop."MixedCase"'.

With --at-epoch N it prints the schema as it was at epoch N (0: before the
first change), rebuilt from the history the member keeps; an epoch older
than that is refused with OutOfRange, naming the oldest epoch kept.

A token or certificate whose reader role is scoped (reader@shop) sees only
the keyspaces in scope; the others are not found, as if they did not exist.

A string constant (a comment, say) may hold characters a terminal obeys
instead of showing: control characters (ESC, CR, ...) and bidirectional
formatting ones (U+202E, ...). They are printed escaped (\x1b, \u202e),
after a comment saying so, and such output does not re-create them (CQL
has no escapes); --raw prints the text exactly as stored, for a file.`,
		Short: "Print the schema, a keyspace, a table or a function as CQL",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, table, err := nameArgs("describe", args)
			if err != nil {
				return err
			}
			o := &client.DescribeOptions{MinEpoch: minEpoch, Consistency: consistency}
			if cmd.Flags().Changed("at-epoch") {
				o.AtEpoch = &atEpoch
			}
			text, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (string, error) {
				return c.Describe(ctx, ks, table, o)
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if raw {
				w = safetext.Raw(w)
			} else {
				text = escapedCQL(text, "describe --raw")
			}
			fmt.Fprint(w, text)
			if text != "" && !strings.HasSuffix(text, "\n") {
				fmt.Fprintln(w)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().Uint64Var(&minEpoch, "min-epoch", 0, "wait until the member has applied this epoch")
	cmd.Flags().Uint64Var(&atEpoch, "at-epoch", 0, "print the schema as it was at this epoch (default: as it is now)")
	cmd.Flags().StringVar(&consistency, "consistency", "local", "local (this member's state) or linearizable (confirmed with the leader)")
	cmd.Flags().BoolVar(&raw, "raw", false, "print the text exactly as stored, control and bidirectional characters unescaped (for a file, not a terminal)")
	return cmd
}
