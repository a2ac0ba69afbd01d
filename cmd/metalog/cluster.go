package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
	"github.com/metalog/metalog/internal/safetext"
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
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List members with their role, term, applied index and epoch; exits 1 when one is unreachable or split off",
		Long: `List the members, as the member answering sees them, each with what it
reports of itself: role, term, commit and applied index, epoch, schema digest
and alarms. It exits 1 after the table when a member could not be reached,
answers for another cluster (its ERROR says which; a CLUSTER column shows
every member's cluster id then), or lists other members or roles than the
answering member (ERROR "other members: ..."). --json prints the answer as
one JSON object (each member's cluster_id included).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.ListMembersResponse, error) {
				return c.ListMembers(ctx, &pb.ListMembersRequest{})
			})
			if err != nil {
				return err
			}
			var problems memberProblems
			if asJSON {
				problems = findProblems(resp)
				err = printJSONLine(cmd.OutOrStdout(), resp)
			} else {
				problems, err = printMembers(cmd.OutOrStdout(), resp)
			}
			if err != nil {
				return err
			}
			return problems.err(len(resp.Members))
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer as one JSON object")
	return cmd
}

// memberProblems are the members cluster status exits 1 for, by name.
type memberProblems struct {
	unreachable, split []string
}

// findProblems sorts out the members of resp that could not be reached
// and those split off: answering for another cluster, or with another
// configuration (their Error says which).
func findProblems(resp *pb.ListMembersResponse) memberProblems {
	var p memberProblems
	for _, m := range resp.Members {
		switch {
		case otherCluster(resp, m) || (m.Reachable && m.Error != ""):
			p.split = append(p.split, m.Name)
		case !m.Reachable:
			p.unreachable = append(p.unreachable, m.Name)
		}
	}
	return p
}

// otherCluster reports whether member m answered for another cluster than
// the one resp is the member list of.
func otherCluster(resp *pb.ListMembersResponse, m *pb.Member) bool {
	return m.ClusterId != "" && resp.ClusterId != "" && m.ClusterId != resp.ClusterId
}

// err is the error cluster status exits with, nil when every member is
// reachable and of one cluster.
func (p memberProblems) err(total int) error {
	var parts []string
	if len(p.unreachable) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d members unreachable: %s", len(p.unreachable), total, strings.Join(p.unreachable, ", ")))
	}
	if len(p.split) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d members split off (another cluster, or other members): %s", len(p.split), total, strings.Join(p.split, ", ")))
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// printMembers prints the cluster status table and returns the members
// it exits 1 for. Of those that could not be reached only what the
// answering member knows is shown (name, id, peer address, role, leader);
// the columns their own status would fill are "-", and ERROR says why.
// ALARMS lists a member's raised alarms (NOSPACE), empty when none. A
// CLUSTER column, only when the members do not all answer for the same
// cluster, shows each one's cluster id. Text cells are escaped on their
// line (safetext.Line): a tab or a new line in one would shift the
// columns or start a row.
func printMembers(w io.Writer, resp *pb.ListMembersResponse) (memberProblems, error) {
	showCluster := false
	for _, m := range resp.Members {
		showCluster = showCluster || otherCluster(resp, m)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cluster := func(m *pb.Member) string {
		if !showCluster {
			return ""
		}
		return cmp.Or(m.ClusterId, "-") + "\t"
	}
	header := "NAME\tID\tPEER\tGRPC\tROLE\tLEADER\tTERM\tCOMMIT\tAPPLIED\tEPOCH\tDIGEST\tALARMS\tERROR"
	if showCluster {
		header = "NAME\tID\tCLUSTER\tPEER\tGRPC\tROLE\tLEADER\tTERM\tCOMMIT\tAPPLIED\tEPOCH\tDIGEST\tALARMS\tERROR"
	}
	fmt.Fprintln(tw, header)
	for _, m := range resp.Members {
		leader := ""
		if m.Leader {
			leader = "*"
		}
		if !m.Reachable {
			why := "unreachable: " + m.Error
			if otherCluster(resp, m) {
				why = "another cluster: " + m.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s%s\t-\t%s\t%s\t-\t-\t-\t-\t-\t-\t%s\n", safetext.Line(m.Name), m.Id, cluster(m), safetext.Line(m.PeerAddr), m.Role, leader, safetext.Line(why))
			continue
		}
		digest := m.Digest
		if len(digest) > 12 {
			digest = digest[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", safetext.Line(m.Name), m.Id, cluster(m), safetext.Line(m.PeerAddr), safetext.Line(m.GrpcAddr),
			m.Role, leader, m.Term, m.CommitIndex, m.AppliedIndex, m.Epoch, digest, safetext.Line(strings.Join(m.Alarms, ",")), safetext.Line(m.Error))
	}
	return findProblems(resp), tw.Flush()
}

func newClusterAddCmd() *cobra.Command {
	var cf clientFlags
	var name, peerAddr string
	var observer bool
	cmd := &cobra.Command{
		Use:   "add --name N --peer-addr H:P [--observer]",
		Short: "Add a member under a new id (a learner, promoted to voter once caught up and answering, or with --observer never); then start it with serve --join on an empty data dir",
		Long: `Add a member as a learner (promoted to voter once caught up), then start
it with serve --join.

With --observer the member is an observer: it receives the log and the
snapshots like a learner, serves every read and watch (a linearizable
read asks the leader for a read index, as a follower's does) and
forwards the writes sent to it to the leader, but it is never promoted:
it never votes and never counts toward a quorum or an election, so
observers add read and feed capacity without slowing commits, and losing
every one of them leaves the voters' quorum as it was. Remove one with
cluster remove, as any member.

With peer TLS, the new member's peer certificate must name it (subject CN
or a DNS SAN equal to --name) and the host of --peer-addr (an IP or DNS
SAN), and allow both server and client use: the members accept no other.

Exit codes: 0 added, 1 failed (not added), 3 outcome unknown: the change
was proposed and may still apply; "metalog cluster status" shows whether
it did, and adding it again answers AlreadyExists once it has.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.AddMemberResponse, error) {
				return c.AddMember(ctx, &pb.AddMemberRequest{Name: name, PeerAddr: peerAddr, Observer: observer})
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added %s (id %s, peer %s) as %s\nstart it with: %s\n",
				resp.Member.Name, resp.Member.Id, resp.Member.PeerAddr, withArticle(resp.Member.Role), joinCommand(resp.Member, cf.endpoints))
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "the new member's name: up to 64 bytes, without ',', '=', whitespace, control or bidirectional characters")
	cmd.Flags().StringVar(&peerAddr, "peer-addr", "", "the address peers reach the new member on")
	cmd.Flags().BoolVar(&observer, "observer", false, "add an observer: it serves reads and watches and forwards writes, but never votes nor counts toward a quorum")
	return cmd
}

// withArticle is role with its indefinite article: "a learner", "an
// observer".
func withArticle(role string) string {
	if role == "" {
		return "a learner" // a member of a release without roles in its answer
	}
	if strings.IndexByte("aeiou", role[0]) >= 0 {
		return "an " + role
	}
	return "a " + role
}

// joinCommand is the serve command that starts member m, just added, on a
// new data dir: the addresses only it can know are placeholders, and it
// joins through the first of the endpoints.
func joinCommand(m *pb.Member, endpoints string) string {
	join, _, _ := strings.Cut(endpoints, ",")
	return fmt.Sprintf("metalog serve --name %s --data-dir DIR --grpc-addr HOST:PORT --http-addr HOST:PORT --cql-addr HOST:PORT --peer-addr %s --join %s",
		m.Name, m.PeerAddr, strings.TrimSpace(join))
}

func newClusterRemoveCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "remove NAME|ID",
		Short: "Remove a member (the leader included; refused if it would leave too few reachable voters); the removed member stops",
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
