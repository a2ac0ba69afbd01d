package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

func newWatchCmd() *cobra.Command {
	var cf clientFlags
	var fromEpoch uint64
	var asJSON, progress bool
	cmd := &cobra.Command{
		Use:   "watch [keyspace[.table]]",
		Short: "Print the schema changes as they are applied, until interrupted",
		Long: `Print each schema change as the cluster applies it, one line per statement:

  epoch 12  2026-12-01T10:00:00Z  alice  CREATE TABLE shop.orders

(the epoch, when the change was received, who asked, and what it changed),
until interrupted (Ctrl-C). A keyspace argument follows that keyspace, its
tables, types and indexes; keyspace.table one table and its indexes. Names
are read as in CQL, as by describe.

Without --from-epoch the watch starts now; --from-epoch N prints the
changes after epoch N first (0: from the first one). When a member no
longer keeps the changes asked for, it says so and prints the whole schema
at the epoch it can go on from, then the changes after it.

A scoped reader (reader@shop) sees only the changes of the keyspaces in
scope, and the cluster's own (SET GUARDRAILS); its resync describes only
those keyspaces.

When the member watched goes away the watch goes on from the last epoch
printed on another of --endpoints, with no change missed or printed twice;
a member restarting (refusing connections meanwhile) is tried again too.
It ends with an error when no member has taken the watch for --timeout
after a failure, or a member refuses the watch; the error says the epoch
to go on from with --from-epoch.

--json prints each message of the stream as one JSON object per line
(progress messages included): {"type":"events"|"progress"|"resync",
"epoch":N,"events":[...],"cql":"...","keyspaces":[...]}, field names as
in the HTTP API; each event has its object before and after structured
(before_object, after_object), and a derived event (an index a LIKE ...
WITH INDEXES copied, a table a DROP KEYSPACE dropped) the statement that
caused it (cause). A resync's keyspaces are its schema as GetSchema gives
it.
--progress prints the progress messages members send while nothing changes
("epoch N  progress") in the text output too.

Control and bidirectional formatting characters in what is printed are
escaped as history escapes them; --json prints the exact text.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, table, err := nameArgs("watch", args)
			if err != nil {
				return err
			}
			req := &pb.WatchRequest{Keyspace: ks, Table: table}
			if cmd.Flags().Changed("from-epoch") {
				req.FromEpoch = proto.Uint64(fromEpoch)
			}
			c, err := cf.open()
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, stop := interruptible(cmd)
			defer stop()
			return follow(ctx, c, req, cf.timeout, cmd.OutOrStdout(), asJSON, progress)
		},
	}
	cf.registerWithTimeout(cmd, "how long to keep trying the members when none answers (after each lost connection); the watch itself runs until interrupted")
	cmd.Flags().Uint64Var(&fromEpoch, "from-epoch", 0, "print the changes after this epoch first (0: from the first one; default: from now)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each message as one JSON object per line")
	cmd.Flags().BoolVar(&progress, "progress", false, "print progress messages too")
	return cmd
}

// follow prints the watch of req on c until ctx ends (nil) or the watch
// does (its error, with the epoch to go on from): when no member has
// taken it for giveUpAfter (--timeout) after a failure, or a member
// refused it.
func follow(ctx context.Context, c *client.Client, req *pb.WatchRequest, giveUpAfter time.Duration, w io.Writer, asJSON, progress bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends Follow's goroutine when printing fails
	seen, last := false, uint64(0)
	for r := range c.Follow(ctx, req, client.WatchRetry{GiveUpAfter: giveUpAfter}) {
		if r.Err != nil {
			return watchEnded(r.Err, seen, last)
		}
		var err error
		if asJSON {
			err = printJSONLine(w, r.Response)
		} else {
			err = printWatchMessage(w, r.Response, progress)
		}
		if err != nil {
			return err
		}
		seen, last = true, r.Response.Epoch
	}
	return nil
}

// watchEnded is the error of a watch that ended with err after it had
// printed up to epoch last (when seen).
func watchEnded(err error, seen bool, last uint64) error {
	err = describeErr(err)
	if !seen {
		return err
	}
	return fmt.Errorf("%w (the watch got to epoch %d: go on with --from-epoch %d)", err, last, last)
}
