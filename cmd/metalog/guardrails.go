package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
)

func newGuardrailsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guardrails",
		Short: "Show and change the cluster's guardrails and their per-keyspace overrides",
	}
	cmd.AddCommand(newGuardrailsGetCmd(), newGuardrailsSetCmd())
	return cmd
}

// printGuardrails prints the values with where each comes from
// (default, cluster, or keyspace:SCOPE for a per-keyspace override), then
// the overrides (title says which), then the epoch.
func printGuardrails(cmd *cobra.Command, epoch uint64, values []*pb.GuardrailValue, title string, overrides []*pb.KeyspaceGuardrailOverride) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tDEFAULT\tCHANGED\tSOURCE")
	for _, v := range values {
		changed := ""
		if v.Changed {
			changed = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safetext.Line(v.Name), safetext.Line(show(v.Value)), safetext.Line(show(v.Default)), changed, safetext.Line(v.Source))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(overrides) > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "%s (%d):\n", title, len(overrides))
		tw = tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
		for _, o := range overrides {
			fmt.Fprintf(tw, "  %s\t%s\n", safetext.Line(o.Scope), safetext.Line(overrideText(o)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "epoch %d\n", epoch)
	return nil
}

// overrideText is an override's settings as name=value, sorted, on one
// line.
func overrideText(o *pb.KeyspaceGuardrailOverride) string {
	parts := make([]string, 0, len(o.Set))
	for name, v := range o.Set {
		parts = append(parts, name+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// show prints an empty value (an empty property set) visibly.
func show(v string) string {
	if v == "" {
		return "[]"
	}
	return v
}

func newGuardrailsGetCmd() *cobra.Command {
	var cf clientFlags
	var keyspace string
	cmd := &cobra.Command{
		Use:   "get [--keyspace K]",
		Short: "Print every guardrail setting with its source; * marks those that differ from the defaults",
		Long: `Print every guardrail setting: its value, default, and source (default,
cluster, or keyspace:SCOPE when a per-keyspace override sets it). Without
--keyspace the cluster's settings and a list of the per-keyspace overrides;
with --keyspace K the values that hold in keyspace K (K may also be a
pattern such as tenant_*: the values under that override).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.GetGuardrailsResponse, error) {
				return c.GetGuardrails(ctx, &pb.GetGuardrailsRequest{Keyspace: keyspace})
			})
			if err != nil {
				return err
			}
			title := "keyspace overrides"
			if keyspace != "" {
				title = "override applying to " + keyspace
			}
			return printGuardrails(cmd, resp.Epoch, resp.Guardrails, title, resp.Overrides)
		},
	}
	cmd.Flags().StringVar(&keyspace, "keyspace", "", "show the values that hold in this keyspace (or under this pattern's override)")
	cf.register(cmd)
	return cmd
}

func newGuardrailsSetCmd() *cobra.Command {
	var cf clientFlags
	var keyspace, requestID string
	var reset bool
	cmd := &cobra.Command{
		Use:   "set [--keyspace SCOPE [--reset]] NAME=VALUE...",
		Short: "Change guardrails through the raft log, e.g. set tables_warn_threshold=500 tables_fail_threshold=800",
		Long: `Change guardrails through the raft log. Without --keyspace the cluster's
settings; with --keyspace SCOPE the per-keyspace override of SCOPE, a
keyspace name (shop) or a prefix pattern (tenant_*), which may set the
count guardrails inside a keyspace: tables_*, columns_per_table_*,
secondary_indexes_per_table_*, fields_per_udt_*,
materialized_views_per_table_* and vector_dimensions_*. NAME=default
removes a setting from the override; --reset removes the whole override
(before applying any NAME=VALUE given with it).

  metalog guardrails set --keyspace shop tables_fail_threshold=50
  metalog guardrails set --keyspace 'tenant_*' tables_fail_threshold=10
  metalog guardrails set --keyspace shop tables_fail_threshold=default
  metalog guardrails set --keyspace shop --reset

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !reset {
				return fmt.Errorf("give at least one NAME=VALUE (or --keyspace SCOPE --reset)")
			}
			if reset && keyspace == "" {
				return fmt.Errorf("--reset needs --keyspace: the scope whose override to remove")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// Without --request-id the client gives the request a random id,
			// so that its retries never apply twice.
			req := &pb.SetGuardrailsRequest{Set: map[string]string{}, Keyspace: keyspace, ResetOverride: reset, RequestId: requestID}
			for _, a := range args {
				name, value, ok := strings.Cut(a, "=")
				if !ok || name == "" {
					return fmt.Errorf("%q: want NAME=VALUE", a)
				}
				if _, dup := req.Set[name]; dup {
					return fmt.Errorf("%s given twice", name)
				}
				req.Set[name] = value
			}
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.SetGuardrailsResponse, error) {
				return c.SetGuardrails(ctx, req)
			})
			if err != nil {
				return err
			}
			var overrides []*pb.KeyspaceGuardrailOverride
			if resp.Override != nil {
				overrides = append(overrides, resp.Override)
			} else if keyspace != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "keyspace %s has no override left: the cluster's settings hold there\n", keyspace)
			}
			return printGuardrails(cmd, resp.Epoch, resp.Guardrails, "override", overrides)
		},
	}
	cmd.Flags().StringVar(&keyspace, "keyspace", "", "change the per-keyspace override of this keyspace or pattern (tenant_*) instead of the cluster's settings")
	cmd.Flags().BoolVar(&reset, "reset", false, "with --keyspace: remove the scope's whole override")
	cmd.Flags().StringVar(&requestID, "request-id", "", "request id; a retry with the same id is answered with the first result and never applies twice (default: a random id)")
	cf.register(cmd)
	return cmd
}
