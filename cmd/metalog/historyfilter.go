package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/metalog/metalog/api/metalogpb"
)

// historyFilters are the audit filters of history (--principal, --since,
// --until, --kind), sent in the request as HistoryRequest's fields so that
// the member filters before it pages: a page holds up to its limit of
// matching changes, and next_epoch still follows the epochs read.
type historyFilters struct {
	principal, kind string
	since, until    *timestamppb.Timestamp // nil: not given
}

// apply sets f's fields in req.
func (f historyFilters) apply(req *pb.HistoryRequest) {
	req.Principal, req.Kind, req.Since, req.Until = f.principal, f.kind, f.since, f.until
}

// parseHistoryTime reads the value of --since or --until (flag): an RFC
// 3339 time (2026-12-01T10:00:00Z, with a zone), a date (2026-12-01, its
// midnight UTC), or a duration back from now (90m, 24h), as an auditor
// asks "the last day".
func parseHistoryTime(flag, v string, now time.Time) (*timestamppb.Timestamp, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return timestamppb.New(t), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return timestamppb.New(t), nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return timestamppb.New(now.Add(-d)), nil
	}
	return nil, fmt.Errorf("--%s %q: want an RFC 3339 time (2026-12-01T10:00:00Z), a date (2026-12-01, midnight UTC) or a duration back from now (90m, 24h)", flag, v)
}

// readHistoryFilters reads the filter flags' values; since and until are
// "" when not given.
func readHistoryFilters(principal, kind, since, until string, now time.Time) (historyFilters, error) {
	f := historyFilters{principal: principal, kind: strings.TrimSpace(kind)}
	var err error
	if since != "" {
		if f.since, err = parseHistoryTime("since", since, now); err != nil {
			return f, err
		}
	}
	if until != "" {
		if f.until, err = parseHistoryTime("until", until, now); err != nil {
			return f, err
		}
	}
	if f.since != nil && f.until != nil && !f.until.AsTime().After(f.since.AsTime()) {
		return f, fmt.Errorf("--until %s is not after --since %s: the changes printed are those made at or after --since and before --until",
			f.until.AsTime().UTC().Format(time.RFC3339), f.since.AsTime().UTC().Format(time.RFC3339))
	}
	return f, nil
}

// maxPrunedRetries is how often plain history starts again from the
// oldest epoch kept when retention prunes more while it reads.
const maxPrunedRetries = 3

// everythingKept runs q (no --from-epoch, no --limit: everything kept)
// from the first epoch the member keeps. A member whose retention pruned
// the history refuses epoch 0 with OutOfRange; everythingKept then asks
// for the oldest epoch kept (a page of one newest change answers it) and
// starts there, saying so on note, the terminal's stderr.
func (q *historyQuery) everythingKept(ctx context.Context, history historyCall, emit func(*pb.Event) error, note io.Writer) error {
	from, last := uint64(0), uint64(0) // last: the epoch of the last change printed
	printed := func(ev *pb.Event) error {
		last = ev.Epoch
		return emit(ev)
	}
	for try := 0; ; try++ {
		q.from = &from
		err := q.run(ctx, history, printed)
		if status.Code(err) != codes.OutOfRange || try == maxPrunedRetries {
			return err
		}
		probe := &pb.HistoryRequest{ToEpoch: q.to, Keyspace: q.keyspace, Table: q.table, Limit: 1}
		resp, perr := history(ctx, probe)
		if perr != nil {
			return fmt.Errorf("%w (asking for the oldest epoch kept then failed: %w)", err, perr)
		}
		if resp.OldestEpoch <= from+1 {
			return err
		}
		// Pages never split an epoch: what follows the last epoch
		// printed, or the oldest kept when retention pruned past it.
		from = max(resp.OldestEpoch-1, last)
		fmt.Fprintf(note, "history: the members keep the changes from epoch %d on (retention pruned the older ones); printing from there\n", resp.OldestEpoch)
	}
}
