package raftlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// repairBatchBytes bounds the encoded entries Repair reads from the log and
// hands to the Applier in one batch.
const repairBatchBytes = 4 << 20

// ErrRepairUnsupported is returned by Repair when the Applier cannot be
// rebuilt from this node's durable state: a snapshot is needed (one is
// stored, or the log is compacted) but it does not implement Snapshotter,
// or none is stored and it does not implement Resetter.
var ErrRepairUnsupported = errors.New("raftlog: repair: the Applier cannot be rebuilt")

// Resetter is implemented by Appliers that can drop their whole state.
// Repair uses it to start over when no snapshot is stored.
type Resetter interface {
	// Reset replaces the whole state with the empty one, as before the
	// first entry of the log. It is called on the node goroutine only. An
	// error must leave the state as it was.
	Reset() error
}

// Rebuilder is implemented by Appliers that can keep what their readers
// see unchanged while Repair rebuilds them. BeginRebuild is called before
// the restore or reset and EndRebuild after the replay, also when either
// failed; both on the node goroutine.
type Rebuilder interface {
	BeginRebuild()
	EndRebuild()
}

// repairRequest is one Repair call. The loop sends on done exactly once.
type repairRequest struct {
	done chan error // capacity 1
}

// Repair rebuilds the Applier's state from this node's own durable state,
// for a state machine whose own store went wrong while the log stayed good.
// On the node goroutine, between two Readys, it restores the newest stored
// snapshot (Snapshotter.Restore) or, without one, resets the Applier to
// empty (Resetter.Reset), then re-applies every committed normal entry after
// it up to the applied index, read from Storage in batches. The results of
// those entries are dropped: no proposer waits for them. The applied index
// does not change, and nothing is sent to peers.
//
// Nothing is changed, and the node goes on, when the Applier can be rebuilt
// by neither means (ErrRepairUnsupported) or when Restore or Reset fails.
// A failure while reading the log after that stops the node (Err returns
// it): its state no longer matches its applied index, and a restart replays
// the log from what the Applier made durable.
//
// The node handles nothing else while it repairs. Once the loop has taken
// the request, the repair runs to its end even if ctx ends first; Repair
// then returns ctx's error. After Stop it returns ErrStopped.
func (n *Node) Repair(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("raftlog: repair: %w", err)
	}
	req := &repairRequest{done: make(chan error, 1)}
	select {
	case n.repairc <- req:
	case <-ctx.Done():
		return fmt.Errorf("raftlog: repair: %w", ctx.Err())
	case <-n.donec:
		return n.waits.stopError()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("raftlog: repair: still running on the node: %w", ctx.Err())
	case <-n.donec:
		// A failed repair answers before the loop exits.
		select {
		case err := <-req.done:
			return err
		default:
			return n.waits.stopError()
		}
	}
}

// repair, on the loop, runs one Repair request and answers it. It returns
// an error only when the node must stop: the Applier's state was replaced
// but could not be brought back to the applied index.
func (l *loop) repair(req *repairRequest) error {
	fatal, err := rebuild(l.storage, l.cfg.Applier, l.snaps.sn, l.applied, l.log)
	req.done <- err
	if fatal {
		return err
	}
	return nil
}

// rebuild does the work of repair: it rebuilds app (sn, if not nil, its
// Snapshotter) up to applied from st. fatal says whether err left the
// Applier behind the applied index.
func rebuild(st *Storage, app Applier, sn Snapshotter, applied uint64, log *slog.Logger) (fatal bool, err error) {
	start := time.Now()
	snapIndex := st.snapshotIndex()
	first, _ := st.FirstIndex()
	resetter, _ := app.(Resetter)

	// Decide, and check the log covers what follows, before anything changes.
	var base uint64 // the Applier's index once restored or reset
	switch {
	case snapIndex > 0 && sn != nil:
		base = snapIndex
	case first == 1 && resetter != nil:
		base = 0
	case first > 1 && snapIndex == 0:
		return false, fmt.Errorf("%w: the log starts at %d and no snapshot is stored", ErrRepairUnsupported, first)
	case first > 1:
		return false, fmt.Errorf("%w: the log starts at %d, so it needs the snapshot at index %d, but the Applier does not implement Snapshotter",
			ErrRepairUnsupported, first, snapIndex)
	default:
		return false, fmt.Errorf("%w: the Applier implements neither Resetter nor, with a stored snapshot, Snapshotter", ErrRepairUnsupported)
	}
	if base > applied {
		panic(fmt.Sprintf("raftlog: repair: stored snapshot at index %d is past the applied index %d", base, applied))
	}
	if first > base+1 {
		return false, fmt.Errorf("%w: the log starts at %d, after the snapshot at index %d", ErrRepairUnsupported, first, base)
	}

	if rb, ok := app.(Rebuilder); ok {
		rb.BeginRebuild()
		defer rb.EndRebuild()
	}
	if base > 0 {
		snap, err := st.readSnapshot()
		if err != nil {
			return false, fmt.Errorf("raftlog: repair: read the stored snapshot: %w", err)
		}
		_, data, err := decodeEnvelope(snap.GetData())
		if err != nil {
			return false, fmt.Errorf("raftlog: repair: stored snapshot at index %d: %w", base, err)
		}
		if err := sn.Restore(base, data); err != nil {
			return false, fmt.Errorf("raftlog: repair: restore the snapshot at index %d: %w", base, err)
		}
	} else if err := resetter.Reset(); err != nil {
		return false, fmt.Errorf("raftlog: repair: reset the Applier: %w", err)
	}

	count, err := replay(st, app, base+1, applied)
	if err != nil {
		return true, err
	}
	log.Info("repaired the state machine from the stored snapshot and log", "snapshot_index", base,
		"applied", applied, "entries", count, "duration", time.Since(start))
	return false, nil
}

// entrySource reads entries of a log: a Storage, or the log of a stopped
// member's data dir (CheckLog).
type entrySource interface {
	Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error)
}

// replay re-applies to app the committed normal entries in [lo, hi] from
// st, in batches of at most repairBatchBytes, dropping their results. It
// returns how many entries it handed to the Applier.
func replay(st entrySource, app Applier, lo, hi uint64) (int, error) {
	var batch []Entry // reused across batches
	count := 0
	for lo <= hi {
		ents, err := st.Entries(lo, hi+1, repairBatchBytes)
		if err != nil {
			return count, fmt.Errorf("raftlog: repair: read log entries %d..%d: %w", lo, hi, err)
		}
		if len(ents) == 0 {
			return count, fmt.Errorf("raftlog: repair: no log entry at %d (applied %d)", lo, hi)
		}
		for _, e := range ents {
			if e.GetType() != raftpb.EntryNormal || len(e.GetData()) == 0 {
				continue // conf changes are in raft.db already; empty entries carry nothing
			}
			ent, _ := committedEntry(e)
			batch = append(batch, ent)
		}
		if len(batch) > 0 {
			applyChecked(app, batch)
			count += len(batch)
			clear(batch)
			batch = batch[:0]
		}
		lo = ents[len(ents)-1].GetIndex() + 1
	}
	return count, nil
}
