package main

import (
	"context"
	"fmt"
	"io"
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
		Short: "List members with their role, term, applied index and epoch; exits 1 when one is unreachable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.ListMembersResponse, error) {
				return c.ListMembers(ctx, &pb.ListMembersRequest{})
			})
			if err != nil {
				return err
			}
			unreachable, err := printMembers(cmd.OutOrStdout(), resp.Members)
			if err != nil {
				return err
			}
			if len(unreachable) > 0 {
				return fmt.Errorf("%d of %d members unreachable: %s", len(unreachable), len(resp.Members), strings.Join(unreachable, ", "))
			}
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

// printMembers prints the cluster status table and returns the names of
// the members that could not be reached. Of those only what the answering
// member knows is shown (name, id, peer address, role, leader); the
// columns their own status would fill are "-", and ERROR says why. ALARMS
// lists a member's raised alarms (NOSPACE), empty when none.
func printMembers(w io.Writer, members []*pb.Member) (unreachable []string, err error) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tPEER\tGRPC\tROLE\tLEADER\tTERM\tCOMMIT\tAPPLIED\tEPOCH\tDIGEST\tALARMS\tERROR")
	for _, m := range members {
		leader := ""
		if m.Leader {
			leader = "*"
		}
		if !m.Reachable {
			unreachable = append(unreachable, m.Name)
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t%s\t%s\t-\t-\t-\t-\t-\t-\tunreachable: %s\n", m.Name, m.Id, m.PeerAddr, m.Role, leader, m.Error)
			continue
		}
		digest := m.Digest
		if len(digest) > 12 {
			digest = digest[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Id, m.PeerAddr, m.GrpcAddr,
			m.Role, leader, m.Term, m.CommitIndex, m.AppliedIndex, m.Epoch, digest, strings.Join(m.Alarms, ","), m.Error)
	}
	return unreachable, tw.Flush()
}

func newClusterAddCmd() *cobra.Command {
	var cf clientFlags
	var name, peerAddr string
	cmd := &cobra.Command{
		Use:   "add --name N --peer-addr H:P",
		Short: "Add a member (as a learner, promoted to voter once caught up); then start it with serve --join",
		Long: `Add a member as a learner (promoted to voter once caught up), then start
it with serve --join.

Exit codes: 0 added, 1 failed (not added), 3 outcome unknown: the change
was proposed and may still apply; "metalog cluster status" shows whether
it did, and adding it again answers AlreadyExists once it has.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.AddMemberResponse, error) {
				return c.AddMember(ctx, &pb.AddMemberRequest{Name: name, PeerAddr: peerAddr})
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s (id %s, peer %s) as a learner\nstart it with: %s\n",
				resp.Member.Name, resp.Member.Id, resp.Member.PeerAddr, joinCommand(resp.Member, cf.endpoints))
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "the new member's name")
	cmd.Flags().StringVar(&peerAddr, "peer-addr", "", "the address peers reach the new member on")
	return cmd
}

// joinCommand is the serve command that starts member m, just added, on a
// new data dir: the addresses only it can know are placeholders, and it
// joins through the first of the endpoints.
func joinCommand(m *pb.Member, endpoints string) string {
	join, _, _ := strings.Cut(endpoints, ",")
	return fmt.Sprintf("metalog serve --name %s --data-dir DIR --grpc-addr HOST:PORT --http-addr HOST:PORT --peer-addr %s --join %s",
		m.Name, m.PeerAddr, strings.TrimSpace(join))
}

func newClusterRemoveCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "remove NAME|ID",
		Short: "Remove a member (the leader included); the removed member stops",
		Long: `Remove a member (the leader included); the removed member stops.

Exit codes: 0 removed, 1 failed (not removed), 3 outcome unknown: the
change was proposed and may still apply; "metalog cluster status" shows
whether it did, and removing it again answers NotFound once it has.`,
		Args: cobra.ExactArgs(1),
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
