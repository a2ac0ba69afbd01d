package raftlog

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// snapResult is an encoded snapshot (or the failure to encode one), handed
// from the encoding goroutine back to the loop.
type snapResult struct {
	index, term uint64
	cs          *raftpb.ConfState
	data        []byte // the envelope; nil when err is set
	err         error  // the Applier's encode error
	start       time.Time
}

// maybeSnapshot, on the loop, starts a snapshot when SnapshotEntries
// entries were applied since the last one was taken or tried (or one is
// wanted now) and none is in flight. The Applier captures its state here;
// encoding runs on a goroutine of its own, which sends the result to snapc.
func (n *Node) maybeSnapshot() {
	if n.snapshotter == nil || n.snapBusy {
		return
	}
	if !n.snapWanted && n.applied-n.snapTried < n.cfg.SnapshotEntries {
		return
	}
	index := n.applied
	if index <= n.storage.snapshotIndex() {
		n.snapWanted = false
		return // nothing new since the stored one
	}
	term, err := n.storage.Term(index)
	if err != nil {
		n.log.Error("snapshot: term of the applied index", "index", index, "err", err)
		return
	}
	_, cs, _ := n.storage.InitialState() // the ConfState as of index: applied conf changes are stored at once
	// Contexts are never modified in place (a change stores a new slice),
	// so a shallow copy of the map is an immutable view.
	members := maps.Clone(n.memberCtx)
	start := time.Now()
	encode := n.snapshotter.Capture(index)
	n.snapBusy, n.snapTried, n.snapWanted = true, index, false
	n.snapWG.Add(1)
	go func() {
		defer n.snapWG.Done()
		r := snapResult{index: index, term: term, cs: cs, start: start}
		data, err := encode()
		if err != nil {
			r.err = err
		} else {
			r.data = encodeEnvelope(members, data)
		}
		n.snapc <- r // never blocks: capacity 1, one snapshot in flight
	}()
}

// finishSnapshot, on the loop, stores an encoded snapshot and compacts the
// log behind it, then reports the attempt. Nothing is compacted when
// encoding or storing failed: the log keeps everything since the last good
// snapshot.
func (n *Node) finishSnapshot(r snapResult) {
	n.snapBusy = false
	defer n.maybeSnapshot()
	var err error
	switch {
	case r.err != nil:
		err = fmt.Errorf("raftlog: encode snapshot at index %d: %w", r.index, r.err)
	case r.index <= n.storage.snapshotIndex():
		// A snapshot from the leader was installed meanwhile; it covers
		// this one, and the log was replaced.
		n.log.Info("snapshot overtaken by a newer one; dropped", "index", r.index, "stored_index", n.storage.snapshotIndex())
		return
	default:
		snap := &raftpb.Snapshot{
			Data:     r.data,
			Metadata: &raftpb.SnapshotMetadata{Index: new(r.index), Term: new(r.term), ConfState: r.cs},
		}
		if err = n.storage.storeSnapshot(snap); err == nil {
			err = n.compactBehind(r.index)
		}
	}
	ev := SnapshotEvent{Index: r.index, Size: len(r.data), Duration: time.Since(r.start), Err: err}
	if err != nil {
		// Whoever waited for a newer snapshot gets the stored one, as
		// before: better than none.
		n.storage.awaitSnapshot(0)
		n.log.Error("snapshot failed", "index", r.index, "err", err)
	} else {
		first, _ := n.storage.FirstIndex()
		n.log.Info("snapshot stored", "index", r.index, "term", r.term, "bytes", len(r.data),
			"first_index", first, "duration", ev.Duration)
	}
	if n.cfg.OnSnapshot != nil {
		n.cfg.OnSnapshot(ev)
	}
}

// compactBehind compacts the log to SnapshotCatchUpEntries before the
// stored snapshot at index: never past it, and never below FirstIndex.
func (n *Node) compactBehind(index uint64) error {
	if index <= n.cfg.SnapshotCatchUpEntries {
		return nil
	}
	to := index - n.cfg.SnapshotCatchUpEntries
	if first, _ := n.storage.FirstIndex(); to < first {
		return nil
	}
	if err := n.storage.Compact(to); err != nil {
		return fmt.Errorf("raftlog: compact the log to %d behind the snapshot at %d: %w", to, index, err)
	}
	return nil
}

// installSnapshot, on the loop, hands a snapshot received from the leader
// (already persisted, log replaced) to the Applier and takes over the
// membership it carries.
func (n *Node) installSnapshot(snap *raftpb.Snapshot, members map[uint64][]byte, data []byte) error {
	md := snap.GetMetadata()
	index := md.GetIndex()
	start := time.Now()
	if err := n.snapshotter.Restore(index, data); err != nil {
		return fmt.Errorf("raftlog: restore snapshot at index %d (term %d): %w", index, md.GetTerm(), err)
	}
	cs := md.GetConfState()
	voters := slices.Clone(cs.GetVoters())
	slices.Sort(voters)
	learners := slices.Clone(cs.GetLearners())
	slices.Sort(learners)
	n.voters, n.learners = voters, learners
	n.memberCtx = members
	for id := range members {
		n.noteRemovedPeer(id, false, 0) // a member again, if it was removed
	}
	n.applied = index
	n.commit = max(n.commit, index)
	n.snapTried = max(n.snapTried, index)
	ms := n.publishMembers()
	n.publish()
	n.log.Info("installed snapshot from the leader", "index", index, "term", md.GetTerm(), "bytes", len(snap.GetData()),
		"voters", voters, "learners", learners, "duration", time.Since(start))
	if n.cfg.OnMembersRestored != nil {
		out := slices.Clone(ms)
		for i := range out {
			out[i].Context = slices.Clone(out[i].Context)
		}
		n.cfg.OnMembersRestored(out)
	}
	return nil
}

// restoreAtStart hands the stored snapshot to the Applier: Start calls it
// when the log no longer holds the entries right after Config.Applied.
func restoreAtStart(cfg Config, st *Storage, sn Snapshotter) error {
	snap, err := st.Snapshot()
	if err != nil {
		return err
	}
	md := snap.GetMetadata()
	file := st.snapshotFile()
	_, data, err := decodeEnvelope(snap.GetData())
	if err != nil {
		return fmt.Errorf("raftlog: snapshot file %s: %w", file, err)
	}
	if err := sn.Restore(md.GetIndex(), data); err != nil {
		return fmt.Errorf("raftlog: restore snapshot at index %d from %s: %w", md.GetIndex(), file, err)
	}
	cfg.Logger.Info("restored the state machine from the stored snapshot", "raft_id", cfg.ID,
		"index", md.GetIndex(), "term", md.GetTerm(), "bytes", len(snap.GetData()), "applied_before", cfg.Applied)
	return nil
}
