package member

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/metalog/metalog/metadata"
)

// Consistency levels of Reads.Read.
const (
	// Local answers from this member's own state (the default, "").
	Local = "local"
	// Linearizable confirms with the leader (raft ReadIndex) and waits
	// until this member applied everything committed before the read.
	Linearizable = "linearizable"
)

// Read returns the metadata to answer a read from: the current one (after
// a ReadIndex round for a Linearizable read), or the first at or past
// minEpoch, waiting for it until the request deadline. The metadata is
// immutable and the caller's to keep.
//
// visible, when not nil, is the reader's scope (a scoped reader's, from
// access.Grants.Visible): the schema answered holds only the keyspaces it
// reports true for, as if the others did not exist
// (metadata.ClusterMetadata.Visible). Nil answers the published metadata
// itself, at no cost.
func (r *Reads) Read(ctx context.Context, minEpoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error) {
	md, err := r.read(ctx, minEpoch, consistency)
	if err != nil {
		return nil, err
	}
	return md.Visible(visible), nil
}

// read is Read of every keyspace.
func (r *Reads) read(ctx context.Context, minEpoch uint64, consistency string) (*metadata.ClusterMetadata, error) {
	if err := r.consistent(ctx, consistency); err != nil {
		return nil, err
	}
	cur := r.machine.Current()
	if minEpoch <= cur.Epoch {
		return cur, nil
	}
	wait, cancel := withTimeout(ctx, r.timeout)
	defer cancel()
	md, err := r.machine.WaitEpoch(wait, minEpoch)
	if err != nil {
		return nil, waitError(ctx, minEpoch, md.Epoch, r.timeout, err)
	}
	return md, nil
}

// waitError is the answer to a read whose wait for minEpoch failed with
// err, with the member at epoch, in one sentence: what was asked, where
// this member is, why the wait ended. The caller's own deadline is
// DeadlineExceeded (the answer is on time, within it: the wait ends a
// little before it); the member's request_timeout (requestTimeout), which
// bounds a request without a deadline, is Unavailable, since another
// member may be further along.
func waitError(ctx context.Context, minEpoch, epoch uint64, requestTimeout time.Duration, err error) error {
	we := &WaitError{MinEpoch: minEpoch, Epoch: epoch, End: "when the wait failed: " + err.Error(), Err: ErrUnavailable}
	_, callerDeadline := ctx.Deadline()
	switch {
	case errors.Is(err, context.DeadlineExceeded) && callerDeadline:
		we.End, we.Err = "when the request deadline passed", context.DeadlineExceeded
	case errors.Is(err, context.DeadlineExceeded):
		we.End = fmt.Sprintf("after waiting request_timeout (%v), the bound of a request without a deadline of its own: another member may be further along", requestTimeout)
	case errors.Is(err, context.Canceled):
		we.End, we.Err = "when the request was canceled", context.Canceled
	case errors.Is(err, metadata.ErrStateMachineClosed):
		we.End = "when it shut down"
	}
	return we
}

// WaitError refuses a read whose wait for its min_epoch ended before this
// member reached that epoch.
type WaitError struct {
	// MinEpoch is the epoch waited for; Epoch is this member's.
	MinEpoch, Epoch uint64
	// End says when the wait ended ("when the request deadline passed").
	End string
	// Err is the kind of the end: context.DeadlineExceeded when the
	// caller's own deadline passed, context.Canceled when the caller
	// canceled, ErrUnavailable otherwise (this member's request_timeout,
	// its shutting down, a failed wait: another member may be further
	// along).
	Err error
}

// Error names both epochs and when the wait ended.
func (e *WaitError) Error() string {
	return fmt.Sprintf("min_epoch %d: this member was still at epoch %d %s", e.MinEpoch, e.Epoch, e.End)
}

// Unwrap returns the kind of the end.
func (e *WaitError) Unwrap() error { return e.Err }

// ErrEpochAhead is matched (errors.Is) by an *EpochAheadError.
var ErrEpochAhead = errors.New("member: the epoch asked for is ahead of the cluster's")

// EpochAheadError refuses a read of the schema at an epoch the cluster
// has not made (as of a linearizable read): there is no such schema yet.
// Its code is OutOfRange: the same read succeeds once the cluster has
// made the epoch.
type EpochAheadError struct {
	// At is the epoch asked for; Epoch is the cluster's.
	At, Epoch uint64
	// HistoryID is the history Epoch counts in.
	HistoryID uint64
}

// Error names both epochs and what to do.
func (e *EpochAheadError) Error() string {
	return fmt.Sprintf("at_epoch %d: the cluster is at epoch %d (history %s), confirmed with the leader, and has not made epoch %d yet: "+
		"read at an epoch it has made, or use min_epoch to wait for the epoch",
		e.At, e.Epoch, FormatHistoryID(e.HistoryID), e.At)
}

// Is matches ErrEpochAhead.
func (e *EpochAheadError) Is(target error) bool { return target == ErrEpochAhead }

// readIndexer confirms with the leader that this member has applied
// everything committed before the call: raft's ReadIndex, which
// *raftlog.Node implements.
type readIndexer interface {
	// ReadIndex returns once the member has applied the commit index the
	// leader confirmed, or fails.
	ReadIndex(ctx context.Context) (uint64, error)
}

// consistent applies a read's consistency level before the state is read.
func (r *Reads) consistent(ctx context.Context, consistency string) error {
	return consistent(ctx, r.node, r.timeout, consistency)
}

// consistent applies consistency with node before a read of the state:
// nothing for a local read, a ReadIndex round, bounded by timeout when ctx
// has no deadline, for a linearizable one.
func consistent(ctx context.Context, node readIndexer, timeout time.Duration, consistency string) error {
	switch consistency {
	case "", Local:
		return nil
	case Linearizable:
		if brokenLinearizableReads {
			return nil // the deliberately broken test build (brokenreads.go)
		}
		ctx, cancel := withTimeout(ctx, timeout)
		defer cancel()
		if _, err := node.ReadIndex(ctx); err != nil {
			return &OpError{Op: "linearizable read", Err: err}
		}
		return nil
	}
	return argumentError("consistency", "consistency %q: want \"local\" or \"linearizable\"", consistency)
}
