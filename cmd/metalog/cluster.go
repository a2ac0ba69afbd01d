package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show and change the cluster's members",
	}
	cmd.AddCommand(newClusterStatusCmd(), newClusterAddCmd(), newClusterRemoveCmd(), newClusterCheckCmd())
	cmd.AddCommand(newClusterRepairCmd())
	return cmd
}

func newClusterStatusCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List members with their role, term, applied index and epoch",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.ListMembersResponse, error) {
				return c.ListMembers(ctx, &pb.ListMembersRequest{})
			})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tID\tPEER\tGRPC\tROLE\tLEADER\tTERM\tCOMMIT\tAPPLIED\tEPOCH\tDIGEST\tERROR")
			for _, m := range resp.Members {
				leader := ""
				if m.Leader {
					leader = "*"
				}
				digest := m.Digest
				if len(digest) > 12 {
					digest = digest[:12]
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", m.Name, m.Id, m.PeerAddr, m.GrpcAddr,
					m.Role, leader, m.Term, m.CommitIndex, m.AppliedIndex, m.Epoch, digest, m.Error)
			}
			return tw.Flush()
		},
	}
	cf.register(cmd)
	return cmd
}

func newClusterAddCmd() *cobra.Command {
	var cf clientFlags
	var name, peerAddr string
	cmd := &cobra.Command{
		Use:   "add --name N --peer-addr H:P",
		Short: "Add a member (as a learner, promoted to voter once caught up); then start it with serve --join",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.AddMemberResponse, error) {
				return c.AddMember(ctx, &pb.AddMemberRequest{Name: name, PeerAddr: peerAddr})
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s (id %s, peer %s) as a learner\nstart it with: metalog serve --name %s --peer-addr %s --join %s\n",
				resp.Member.Name, resp.Member.Id, resp.Member.PeerAddr, resp.Member.Name, resp.Member.PeerAddr, strings.Split(cf.endpoints, ",")[0])
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "the new member's name")
	cmd.Flags().StringVar(&peerAddr, "peer-addr", "", "the address peers reach the new member on")
	return cmd
}

func newClusterRemoveCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "remove NAME|ID",
		Short: "Remove a member (the leader included); the removed member stops",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.RemoveMemberResponse, error) {
				return c.RemoveMember(ctx, &pb.RemoveMemberRequest{Id: args[0]})
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", args[0])
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
