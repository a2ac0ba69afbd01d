package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/metalog/metalog/api/metalogpb"
	"github.com/metalog/metalog/client"
)

// maxHistoryPage is the most events the server sends in one History page.
const maxHistoryPage = 10000

// historyHelp is history's --help text.
const historyHelp = `Print the schema changes the members keep (history_retention_epochs), oldest
first, one block per statement: the line watch prints, the request id,
then the statement as it was sent, indented:

  epoch 12  2026-12-01T10:00:00Z  alice  CREATE TABLE shop.orders  request 7d1e0c9a-3b7f-4c1e-9a52-0f6b1d2e3c4a
      CREATE TABLE shop.orders (id uuid PRIMARY KEY, total decimal)

A keyspace argument keeps the changes of that keyspace, its tables, types
and indexes; keyspace.table those of one table and its indexes. Names are
read as in CQL, as by describe.

With neither --from-epoch nor --limit it prints everything kept: once
retention (history_retention_epochs) has pruned older changes, it starts
at the oldest epoch kept and says so on stderr. --from-epoch N prints the
changes after epoch N; --to-epoch M stops at epoch M (included); --limit K
alone prints the newest K changes, and with --from-epoch at most K changes
after it. The statements of one atomic request share an epoch and are
printed together, so a limit may be passed to finish an epoch. An explicit
--from-epoch older than the members keep is refused with OutOfRange,
naming the oldest epoch kept.

For an audit, --principal P keeps the changes P made (as history prints
the principal), --since T and --until T those made at or after T and
before T (RFC 3339 as 2026-12-01T10:00:00Z, a date as 2026-12-01 for its
midnight UTC, or a duration back from now as 24h; by the clock of the
member that proposed the change, and changes of unknown time are left
out), and --kind K those of one statement kind ("CREATE TABLE", any
case; "SET GUARDRAILS" for guardrail changes). They combine with each
other and with the keyspace[.table] argument; the member filters, so
--limit counts the changes that match.

--diff prints, after each statement, what it did to the object's DESCRIBE
text, as a unified diff with every line shown (" " kept, "-" before only,
"+" after only), indented like the statement:

  epoch 13  2026-12-01T10:05:00Z  alice  ALTER TABLE shop.orders  request 1c9e...
      ALTER TABLE shop.orders ADD note text
      --- before
      +++ after
       CREATE TABLE shop.orders (
           id uuid PRIMARY KEY,
      -    total decimal
      +    total decimal,
      +    note text
       ) WITH ...

A create has no before and a drop no after; for SET GUARDRAILS the text is
the settings, name=value a line.

A scoped reader (reader@shop) sees only the changes of the keyspaces in
scope, and the cluster's own (SET GUARDRAILS).

--json prints each change as one JSON object per line, field names as in
the HTTP API.

Control and bidirectional formatting characters in what is printed (a
comment, a request id) are escaped as Go's strconv.Quote does (\x1b, \r,
\u202e), so that stored text cannot act on the terminal; a request id or
principal holding one, or white space, is printed quoted. --json prints
the exact text (JSON escapes them).`

func newHistoryCmd() *cobra.Command {
	var cf clientFlags
	var fromEpoch, toEpoch, limit uint64
	var asJSON, diff bool
	var principal, since, until, kind string
	cmd := &cobra.Command{
		Use:   "history [keyspace[.table]]",
		Short: "Print the schema changes the cluster keeps, oldest first",
		Long:  historyHelp,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, table, err := nameArgs("history", args)
			if err != nil {
				return err
			}
			filters, err := readHistoryFilters(principal, kind, since, until, time.Now())
			if err != nil {
				return err
			}
			q := historyQuery{keyspace: ks, table: table, limit: limit, filters: filters}
			if cmd.Flags().Changed("from-epoch") {
				q.from = proto.Uint64(fromEpoch)
			}
			if cmd.Flags().Changed("to-epoch") {
				q.to = proto.Uint64(toEpoch)
			}
			if err := q.validate(cmd.Flags().Changed("limit")); err != nil {
				return err
			}
			emit, err := historyPrinter(cmd.OutOrStdout(), asJSON, diff)
			if err != nil {
				return err
			}
			_, err = unary(cmd, &cf, func(ctx context.Context, c *client.Client) (struct{}, error) {
				if q.from == nil && q.limit == 0 {
					return struct{}{}, q.everythingKept(ctx, c.History, emit, cmd.ErrOrStderr())
				}
				return struct{}{}, q.run(ctx, c.History, emit)
			})
			return err
		},
	}
	cf.register(cmd)
	cmd.Flags().Uint64Var(&fromEpoch, "from-epoch", 0, "print the changes after this epoch (0: from the first one kept)")
	cmd.Flags().Uint64Var(&toEpoch, "to-epoch", 0, "print the changes up to this epoch, included (default: up to now)")
	cmd.Flags().Uint64Var(&limit, "limit", 0, "print at most this many changes: the newest ones without --from-epoch (default: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each change as one JSON object per line")
	cmd.Flags().BoolVar(&diff, "diff", false, "after each statement, print what it changed: a diff of the object's DESCRIBE text before and after")
	cmd.Flags().StringVar(&principal, "principal", "", "print only the changes made by this principal (as history prints it: token:ci, a certificate's CN, anonymous)")
	cmd.Flags().StringVar(&since, "since", "", "print only the changes made at or after this time: RFC 3339, a date (midnight UTC) or a duration back from now (24h)")
	cmd.Flags().StringVar(&until, "until", "", "print only the changes made before this time (same forms as --since)")
	cmd.Flags().StringVar(&kind, "kind", "", `print only the changes of this statement kind ("CREATE TABLE", "drop index", "SET GUARDRAILS")`)
	return cmd
}

// historyQuery is what the history flags ask for.
type historyQuery struct {
	from, to        *uint64 // nil: not given
	limit           uint64  // 0: no limit
	keyspace, table string
	filters         historyFilters
}

// historyPrinter returns what prints each event, as the flags ask: JSON
// lines, blocks, or blocks with a diff.
func historyPrinter(w io.Writer, asJSON, diff bool) (func(*pb.Event) error, error) {
	switch {
	case asJSON && diff:
		return nil, fmt.Errorf("--diff with --json: give one; each JSON line holds the change's before and after already")
	case asJSON:
		return func(ev *pb.Event) error { return printJSONLine(w, ev) }, nil
	case diff:
		return func(ev *pb.Event) error { return printHistoryDiff(w, ev) }, nil
	}
	return func(ev *pb.Event) error { return printHistoryEvent(w, ev) }, nil
}

// validate checks the flags' values; limitGiven says --limit was given.
func (q *historyQuery) validate(limitGiven bool) error {
	switch {
	case limitGiven && q.limit == 0:
		return fmt.Errorf("--limit 0: want at least 1 (leave --limit out for all)")
	case q.from == nil && q.limit > maxHistoryPage:
		return fmt.Errorf("--limit %d: the newest changes come in one page of at most %d; give --from-epoch to page through more", q.limit, maxHistoryPage)
	case q.from != nil && q.to != nil && *q.to <= *q.from:
		return fmt.Errorf("--to-epoch %d: want an epoch after --from-epoch %d (the changes printed are those of the epochs in (from, to])", *q.to, *q.from)
	}
	return nil
}

// historyCall is Client.History.
type historyCall func(context.Context, *pb.HistoryRequest, ...grpc.CallOption) (*pb.HistoryResponse, error)

// run calls history for q, page after page following next_epoch, and
// passes each event to emit, oldest first.
func (q *historyQuery) run(ctx context.Context, history historyCall, emit func(*pb.Event) error) error {
	if q.from == nil && q.limit > 0 {
		return q.newest(ctx, history, emit)
	}
	req := &pb.HistoryRequest{FromEpoch: proto.Uint64(0), ToEpoch: q.to, Keyspace: q.keyspace, Table: q.table}
	q.filters.apply(req)
	if q.from != nil {
		req.FromEpoch = proto.Uint64(*q.from)
	}
	printed := uint64(0)
	for {
		if q.limit > 0 {
			req.Limit = uint32(min(q.limit-printed, maxHistoryPage))
		}
		resp, err := history(ctx, req)
		if err != nil {
			return err
		}
		for _, ev := range resp.Events {
			if err := emit(ev); err != nil {
				return err
			}
		}
		printed += uint64(len(resp.Events))
		if resp.NextEpoch == nil || q.limit > 0 && printed >= q.limit {
			return nil
		}
		if *resp.NextEpoch <= *req.FromEpoch {
			return fmt.Errorf("history: the member's next page starts at epoch %d, not after %d, where the last one started; stopping", *resp.NextEpoch, *req.FromEpoch)
		}
		req.FromEpoch = proto.Uint64(*resp.NextEpoch)
	}
}

// newest prints the newest q.limit events, in one page, oldest first.
func (q *historyQuery) newest(ctx context.Context, history historyCall, emit func(*pb.Event) error) error {
	req := &pb.HistoryRequest{ToEpoch: q.to, Keyspace: q.keyspace, Table: q.table, Limit: uint32(q.limit)}
	q.filters.apply(req)
	resp, err := history(ctx, req)
	if err != nil {
		return err
	}
	// Oldest first, whatever order the page comes in; the statements of
	// one epoch keep theirs.
	events := slices.Clone(resp.Events)
	slices.SortStableFunc(events, func(a, b *pb.Event) int { return cmp.Compare(a.Epoch, b.Epoch) })
	for _, ev := range events {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return nil
}
