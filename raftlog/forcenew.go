package raftlog

import (
	"fmt"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Forced is what ForceNewCluster did.
type Forced struct {
	// Removed are the ids of the members the forcing removed, none when
	// the node was its cluster's only member already (nothing was done).
	Removed []uint64
	// Forcing is the forcing recorded (zero when nothing was done): the
	// new cluster id, the old one and the index.
	Forcing Forcing
}

// ForceNewCluster rewrites the raft log in dir, offline, so that node self
// is the only voter of a new cluster once started again, keeping
// everything it had received: the recovery from a lost quorum that etcd's
// --force-new-cluster makes. A removal of every other member is appended
// to its log, one ConfChangeRemoveNode entry each, and the whole log is
// marked committed, so Start applies it and the node, alone, elects
// itself. The whole log, not only up to the stored commit index: that is
// persisted lazily (it may be behind what this node applied), so entries
// after it may be committed and acknowledged changes; the few at the end
// that the cluster never committed are kept too, as if committed (their
// clients got no answer, or an error saying they may still commit).
// Entries the lost members committed that this node never received are
// lost.
//
// The log gets a new cluster id, ForcedClusterID of the old id, the index
// of the last removal and self, recorded (with the forcing) before the
// removals are written: a log whose removals were not all written is
// refused by Start (ErrForceIncomplete) until ForceNewCluster runs again
// and finishes that same forcing. The members removed keep the old id and
// are refused as another cluster's (forced.go). A node alone already is
// left as it is (Forced{}).
func ForceNewCluster(dir string, self uint64) (Forced, error) {
	st, err := openStorage(dir, defaultLockTimeout, nil)
	if err != nil {
		return Forced{}, err
	}
	defer st.Close()
	if f, ok := st.db.forcedAway(); ok {
		return Forced{}, &ForcedError{Forcing: f, Dir: dir}
	}
	hs, cs, err := st.InitialState()
	if err != nil {
		return Forced{}, err
	}
	if !slices.Contains(cs.GetVoters(), self) {
		return Forced{}, fmt.Errorf("raftlog: force new cluster: %d is not a voter of the configuration in %s (voters %v, learners %v): only a voter's log can found the new cluster", self, dir, cs.GetVoters(), cs.GetLearners())
	}
	if len(cs.GetVotersOutgoing()) > 0 {
		return Forced{}, fmt.Errorf("raftlog: force new cluster: the configuration in %s is joint (outgoing voters %v), which metalog never proposes", dir, cs.GetVotersOutgoing())
	}
	ents, removed, err := removalEntries(st, hs, cs, self)
	if err != nil || len(ents) == 0 {
		return Forced{}, err
	}
	last := ents[len(ents)-1].GetIndex()
	from, _ := st.db.identity()
	f := Forcing{From: from, Index: last, By: self}
	if prev := st.db.forcings(); len(prev) > 0 && prev[len(prev)-1].Index > ents[0].GetIndex()-1 {
		// A forcing recorded but not written: finish that one, under the
		// id it recorded.
		if f = prev[len(prev)-1]; f.Index != last || f.By != self {
			return Forced{}, fmt.Errorf("raftlog: force new cluster: %s records an interrupted forcing at index %d by %s, which does not match its log (the removals would end at %d)",
				dir, f.Index, FormatID(f.By), last)
		}
	} else {
		f.To = ForcedClusterID(f.From, f.Index, self)
		if err := st.db.recordForcing(f); err != nil {
			return Forced{}, err
		}
	}
	next := &raftpb.HardState{Term: new(ents[0].GetTerm()), Vote: new(hs.GetVote()), Commit: new(last)}
	if err := st.save(next, ents, nil, nil); err != nil {
		return Forced{}, fmt.Errorf("raftlog: force new cluster: %w", err)
	}
	return Forced{Removed: removed, Forcing: f}, nil
}

// removalEntries returns the committed entries that remove every member of
// cs but self, after the last entry of st's log, and the ids they remove.
func removalEntries(st *Storage, hs *raftpb.HardState, cs *raftpb.ConfState, self uint64) ([]*raftpb.Entry, []uint64, error) {
	commit, err := st.LastIndex()
	if err != nil {
		return nil, nil, err
	}
	term, err := st.Term(commit)
	if err != nil {
		return nil, nil, err
	}
	term = max(term, hs.GetTerm())
	var removed []uint64
	var ents []*raftpb.Entry
	for _, id := range append(slices.Clone(cs.GetVoters()), cs.GetLearners()...) {
		if id == self {
			continue
		}
		data, err := proto.Marshal(&raftpb.ConfChange{Type: raftpb.ConfChangeRemoveNode.Enum(), NodeId: new(id)})
		if err != nil {
			return nil, nil, err
		}
		ents = append(ents, &raftpb.Entry{Term: new(term), Index: new(commit + uint64(len(ents)) + 1), Type: raftpb.EntryConfChange.Enum(), Data: data})
		removed = append(removed, id)
	}
	return ents, removed, nil
}
