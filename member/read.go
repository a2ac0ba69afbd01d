package member

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/metalog/metalog/metadata"
)

// Consistency levels of View.
const (
	// Local answers from this member's own view (the default, "").
	Local = "local"
	// Linearizable confirms with the leader (raft ReadIndex) and waits
	// until this member applied everything committed before the read.
	Linearizable = "linearizable"
)

// View returns the metadata to answer a read from: the current one (after
// a ReadIndex round for a Linearizable read), or the first at or past
// minEpoch, waiting for it until the request deadline. The metadata is
// immutable and the caller's to keep.
//
// visible, when not nil, is the reader's view (a scoped reader's, from
// access.Grants.Visible): the schema answered holds only the keyspaces it
// reports true for, as if the others did not exist
// (metadata.ClusterMetadata.Visible). Nil answers the published metadata
// itself, at no cost.
func (m *Member) View(ctx context.Context, minEpoch uint64, consistency string, visible func(keyspace string) bool) (*metadata.ClusterMetadata, error) {
	md, err := m.view(ctx, minEpoch, consistency)
	if err != nil {
		return nil, err
	}
	return md.Visible(visible), nil
}

// view is View of every keyspace.
func (m *Member) view(ctx context.Context, minEpoch uint64, consistency string) (*metadata.ClusterMetadata, error) {
	if err := m.consistent(ctx, consistency); err != nil {
		return nil, err
	}
	cur := m.sm.Current()
	if minEpoch <= cur.Epoch {
		return cur, nil
	}
	ctx, cancel := withTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	md, err := m.sm.WaitEpoch(ctx, minEpoch)
	if err != nil {
		// One sentence: what was asked, where this member is, why the
		// wait ended (WaitEpoch's own error says the epochs again).
		end := "when the wait failed: " + err.Error()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			end = "when the request deadline passed"
		case errors.Is(err, context.Canceled):
			end = "when the request was canceled"
		case errors.Is(err, metadata.ErrStateMachineClosed):
			end = "when it shut down"
		}
		return nil, status.Errorf(codes.Unavailable, "min_epoch %d: this member was still at epoch %d %s", minEpoch, md.Epoch, end)
	}
	return md, nil
}

// consistent applies a read's consistency level before the view is taken.
func (m *Member) consistent(ctx context.Context, consistency string) error {
	switch consistency {
	case "", Local:
		return nil
	case Linearizable:
		if brokenLinearizableReads {
			return nil // the deliberately broken test build (brokenreads.go)
		}
		ctx, cancel := withTimeout(ctx, m.cfg.RequestTimeout)
		defer cancel()
		if _, err := m.node.ReadIndex(ctx); err != nil {
			return status.Errorf(Code(err), "linearizable read: %v", err)
		}
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "consistency %q: want \"local\" or \"linearizable\"", consistency)
}
