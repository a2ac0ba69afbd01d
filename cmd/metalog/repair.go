package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func newClusterRepairCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "repair NAME|ID",
		Short: "Rebuild a member's schema store from its own raft log and newest snapshot",
		Long: `Rebuild a member's metadata, its schema store included, from that member's own
raft log and newest snapshot, for a member whose schema store went wrong (its
digest differs from the others' at the same epoch; see cluster check). The
member keeps serving: while the repair runs, reads on that member keep
answering from the metadata of before, and the rebuilt state is published
once, when the replay is done. The command then checks the cluster again. If
the member still differs (its own newest snapshot already held the
divergence), it fails with FailedPrecondition: remove the member, delete its
data dir, add it again and start it with serve --join, and it is rebuilt
from the leader's snapshot.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := unary(cmd, &cf, func(ctx context.Context, c *client.Client) (*pb.RepairMemberResponse, error) {
				return c.RepairMember(ctx, &pb.RepairMemberRequest{Id: args[0]})
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "repaired %s: epoch %d digest %s\n", resp.Name, resp.Epoch, resp.Digest)
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
